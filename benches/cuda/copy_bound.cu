// CUDA C side of benches/multi_gpu.rs: how fast pinned host memory and the
// GPUs exchange data, one GPU alone and two at once: the bound of any
// pipeline that streams its input in and its output out.
//
// Usage: copy_bound [ELEMENTS_PER_GPU]  (default 64 Mi f32 = 256 MiB, the
// multi-GPU pipeline's share of one GPU)
//
// Host memory: cudaHostAlloc(cudaHostAllocPortable), as the crate's pinned
// buffers, one input and one output buffer for the whole problem, each GPU
// using its own range of them (as the pipeline does). Each GPU copies its
// range in (host -> device, on one stream) and out (device -> host, on
// another stream of it) at the same time; the GPUs of a run all at once.
// Times: events per GPU (from a start event every stream of the GPU waits
// for, to the end of both copies) and a host clock around the whole (from
// before queueing to after every GPU finished). Median of 11 after a warm-up.
//
// Runs, each on the whole problem of P = ELEMENTS_PER_GPU * 2 elements:
//   1 GPU (device 0) moving all of P in and out, 2 GPUs each moving half;
// and, for the per-direction figures, the same with one direction only.
//
// Prints `RESULT <name> <value> <unit>` lines:
//   cuda_c_copy_{1,2}gpu_ms        whole exchange (both directions), host clock
//   cuda_c_copy_{1,2}gpu_gbps      its aggregate bandwidth (in + out bytes / time)
//   cuda_c_copy_{1,2}gpu_event_ms  the slowest GPU's event time
//   cuda_c_h2d_{1,2}gpu_gbps       host -> device alone, aggregate
//   cuda_c_d2h_{1,2}gpu_gbps       device -> host alone, aggregate
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Gpu {
    int device;
    cudaStream_t in_stream, out_stream;
    cudaEvent_t start, in_done, out_done;
    float *din, *dout;
};

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

enum Directions { IN = 1, OUT = 2, BOTH = 3 };

struct Timing {
    double host_ms, event_ms;
};

// One exchange: GPU g of `gpus` (the first `used`) copies `per` elements of
// `in` (from element g * per) in and of its device output to `out`.
static Timing exchange(std::vector<Gpu>& gpus, int used, const float* in, float* out, size_t per,
                       Directions dirs) {
    const size_t bytes = per * sizeof(float);
    for (int g = 0; g < used; ++g) {
        CHECK(cudaSetDevice(gpus[g].device));
        CHECK(cudaDeviceSynchronize());
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int g = 0; g < used; ++g) {
        Gpu& gpu = gpus[g];
        CHECK(cudaSetDevice(gpu.device));
        CHECK(cudaEventRecord(gpu.start, gpu.in_stream));
        CHECK(cudaStreamWaitEvent(gpu.out_stream, gpu.start, 0));
        if (dirs & IN)
            CHECK(cudaMemcpyAsync(gpu.din, in + g * per, bytes, cudaMemcpyHostToDevice, gpu.in_stream));
        if (dirs & OUT)
            CHECK(cudaMemcpyAsync(out + g * per, gpu.dout, bytes, cudaMemcpyDeviceToHost, gpu.out_stream));
        CHECK(cudaEventRecord(gpu.in_done, gpu.in_stream));
        CHECK(cudaEventRecord(gpu.out_done, gpu.out_stream));
    }
    double event_ms = 0;
    for (int g = 0; g < used; ++g) {
        CHECK(cudaEventSynchronize(gpus[g].in_done));
        CHECK(cudaEventSynchronize(gpus[g].out_done));
    }
    auto t1 = std::chrono::steady_clock::now();
    for (int g = 0; g < used; ++g) {
        float a = 0, b = 0;
        CHECK(cudaEventElapsedTime(&a, gpus[g].start, gpus[g].in_done));
        CHECK(cudaEventElapsedTime(&b, gpus[g].start, gpus[g].out_done));
        event_ms = std::max(event_ms, (double)std::max(a, b));
    }
    return {std::chrono::duration<double, std::milli>(t1 - t0).count(), event_ms};
}

