// CUDA C side of benches/multi_gpu.rs: the Day 7 pipeline on 1 GPU and on 2
// GPUs, the same total work, structured as the crate's `Pipeline` and
// benches/cuda/pipeline.cu: chunks, each copied in, run through `busy` and
// copied out on one stream; 4 streams per GPU, each with its own device
// buffers of one chunk; chunk c on stream c % streams, the streams taken in
// turn from each GPU (GPU 0's first, GPU 1's first, GPU 0's second, ...).
//
// Usage: multi_gpu_pipeline ROUNDS [ELEMENTS_PER_GPU [CHUNKS_PER_GPU...]]
//   ROUNDS: the busy kernel's rounds, calibrated by the Rust side;
//   ELEMENTS_PER_GPU: default 64 Mi f32 (256 MiB);
//   CHUNKS_PER_GPU: each count runs on 1 and 2 GPUs (default 16); the
//   1-GPU run has the chunks of both GPUs' shares.
//
// Host memory: cudaHostAlloc(cudaHostAllocPortable), one input and one
// output for the whole problem (as the crate's pinned buffers). Timed with
// events on GPU 0's first stream, which every stream (of either GPU) waits
// for at the start and which waits for every stream at the end (as the Rust
// bench does), and with a host clock around queueing and finishing. Median
// of 5 after a warm-up.
//
// Prints, for C chunks per GPU and G GPUs, `RESULT
// cuda_c_mgpu_pipeline_<C>c_<G>gpu_ms` (events) and `..._host_ms` (host clock).
#include "busy.h"
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const int STREAMS_PER_GPU = 4;

