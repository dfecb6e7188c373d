// Pinned transfers and the Day 7 pipeline in CUDA C, for benches/transfers_and_pipeline.rs.
// Usage: pipeline ROUNDS [PTX]
//   ROUNDS: the busy kernel's rounds, calibrated by the Rust side;
//   PTX: the Rust kernels' module; the pipeline then runs a second time with
//        its `busy__1d` (driver API), separating host code from kernel code.
// Prints `RESULT <name> <value> <unit>` lines.
#include "busy.h"
#include "check.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
    const size_t n = 64u << 20, bytes = n * sizeof(float);
    const int chunks = 16, nstreams = 4;
    float *in, *out, *dev;
    CHECK(cudaMallocHost(&in, bytes));
    CHECK(cudaMallocHost(&out, bytes));
    CHECK(cudaMalloc(&dev, bytes));
    for (size_t i = 0; i < n; ++i) in[i] = (float)(i % 1000) / 1000.0f;
    cudaStream_t s[nstreams];
    for (int i = 0; i < nstreams; ++i) CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));

    std::vector<float> h2d, d2h;
    for (int rep = 0; rep < 11; ++rep) {
        float ms;
        CHECK(cudaEventRecord(a, s[0]));
        CHECK(cudaMemcpyAsync(dev, in, bytes, cudaMemcpyHostToDevice, s[0]));
        CHECK(cudaEventRecord(b, s[0]));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        h2d.push_back(ms);
        CHECK(cudaEventRecord(a, s[0]));
        CHECK(cudaMemcpyAsync(out, dev, bytes, cudaMemcpyDeviceToHost, s[0]));
        CHECK(cudaEventRecord(b, s[0]));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        d2h.push_back(ms);
    }
    printf("RESULT cuda_c_h2d_gbps %.2f GB/s\n", bytes / (median(h2d) * 1e-3) / 1e9);
    printf("RESULT cuda_c_d2h_gbps %.2f GB/s\n", bytes / (median(d2h) * 1e-3) / 1e9);

    // The pipeline: 16 chunks over 4 streams, per-stream device buffers.
    const size_t chunk = n / chunks;
    float *din[nstreams], *dout[nstreams];
    for (int i = 0; i < nstreams; ++i) {
        CHECK(cudaMalloc(&din[i], chunk * sizeof(float)));
        CHECK(cudaMalloc(&dout[i], chunk * sizeof(float)));
    }
    // One timed pipeline; `launch(k)` queues the kernel of a chunk on stream k.
    auto pipeline_ms = [&](auto launch) {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(a, s[0]));
        for (int i = 1; i < nstreams; ++i) CHECK(cudaStreamWaitEvent(s[i], a, 0));
        for (int c = 0; c < chunks; ++c) {
            int k = c % nstreams;
            size_t off = c * chunk;
            CHECK(cudaMemcpyAsync(din[k], in + off, chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]));
            launch(k);
            CHECK(cudaMemcpyAsync(out + off, dout[k], chunk * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
        }
        for (int i = 1; i < nstreams; ++i) {
            cudaEvent_t e;
            CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            CHECK(cudaEventRecord(e, s[i]));
            CHECK(cudaStreamWaitEvent(s[0], e, 0));
            CHECK(cudaEventDestroy(e));
        }
        CHECK(cudaEventRecord(b, s[0]));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    };
    auto check = [&](const char* what) {
        for (size_t i = 0; i < n; i += 4099) {
            float v = busy_reference(in[i], rounds);
            if (out[i] != v) {
                fprintf(stderr, "%s: wrong result at %zu: %f vs %f\n", what, i, out[i], v);
                exit(1);
            }
        }
        memset(out, 0, bytes);
    };
    std::vector<float> times;
    for (int rep = 0; rep < 6; ++rep) {
        float ms = pipeline_ms([&](int k) {
            busy<<<(unsigned)((chunk + 255) / 256), 256, 0, s[k]>>>(din[k], rounds, dout[k], chunk);
        });
        if (rep > 0) times.push_back(ms);
    }
    CHECK(cudaGetLastError());
    check("CUDA C pipeline");
    if (argc > 2) {
        CUmodule module;
        CUfunction rust_busy;
        CHECK_CU(cuModuleLoad(&module, argv[2]));
        CHECK_CU(cuModuleGetFunction(&rust_busy, module, "busy__1d"));
        std::vector<float> rust_times;
        for (int rep = 0; rep < 6; ++rep) {
            float ms = pipeline_ms([&](int k) {
                unsigned long long len = chunk;
                void* params[] = {&din[k], &len, &rounds, &dout[k], &len};
                CHECK_CU(cuLaunchKernel(rust_busy, (unsigned)((chunk + 255) / 256), 1, 1, 256, 1, 1, 0,
                                        s[k], params, nullptr));
            });
            if (rep > 0) rust_times.push_back(ms);
        }
        check("CUDA C pipeline with the Rust kernel");
        printf("RESULT cuda_c_rust_kernel_pipeline_ms %.4f ms\n", median(rust_times));
        // The two kernels alone, over all n elements (input and output apart:
        // the Rust kernel's slices may not alias).
        float* dev_out;
        CHECK(cudaMalloc(&dev_out, bytes));
        std::vector<float> c_kernel, rust_kernel;
        for (int rep = 0; rep < 7; ++rep) {
            float ms;
            CHECK(cudaEventRecord(a, s[0]));
            busy<<<(unsigned)((n + 255) / 256), 256, 0, s[0]>>>(dev, rounds, dev_out, n);
            CHECK(cudaEventRecord(b, s[0]));
            CHECK(cudaEventSynchronize(b));
            CHECK(cudaEventElapsedTime(&ms, a, b));
            c_kernel.push_back(ms);
            unsigned long long len = n;
            void* params[] = {&dev, &len, &rounds, &dev_out, &len};
            CHECK(cudaEventRecord(a, s[0]));
            CHECK_CU(cuLaunchKernel(rust_busy, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, s[0], params, nullptr));
            CHECK(cudaEventRecord(b, s[0]));
            CHECK(cudaEventSynchronize(b));
            CHECK(cudaEventElapsedTime(&ms, a, b));
            rust_kernel.push_back(ms);
        }
        CHECK(cudaFree(dev_out));
        printf("RESULT cuda_c_kernel_ms %.4f ms\n", median(c_kernel));
        printf("RESULT rust_kernel_in_c_ms %.4f ms\n", median(rust_kernel));
    }
    printf("RESULT cuda_c_pipeline_ms %.4f ms\n", median(times));
    return 0;
}
