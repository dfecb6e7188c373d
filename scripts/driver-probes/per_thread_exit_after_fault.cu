// Does a thread that used CUDA's per-thread default stream end, once a kernel
// on another stream has faulted (the context's sticky error)?
//
//   other thread:  uses the device (what the first argument says), signals,
//                  waits until the main thread has seen the fault, then ends
//   main thread:   launches a kernel that traps on a stream of its own,
//                  synchronises (the sticky error), lets the thread end and
//                  joins it with a 10 s limit
//
// First argument, what the other thread did before the fault:
//   per-thread-alloc    a stream-ordered allocation on its per-thread stream
//   per-thread-sync     only cudaStreamSynchronize(cudaStreamPerThread)
//   legacy-alloc        a stream-ordered allocation on the legacy stream
//   none                only cudaFree(0) (the context made current)
// Second argument, what the other thread does after the fault, before it
// ends: nothing (the default), sync (cudaStreamSynchronize on its per-thread
// stream), free (cudaFreeAsync of its allocation on its per-thread stream),
// free-before (it freed the allocation on its per-thread stream and
// synchronised before the fault), device-sync (cudaDeviceSynchronize). A
// third argument "no-fault" runs the kernel without the trap; "reset" has the
// main thread reset the device (cudaDeviceReset: the primary context) after
// the fault, before the thread ends.
// Prints "joined in N ms" or "NOT joined after 10 s", then exits at once
// (_exit: a stuck thread must not hold the process).
//
//   nvcc -O2 -o per-thread-exit-after-fault per_thread_exit_after_fault.cu
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__global__ void trap_kernel(int trap) { if (trap) __trap(); }

static std::atomic<int> stage{0};
static const char *mode = "per-thread-alloc";
static const char *after = "nothing";
static int trap = 1;
static int reset = 0;

static void *other(void *) {
    cudaSetDevice(0);
    void *p = nullptr;
    if (!strcmp(mode, "per-thread-alloc")) {
        cudaMallocAsync(&p, 256, cudaStreamPerThread);
        cudaStreamSynchronize(cudaStreamPerThread);
    } else if (!strcmp(mode, "per-thread-sync")) {
        cudaStreamSynchronize(cudaStreamPerThread);
    } else if (!strcmp(mode, "legacy-alloc")) {
        cudaMallocAsync(&p, 256, cudaStreamLegacy);
        cudaStreamSynchronize(cudaStreamLegacy);
    } else {
        cudaFree(0);
    }
    if (!strcmp(after, "free-before")) {
        cudaFreeAsync(p, cudaStreamPerThread);
        cudaStreamSynchronize(cudaStreamPerThread);
    }
    stage = 1;
    while (stage.load() < 2) usleep(1000);
    cudaError_t e = cudaSuccess;
    if (!strcmp(after, "sync")) e = cudaStreamSynchronize(cudaStreamPerThread);
    if (!strcmp(after, "free")) e = cudaFreeAsync(p, cudaStreamPerThread);
    if (!strcmp(after, "device-sync")) e = cudaDeviceSynchronize();
    printf("%s/%s: the thread's last call: %s\n", mode, after, cudaGetErrorName(e));
    return nullptr;
}

int main(int argc, char **argv) {
    if (argc > 1) mode = argv[1];
    if (argc > 2) after = argv[2];
    if (argc > 3 && !strcmp(argv[3], "no-fault")) trap = 0;
    if (argc > 3 && !strcmp(argv[3], "reset")) reset = 1;
    cudaSetDevice(0);
    pthread_t thread;
    pthread_create(&thread, nullptr, other, nullptr);
    while (stage.load() < 1) usleep(1000);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    trap_kernel<<<1, 1, 0, s>>>(trap);
    cudaError_t e = cudaStreamSynchronize(s);
    printf("%s/%s: the kernel: %s\n", mode, after, cudaGetErrorName(e));
    if (reset) printf("%s/%s: the reset: %s\n", mode, after, cudaGetErrorName(cudaDeviceReset()));
    auto start = std::chrono::steady_clock::now();
    stage = 2;
    timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += 10;
    if (pthread_timedjoin_np(thread, nullptr, &limit) == 0) {
        long ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
        printf("%s/%s: joined in %ld ms\n", mode, after, ms);
    } else {
        printf("%s/%s: NOT joined after 10 s\n", mode, after);
    }
    fflush(stdout);
    _exit(0);
}