struct Lane {
    int device;
    cudaStream_t stream;
    float *din, *dout;
};

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The pipeline over `n` elements of `in` into `out` in `chunks` chunks, on
// GPUs 0..used-1; prints its RESULT lines (named after `per_gpu_chunks`),
// exits on a wrong result.
static void run(const float* in, float* out, size_t n, unsigned rounds, int per_gpu_chunks,
                int chunks, int used) {
    const size_t chunk = (n + chunks - 1) / chunks, bytes = n * sizeof(float);
    // Streams interleaved across the GPUs, each with one chunk's buffers.
    std::vector<Lane> lanes;
    for (int k = 0; k < STREAMS_PER_GPU; ++k) {
        for (int g = 0; g < used; ++g) {
            Lane lane;
            lane.device = g;
            CHECK(cudaSetDevice(g));
            CHECK(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
            CHECK(cudaMalloc(&lane.din, chunk * sizeof(float)));
            CHECK(cudaMalloc(&lane.dout, chunk * sizeof(float)));
            lanes.push_back(lane);
        }
    }
    const int nlanes = (int)lanes.size();
    // Events of GPU 0 (start, end), and one per lane of its GPU for the join.
    CHECK(cudaSetDevice(0));
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    std::vector<cudaEvent_t> joined(nlanes);
    for (int l = 0; l < nlanes; ++l) {
        CHECK(cudaSetDevice(lanes[l].device));
        CHECK(cudaEventCreateWithFlags(&joined[l], cudaEventDisableTiming));
    }
    std::vector<double> times, host_times;
    for (int rep = 0; rep < 6; ++rep) {
        for (int g = 0; g < used; ++g) {
            CHECK(cudaSetDevice(g));
            CHECK(cudaDeviceSynchronize());
        }
        memset(out, 0, bytes);
        auto t0 = std::chrono::steady_clock::now();
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventRecord(start, lanes[0].stream));
        for (int l = 1; l < nlanes; ++l) {
            CHECK(cudaSetDevice(lanes[l].device));
            CHECK(cudaStreamWaitEvent(lanes[l].stream, start, 0));
        }
        for (int c = 0; c < chunks; ++c) {
            const size_t off = c * chunk;
            if (off >= n) break;
            const size_t len = std::min(chunk, n - off);
            Lane& lane = lanes[c % nlanes];
            CHECK(cudaSetDevice(lane.device));
            CHECK(cudaMemcpyAsync(lane.din, in + off, len * sizeof(float), cudaMemcpyHostToDevice,
                                  lane.stream));
            busy<<<(unsigned)((len + 255) / 256), 256, 0, lane.stream>>>(lane.din, rounds, lane.dout,
                                                                         len);
            CHECK(cudaMemcpyAsync(out + off, lane.dout, len * sizeof(float), cudaMemcpyDeviceToHost,
                                  lane.stream));
        }
        for (int l = 1; l < nlanes; ++l) {
            CHECK(cudaSetDevice(lanes[l].device));
            CHECK(cudaEventRecord(joined[l], lanes[l].stream));
            CHECK(cudaSetDevice(0));
            CHECK(cudaStreamWaitEvent(lanes[0].stream, joined[l], 0));
        }
        CHECK(cudaSetDevice(0));
        CHECK(cudaEventRecord(end, lanes[0].stream));
        CHECK(cudaEventSynchronize(end));
        auto t1 = std::chrono::steady_clock::now();
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        if (rep > 0) {  // the first is a warm-up
            times.push_back(ms);
            host_times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
    }
    for (size_t i = 0; i < n; i += 4099) {
        float v = busy_reference(in[i], rounds);
        if (out[i] != v) {
            fprintf(stderr, "%d chunks per GPU on %d GPU(s): wrong result at %zu: %f vs %f\n",
                    per_gpu_chunks, used, i, out[i], v);
            exit(1);
        }
    }
    printf("RESULT cuda_c_mgpu_pipeline_%dc_%dgpu_ms %.4f ms\n", per_gpu_chunks, used, median(times));
    printf("RESULT cuda_c_mgpu_pipeline_%dc_%dgpu_host_ms %.4f ms\n", per_gpu_chunks, used,
           median(host_times));
    for (int l = 0; l < nlanes; ++l) {
        CHECK(cudaSetDevice(lanes[l].device));
        CHECK(cudaEventDestroy(joined[l]));
        CHECK(cudaFree(lanes[l].din));
        CHECK(cudaFree(lanes[l].dout));
        CHECK(cudaStreamDestroy(lanes[l].stream));
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
}

int main(int argc, char** argv) {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAILED needs 2 GPUs, found %d\n", count);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s ROUNDS [ELEMENTS_PER_GPU [CHUNKS_PER_GPU...]]\n", argv[0]);
        return 2;
    }
    const unsigned rounds = (unsigned)atoi(argv[1]);
    const size_t per_gpu = argc > 2 ? strtoull(argv[2], nullptr, 10) : (size_t)64 << 20;
    std::vector<int> chunk_counts;
    for (int a = 3; a < argc; ++a) {
        int c = atoi(argv[a]);
        if (c < 1) {
            fprintf(stderr, "chunks per GPU must be at least 1, not `%s`\n", argv[a]);
            return 2;
        }
        chunk_counts.push_back(c);
    }
    if (chunk_counts.empty()) chunk_counts.push_back(16);
    if (per_gpu == 0) {
        fprintf(stderr, "ELEMENTS_PER_GPU must be at least 1\n");
        return 2;
    }
    const size_t n = 2 * per_gpu, bytes = n * sizeof(float);
    float *in, *out;
    CHECK(cudaHostAlloc(&in, bytes, cudaHostAllocPortable));
    CHECK(cudaHostAlloc(&out, bytes, cudaHostAllocPortable));
    for (size_t i = 0; i < n; ++i) in[i] = (float)(i % 1000) / 1000.0f;
    for (int per_gpu_chunks : chunk_counts) {
        for (int used = 1; used <= 2; ++used) run(in, out, n, rounds, per_gpu_chunks, 2 * per_gpu_chunks, used);
    }
    CHECK(cudaFreeHost(in));
    CHECK(cudaFreeHost(out));
    return 0;
}
