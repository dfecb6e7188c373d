// Does a tool let one thread destroy a stream while another thread, which used
// its per-thread default stream, is ending?
//
// A thread that used CUDA's per-thread default stream tears it down when it
// ends, in the driver's thread-exit (TSD) destructor, after the thread's own
// code has returned. A program that learns the thread's work is done by a flag
// (as Rust's std::thread::scope does, and any thread pool) goes on while that
// teardown still runs. In each round here:
//
//   other thread:  on its per-thread default stream, a stream-ordered
//                  allocation, a kernel, a host function, a kernel, a
//                  stream-ordered free (work still queued); then it sets a
//                  flag and ends
//   main thread:   waits for the flag (not for the thread), then creates and
//                  destroys streams and events, as a program dropping its
//                  streams does; then joins the thread
//
// The first argument picks what the other thread does:
//   per-thread    as above (the default)
//   other-stream  the same work on a stream the main thread made, not on its
//                 per-thread default stream
//   join-first    as per-thread, but the main thread joins the thread before
//                 its stream calls, so the two never overlap
//
// Prints "ROUNDS rounds done" and exits 0; if a round does not finish within
// 20 s, a watchdog thread (no CUDA call) prints where the main thread is and
// exits 3.
//
//   nvcc -O2 -o thread-exit-overlap thread_exit_overlap.cu -lcuda
//   ./thread-exit-overlap [per-thread|other-stream|join-first] [rounds]
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <unistd.h>

#define PROBE "thread-exit-overlap"
#include "check.h"


__global__ void fill(float *x, size_t n, float value) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}

static void launch_fill(CUstream stream, CUdeviceptr x, size_t n, float value) {
    fill<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>((float *)x, n, value);
    if (cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "thread-exit-overlap probe: the fill kernel did not launch\n");
        exit(1);
    }
}

static void CUDA_CB short_hold(void *) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

static std::atomic<int> round_now{0};
static std::atomic<const char *> step{"start"};

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "per-thread";
    bool join_first = strcmp(mode, "join-first") == 0;
    bool other_stream = strcmp(mode, "other-stream") == 0;
    if (!join_first && !other_stream && strcmp(mode, "per-thread") != 0) {
        fprintf(stderr, "thread-exit-overlap probe: unknown mode %s (per-thread, other-stream or join-first)\n", mode);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 100;
    CUdevice device;
    CUcontext context;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CUstream side;
    CHECK(cuStreamCreate(&side, CU_STREAM_DEFAULT));

    std::thread([mode] {
        int seen = -1;
        for (;;) {
            std::this_thread::sleep_for(std::chrono::seconds(20));
            int now = round_now.load();
            if (now == seen) {
                printf("thread-exit-overlap probe (%s): round %d did not finish in 20 s, the main thread is in %s\n",
                       mode, now, step.load());
                fflush(stdout);
                _exit(3);
            }
            seen = now;
        }
    }).detach();

    for (int round = 0; round < rounds; round++) {
        round_now.store(round);
        std::atomic<bool> done{false};
        step.store("waiting for the other thread's work");
        std::thread worker([&] {
            CHECK(cuCtxSetCurrent(context));
            CUstream own = other_stream ? side : CU_STREAM_PER_THREAD;
            CUdeviceptr x;
            CHECK(cuMemAllocAsync(&x, 4096 * sizeof(float), own));
            launch_fill(own, x, 4096, 1.0f);
            CHECK(cuLaunchHostFunc(own, short_hold, nullptr));
            launch_fill(own, x, 4096, 2.0f);
            CHECK(cuMemFreeAsync(x, own));
            done.store(true);
        });
        if (join_first) worker.join();
        while (!done.load()) std::this_thread::yield();
        for (int i = 0; i < 8; i++) {
            CUstream stream;
            CUevent event;
            step.store("cuStreamCreate");
            CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
            step.store("cuEventCreate");
            CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
            step.store("cuEventRecord");
            CHECK(cuEventRecord(event, stream));
            step.store("cuEventDestroy");
            CHECK(cuEventDestroy(event));
            step.store("cuStreamDestroy");
            CHECK(cuStreamDestroy(stream));
        }
        step.store("joining the other thread");
        if (!join_first) worker.join();
    }
    CHECK(cuCtxSynchronize());
    printf("thread-exit-overlap probe (%s): %d rounds done\n", mode, rounds);
    return 0;
}
