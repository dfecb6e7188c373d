// Does a tool keep kernels asynchronous and streams side by side? Three
// checks, through the same driver calls as the runtime:
//
//  1. a kernel launched on a stream held by a host function (300 ms): the
//     launch call returns at once and the kernel is still pending;
//  2. a kernel launched on a second stream while the first is held: it runs
//     to completion during the hold;
//  3. two kernels on two streams, each waiting (up to 2 s of GPU time) for
//     the other to have started: they run at the same time.
//
// Without a tool all three hold. A test that asserts how long a wait behind
// a held stream took, or that work behind it is still pending, holds only
// where they do: scripts/sanitize.sh leaves such tests out under any tool
// for which this probe exits 2 (as it does for held_copy.cu's copies).
//
//   nvcc -O2 -o held-kernel held_kernel.cu -lcuda && ./held-kernel
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <stdio.h>
#include <thread>

#define PROBE "held-kernel"
#include "check.h"

static std::atomic<bool> released;

static void CUDA_CB wait_for_release(void *) {
    while (!released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

static double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void touch(int *x) { *x += 1; }

// Sets `mine`, then waits up to `limit_ns` for `theirs`; `saw` says whether
// it came.
__global__ void meet(volatile int *mine, volatile int *theirs, int *saw, unsigned long long limit_ns) {
    *mine = 1;
    __threadfence_system();
    unsigned long long start = now_ns();
    while (*theirs == 0 && now_ns() - start < limit_ns) {
    }
    *saw = *theirs;
}

// Holds `held` with a host function for 300 ms, while the caller's `during`
// runs; returns after the hold ended.
template <class During> static void while_held(CUstream held, During during) {
    released.store(false);
    CHECK(cuLaunchHostFunc(held, wait_for_release, nullptr));
    std::thread releaser([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        released.store(true);
    });
    during();
    releaser.join();
    CHECK(cuStreamSynchronize(held));
}

int main() {
    CUdevice device;
    CUcontext context;
    CUstream first, second;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuStreamCreate(&first, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&second, CU_STREAM_NON_BLOCKING));
    int *flags; // [0], [1]: the meeting kernels' flags; [2], [3]: what each saw; [4]: touched
    CHECK(cuMemAllocManaged((CUdeviceptr *)&flags, 8 * sizeof(int), CU_MEM_ATTACH_GLOBAL));
    for (int i = 0; i < 8; i++) flags[i] = 0;
    CUevent after;
    CHECK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
    int keeps = 1;

    // 1. A launch behind a held stream returns at once; the kernel waits.
    while_held(first, [&] {
        auto start = std::chrono::steady_clock::now();
        touch<<<1, 1, 0, (cudaStream_t)first>>>(flags + 4);
        CHECK(cuEventRecord(after, first));
        double launch_ms = ms_since(start);
        int pending = launch_ms < 150.0 && cuEventQuery(after) == CUDA_ERROR_NOT_READY;
        printf("held-kernel probe: a launch on a held stream: call %6.1f ms, kernel %s\n", launch_ms,
               pending ? "pending (asynchronous)" : "already done (the launch waited for the held stream)");
        keeps &= pending;
    });

    // 2. Another stream runs while the first is held.
    while_held(first, [&] {
        auto start = std::chrono::steady_clock::now();
        touch<<<1, 1, 0, (cudaStream_t)second>>>(flags + 4);
        CHECK(cuEventRecord(after, second));
        while (cuEventQuery(after) == CUDA_ERROR_NOT_READY && ms_since(start) < 250.0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        int ran = cuEventQuery(after) == CUDA_SUCCESS && ms_since(start) < 250.0;
        printf("held-kernel probe: a kernel on another stream during the hold: %s\n",
               ran ? "ran (streams side by side)" : "waited for the held stream (streams serialised)");
        keeps &= ran;
    });

    // 3. Two kernels on two streams run at the same time.
    meet<<<1, 1, 0, (cudaStream_t)first>>>(flags + 0, flags + 1, flags + 2, 2000000000ull);
    meet<<<1, 1, 0, (cudaStream_t)second>>>(flags + 1, flags + 0, flags + 3, 2000000000ull);
    CHECK(cuCtxSynchronize());
    int met = flags[2] && flags[3];
    printf("held-kernel probe: kernels on two streams: %s\n",
           met ? "ran at the same time" : "ran one after the other (kernels serialised)");
    keeps &= met;

    CHECK(cuEventDestroy(after));
    CHECK(cuMemFree((CUdeviceptr)flags));
    CHECK(cuStreamDestroy(first));
    CHECK(cuStreamDestroy(second));
    CHECK(cuDevicePrimaryCtxRelease(device));
    return keeps ? 0 : 2;
}