int main(int argc, char** argv) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAILED needs 2 GPUs, found %d\n", count);
        return 0;
    }
    const size_t per_gpu = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)64 << 20;
    const size_t total = 2 * per_gpu, total_bytes = total * sizeof(float);
    float *in, *out;
    CHECK(cudaHostAlloc(&in, total_bytes, cudaHostAllocPortable));
    CHECK(cudaHostAlloc(&out, total_bytes, cudaHostAllocPortable));
    for (size_t i = 0; i < total; ++i) in[i] = (float)(i % 1000);
    memset(out, 0, total_bytes);

    // Each GPU has device buffers for the whole problem (the 1-GPU run
    // moves all of it), filled with a pattern that the copies out carry.
    std::vector<Gpu> gpus(2);
    for (int g = 0; g < 2; ++g) {
        Gpu& gpu = gpus[g];
        gpu.device = g;
        CHECK(cudaSetDevice(g));
        CHECK(cudaStreamCreateWithFlags(&gpu.in_stream, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&gpu.out_stream, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&gpu.start));
        CHECK(cudaEventCreate(&gpu.in_done));
        CHECK(cudaEventCreate(&gpu.out_done));
        CHECK(cudaMalloc(&gpu.din, total_bytes));
        CHECK(cudaMalloc(&gpu.dout, total_bytes));
        CHECK(cudaMemset(gpu.dout, g + 1, total_bytes));
    }

    struct Run {
        const char* name;
        int used;
        Directions dirs;
        double host_ms, event_ms;
    };
    std::vector<Run> runs = {
        {"copy_1gpu", 1, BOTH}, {"copy_2gpu", 2, BOTH}, {"h2d_1gpu", 1, IN},
        {"h2d_2gpu", 2, IN},    {"d2h_1gpu", 1, OUT},   {"d2h_2gpu", 2, OUT},
    };
    for (Run& run : runs) {
        std::vector<double> host, event;
        for (int rep = 0; rep < 12; ++rep) {
            Timing t = exchange(gpus, run.used, in, out, total / run.used, run.dirs);
            if (rep > 0) {  // the first is a warm-up
                host.push_back(t.host_ms);
                event.push_back(t.event_ms);
            }
        }
        run.host_ms = median(host);
        run.event_ms = median(event);
        // The copies carried their data: each GPU's range of the output
        // holds its device's pattern, and the device its range of the input.
        if (run.dirs & OUT) {
            const size_t per = total / run.used;
            for (int g = 0; g < run.used; ++g) {
                unsigned char want = (unsigned char)(g + 1);
                const unsigned char* bytes = (const unsigned char*)(out + g * per);
                if (bytes[0] != want || bytes[per * sizeof(float) - 1] != want) {
                    fprintf(stderr, "%s: GPU %d's copy out did not arrive\n", run.name, g);
                    return 1;
                }
            }
            memset(out, 0, total_bytes);
        }
        if (run.dirs & IN) {
            const size_t per = total / run.used;
            for (int g = 0; g < run.used; ++g) {
                float last;
                CHECK(cudaSetDevice(g));
                CHECK(cudaMemcpy(&last, gpus[g].din + per - 1, sizeof(float), cudaMemcpyDeviceToHost));
                if (last != in[g * per + per - 1]) {
                    fprintf(stderr, "%s: GPU %d's copy in did not arrive\n", run.name, g);
                    return 1;
                }
            }
        }
    }
    for (const Run& run : runs) {
        double moved = (double)total_bytes * (run.dirs == BOTH ? 2 : 1);
        double gbps = moved / (run.host_ms * 1e-3) / 1e9;
        if (run.dirs == BOTH) {
            printf("RESULT cuda_c_%s_ms %.4f ms\n", run.name, run.host_ms);
            printf("RESULT cuda_c_%s_event_ms %.4f ms\n", run.name, run.event_ms);
        }
        printf("RESULT cuda_c_%s_gbps %.2f GB/s\n", run.name, gbps);
    }
    for (Gpu& gpu : gpus) {
        CHECK(cudaSetDevice(gpu.device));
        CHECK(cudaFree(gpu.din));
        CHECK(cudaFree(gpu.dout));
    }
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
    return 0;
}
