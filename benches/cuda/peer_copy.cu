// CUDA C side of benches/multi_gpu.rs: cudaMemcpyPeerAsync of 1 GiB between
// GPUs 0 and 1, each direction on a stream of the source GPU, with peer
// access enabled both ways (where the hardware allows it), cudaMalloc memory.
// Events, median of 11 after a warm-up.
// Prints `RESULT cuda_c_peer_copy_01_gbps <v> GB/s` and `..._10_...`.
#include "check.h"
#include <algorithm>
#include <vector>

static double copy_gbps(void* dst, int dst_dev, const void* src, int src_dev, size_t bytes) {
    CHECK(cudaSetDevice(src_dev));
    cudaStream_t stream;
    cudaEvent_t start, end;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    std::vector<float> times;
    for (int i = 0; i < 12; ++i) {
        CHECK(cudaEventRecord(start, stream));
        CHECK(cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, stream));
        CHECK(cudaEventRecord(end, stream));
        CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        if (i > 0) times.push_back(ms);  // the first is a warm-up
    }
    std::sort(times.begin(), times.end());
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    CHECK(cudaStreamDestroy(stream));
    return bytes / (times[times.size() / 2] * 1e-3) / 1e9;
}

static void enable_peer(int device, int peer) {
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
    if (!can) {
        printf("FAILED no peer access from device %d to %d: copies go through the host\n", device, peer);
        return;
    }
    CHECK(cudaSetDevice(device));
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
    } else {
        CHECK(e);
    }
}

int main() {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAILED needs 2 GPUs, found %d\n", count);
        return 0;
    }
    const size_t bytes = size_t(1) << 30;
    void *on0, *on1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&on0, bytes));
    CHECK(cudaMemset(on0, 1, bytes));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&on1, bytes));
    CHECK(cudaMemset(on1, 0, bytes));
    enable_peer(0, 1);
    enable_peer(1, 0);
    printf("RESULT cuda_c_peer_copy_01_gbps %.3f GB/s\n", copy_gbps(on1, 1, on0, 0, bytes));
    printf("RESULT cuda_c_peer_copy_10_gbps %.3f GB/s\n", copy_gbps(on0, 0, on1, 1, bytes));
    CHECK(cudaFree(on1));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(on0));
    return 0;
}
