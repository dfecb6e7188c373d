// Does a tool keep asynchronous copies asynchronous? Queues each kind of copy
// the runtime makes (device to pinned host, pinned host to device, device to
// device) on a stream held by a host function for 300 ms, through the same
// driver calls as the runtime (cuLaunchHostFunc, cuMemcpy*Async on memory from
// cuMemAllocAsync and cuMemHostAlloc), and prints how long each call took and
// whether the copy was still pending when it returned.
//
// Without a tool every copy is pending (the call returns at once). Run under
// compute-sanitizer by scripts/sanitize.sh, which leaves out the tests that
// assert a held copy is pending under any tool for which this probe exits 2.
//
//   nvcc -O2 -o held-copy held_copy.cu -lcuda && ./held-copy
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <thread>
#include <chrono>

#define PROBE "held-copy"
#include "check.h"

static std::atomic<bool> released;

static void CUDA_CB wait_for_release(void *) {
    while (!released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

static double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

enum Kind { DEVICE_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_DEVICE };
static const char *names[] = {"device to pinned host", "pinned host to device", "device to device"};

__global__ void fill(unsigned char *bytes, size_t count, unsigned char value) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < count) bytes[i] = value;
}

// Queues one copy behind a held stream, then records an event after it (as
// the runtime does to track the copy) and queries it. Returns 1 when the copy
// was still pending after both calls returned.
static int probe(Kind kind, const char *setup, CUstream stream, CUdeviceptr a, CUdeviceptr b, void *host,
                 size_t bytes) {
    CUevent after;
    CHECK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
    released.store(false);
    CHECK(cuLaunchHostFunc(stream, wait_for_release, nullptr));
    std::thread releaser([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        released.store(true);
    });
    auto start = std::chrono::steady_clock::now();
    switch (kind) {
    case DEVICE_TO_HOST: CHECK(cuMemcpyDtoHAsync(host, a, bytes, stream)); break;
    case HOST_TO_DEVICE: CHECK(cuMemcpyHtoDAsync(a, host, bytes, stream)); break;
    case DEVICE_TO_DEVICE: CHECK(cuMemcpyDtoDAsync(b, a, bytes, stream)); break;
    }
    double copy_ms = ms_since(start);
    start = std::chrono::steady_clock::now();
    CHECK(cuEventRecord(after, stream));
    double record_ms = ms_since(start);
    // Asynchronous: both calls returned well before the hold ended, and the
    // copy had not run by then.
    int pending = copy_ms + record_ms < 150.0 && cuEventQuery(after) == CUDA_ERROR_NOT_READY;
    releaser.join();
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuEventDestroy(after));
    printf("held-copy probe: %-22s (%s): copy call %6.1f ms, event record %6.1f ms, copy %s\n", names[kind],
           setup, copy_ms, record_ms,
           pending ? "pending (asynchronous)" : "already done (a call waited for the held stream)");
    return pending;
}

int main() {
    CUdevice device;
    CUcontext context;
    CUstream stream;
    CUdeviceptr a, b;
    void *plain, *portable;
    size_t bytes = 1 << 20;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAllocAsync(&a, bytes, stream));
    CHECK(cuMemAllocAsync(&b, bytes, stream));
    CHECK(cuMemsetD8Async(a, 42, bytes, stream));
    CHECK(cuMemHostAlloc(&plain, bytes, 0));
    CHECK(cuMemHostAlloc(&portable, bytes, CU_MEMHOSTALLOC_PORTABLE)); // as the runtime's pinned buffers
    CHECK(cuStreamSynchronize(stream));
    int asynchronous = 1;
    asynchronous &= probe(DEVICE_TO_HOST, "plain pinned, memset source", stream, a, b, plain, bytes);
    asynchronous &= probe(DEVICE_TO_HOST, "portable pinned, memset source", stream, a, b, portable, bytes);
    fill<<<(unsigned)(bytes / 256), 256, 0, (cudaStream_t)stream>>>((unsigned char *)a, bytes, 7);
    if (cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "held-copy probe: the fill kernel did not launch\n");
        return 1;
    }
    CHECK(cuStreamSynchronize(stream));
    asynchronous &= probe(DEVICE_TO_HOST, "portable pinned, kernel-written source", stream, a, b, portable, bytes);
    asynchronous &= probe(HOST_TO_DEVICE, "portable pinned", stream, a, b, portable, bytes);
    asynchronous &= probe(DEVICE_TO_DEVICE, "kernel-written source", stream, a, b, portable, bytes);
    CHECK(cuMemFreeAsync(a, stream));
    CHECK(cuMemFreeAsync(b, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemFreeHost(plain));
    CHECK(cuMemFreeHost(portable));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuDevicePrimaryCtxRelease(device));
    return asynchronous ? 0 : 2;
}
