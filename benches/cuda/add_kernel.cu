// The add_kernel benchmark in CUDA C, for comparison with the Rust kernel.
// Built on the GPU machine by scripts/gpu-bundle.sh with `nvcc -O3`.
// Prints `RESULT <name> <value> <unit>` lines that benches/launch_and_bandwidth.rs reads.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    const size_t n = 16u << 20;
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    std::vector<float> ha(n), hb(n);
    for (size_t i = 0; i < n; ++i) { ha[i] = (float)(i % 1000); hb[i] = 2.0f * (float)(i % 777); }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMemcpy(a, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 10; ++i) add_kernel<<<blocks, threads>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    std::vector<float> times;
    for (int rep = 0; rep < 50; ++rep) {
        CHECK(cudaEventRecord(start));
        add_kernel<<<blocks, threads>>>(a, b, c, n);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaGetLastError());
    std::vector<float> hc(n);
    CHECK(cudaMemcpy(hc.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
        if (hc[i] != ha[i] + hb[i]) { fprintf(stderr, "wrong result at %zu\n", i); return 1; }
    }
    float ms = median(times);
    printf("RESULT cuda_c_add_16M_gbps %.1f GB/s\n", 3.0 * n * sizeof(float) / (ms * 1e-3) / 1e9);
    printf("RESULT cuda_c_add_16M_ms %.4f ms\n", ms);

    // Launch cost of the same kernel on one block, as the Rust side measures it.
    const int launches = 20000;
    std::vector<float> per_launch;
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(cudaDeviceSynchronize());
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < launches; ++i) add_kernel<<<1, 256>>>(a, b, c, 256);
        CHECK(cudaDeviceSynchronize());
        auto t1 = std::chrono::steady_clock::now();
        per_launch.push_back(std::chrono::duration<float, std::micro>(t1 - t0).count() / launches);
    }
    printf("RESULT cuda_c_launch_us %.3f us\n", median(per_launch));
    return 0;
}
