// CUDA C side of benches/memory_and_tracking.rs: a hand-off between two
// streams ordered by two hand-written untimed events, and allocate/free pairs
// with cudaMallocAsync/cudaFreeAsync (the device's default pool, release
// threshold raised as the Rust crate does) and cudaMalloc/cudaFree.
// Prints `RESULT <name> <value> <unit>`.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

__global__ void fill(float value, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Median over 5 rounds of (`rounds` steps, then `sync`) in microseconds per step.
static double per_step_us(int rounds, const std::function<void()>& step, const std::function<void()>& sync) {
    for (int i = 0; i < rounds / 10; ++i) step();
    sync();
    std::vector<double> times;
    for (int r = 0; r < 5; ++r) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < rounds; ++i) step();
        sync();
        std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
        times.push_back(took.count() / rounds);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

int main() {
    CHECK(cudaSetDevice(0));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t written, read;
    CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&read, cudaEventDisableTiming));
    float *x, *ones, *y;
    CHECK(cudaMalloc(&x, 256 * sizeof(float)));
    CHECK(cudaMalloc(&ones, 256 * sizeof(float)));
    CHECK(cudaMalloc(&y, 256 * sizeof(float)));
    fill<<<1, 256, 0, s1>>>(1.0f, ones, 256);
    CHECK(cudaStreamSynchronize(s1));
    double handoff = per_step_us(20000, [&] {
        fill<<<1, 256, 0, s1>>>(2.0f, x, 256);
        cudaEventRecord(written, s1);
        cudaStreamWaitEvent(s2, written, 0);
        add<<<1, 256, 0, s2>>>(x, ones, y, 256);
        cudaEventRecord(read, s2);
        cudaStreamWaitEvent(s1, read, 0);
    }, [&] { CHECK(cudaStreamSynchronize(s2)); });
    CHECK(cudaGetLastError());
    float check[256];
    CHECK(cudaMemcpy(check, y, sizeof check, cudaMemcpyDeviceToHost));
    for (float v : check) {
        if (v != 3.0f) {
            printf("FAILED hand-off: %f instead of 3\n", v);
            return 1;
        }
    }
    printf("RESULT cuda_handoff_us %.3f us\n", handoff);

    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t keep = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    const size_t sizes[2] = {size_t(1) << 20, size_t(64) << 20};
    const char* names[2] = {"1mib", "64mib"};
    for (int k = 0; k < 2; ++k) {
        size_t bytes = sizes[k];
        double async_us = per_step_us(5000, [&] {
            void* p;
            CHECK(cudaMallocAsync(&p, bytes, s1));
            CHECK(cudaFreeAsync(p, s1));
        }, [&] { CHECK(cudaStreamSynchronize(s1)); });
        double sync_us = per_step_us(500, [&] {
            void* p;
            CHECK(cudaMalloc(&p, bytes));
            CHECK(cudaFree(p));
        }, [&] { CHECK(cudaDeviceSynchronize()); });
        printf("RESULT cuda_async_%s_us %.3f us\n", names[k], async_us);
        printf("RESULT cuda_sync_%s_us %.3f us\n", names[k], sync_us);
    }
    return 0;
}
