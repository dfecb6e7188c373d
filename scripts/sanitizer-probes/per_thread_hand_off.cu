// Does a tool finish a hand-off from another thread's per-thread default stream?
// The driver calls of tests/gpu_tracking.rs's
// a_write_on_another_threads_per_thread_stream_is_waited_for, in CUDA C:
//
//   main thread:   x zeroed and filled with 0 on a stream `reader` (blocking,
//                  as the runtime's Stream::new(), CuPy's default; or
//                  non-blocking with the argument `non-blocking`); an event
//                  after it
//   other thread:  on its per-thread default stream, a small allocation, a
//                  kernel, a stream-ordered free; a host function holding the
//                  stream for 300 ms; a wait for the event; a kernel writing 4
//                  into x; the thread ends
//   main thread:   an event on the legacy default stream (ordered after the
//                  per-thread stream's work), `reader` waits for it, x copied
//                  to the host on `reader`, `reader` synchronised
//
// Prints "hand-off done" and exits 0 when the copy saw 4 everywhere; a tool
// under which the process never gets there is caught by the caller's timeout.
//
//   nvcc -O2 -o per-thread-hand-off per_thread_hand_off.cu -lcuda
//   ./per-thread-hand-off [non-blocking]
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <vector>

#define CHECK(call)                                                                     \
    do {                                                                                \
        CUresult status_ = (call);                                                      \
        if (status_ != CUDA_SUCCESS) {                                                  \
            const char *text_ = "?";                                                    \
            cuGetErrorName(status_, &text_);                                            \
            fprintf(stderr, "per-thread hand-off probe: %s failed: %s\n", #call, text_); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

__global__ void fill(float *x, size_t n, float value) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}

static void launch_fill(CUstream stream, CUdeviceptr x, size_t n, float value) {
    fill<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>((float *)x, n, value);
    if (cudaGetLastError() != cudaSuccess) {
        fprintf(stderr, "per-thread hand-off probe: the fill kernel did not launch\n");
        exit(1);
    }
}

static std::atomic<bool> released;

static void CUDA_CB wait_for_release(void *) {
    while (!released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int main(int argc, char **argv) {
    bool non_blocking = argc > 1 && strcmp(argv[1], "non-blocking") == 0;
    CUdevice device;
    CUcontext context;
    CUstream reader;
    CUevent filled, after_writer;
    CUdeviceptr x;
    const size_t n = 1 << 12;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CUmemoryPool pool; // as the runtime: the default pool keeps freed memory
    CHECK(cuDeviceGetDefaultMemPool(&pool, device));
    cuuint64_t keep_everything = ~(cuuint64_t)0;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything));
    CHECK(cuStreamCreate(&reader, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
    CHECK(cuEventCreate(&filled, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&after_writer, CU_EVENT_DISABLE_TIMING));
    CHECK(cuMemAllocAsync(&x, n * sizeof(float), reader));
    CHECK(cuMemsetD8Async(x, 0, n * sizeof(float), reader));
    launch_fill(reader, x, n, 0.0f);
    CHECK(cuStreamSynchronize(reader));
    CHECK(cuEventRecord(filled, reader));

    std::thread writer([&] {
        CHECK(cuCtxSetCurrent(context));
        CUstream own = CU_STREAM_PER_THREAD;
        CUdeviceptr warm;
        CHECK(cuMemAllocAsync(&warm, 16 * sizeof(float), own));
        CHECK(cuMemsetD8Async(warm, 0, 16 * sizeof(float), own));
        launch_fill(own, warm, 16, 0.0f);
        CHECK(cuStreamSynchronize(own));
        CHECK(cuMemFreeAsync(warm, own));
        released.store(false);
        CHECK(cuLaunchHostFunc(own, wait_for_release, nullptr));
        std::thread releaser([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            released.store(true);
        });
        CHECK(cuStreamWaitEvent(own, filled, 0));
        launch_fill(own, x, n, 4.0f);
        releaser.join();
    });
    writer.join();

    CHECK(cuEventRecord(after_writer, CU_STREAM_LEGACY));
    CHECK(cuStreamWaitEvent(reader, after_writer, 0));
    std::vector<float> host(n);
    CHECK(cuMemcpyDtoHAsync(host.data(), x, n * sizeof(float), reader));
    CHECK(cuStreamSynchronize(reader));
    for (size_t i = 0; i < n; i++) {
        if (host[i] != 4.0f) {
            fprintf(stderr, "per-thread hand-off probe: element %zu is %g, not 4\n", i, host[i]);
            return 1;
        }
    }
    // As the runtime's drops: x freed on the stream that used it last, then
    // the stream and its events destroyed, with the free still queued.
    CHECK(cuMemFreeAsync(x, reader));
    CHECK(cuEventDestroy(filled));
    CHECK(cuEventDestroy(after_writer));
    CHECK(cuStreamDestroy(reader));
    printf("per-thread hand-off probe (%s reader): hand-off done, the reader saw the other thread's writes\n",
           non_blocking ? "non-blocking" : "blocking");
    return 0;
}
