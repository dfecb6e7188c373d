// CUDA C side of benches/graphs_and_async.rs: the per-kernel cost of a graph
// of 100 tiny kernels replayed with cudaGraphLaunch, against 100 separate
// launches. The kernel is the Rust `add_kernel` (its one-dimensional entry
// point) from the PTX the benchmark writes, so that every column runs the
// same machine code.
// Usage: graphs_cuda <kernels.ptx>   Prints `RESULT <name> <value> <unit>` lines.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

static const int KERNELS = 100;  // kernels per graph (or per sequence of launches)
static const int REPLAYS = 200;  // sequences per timed round
static const size_t N = 256;     // elements: one block of 256 threads

struct Launcher {
    CUfunction f;
    CUdeviceptr p, q, ones;
    size_t n = N;
    // q = p + ones (even k) or p = q + ones (odd k), as the Rust benchmark.
    void launch(int k, cudaStream_t stream) {
        CUdeviceptr in = k % 2 == 0 ? p : q, out = k % 2 == 0 ? q : p;
        void* args[] = {&in, &n, &ones, &n, &out, &n};
        CHECK_CU(cuLaunchKernel(f, 1, 1, 1, (unsigned)N, 1, 1, 0, (CUstream)stream, args, nullptr));
    }
};

// Median over 7 rounds of the time per kernel, in µs, of `run` (one sequence
// of KERNELS kernels) repeated REPLAYS times, then a synchronize.
template <typename F> static double per_kernel_us(F run, cudaStream_t stream) {
    for (int i = 0; i < 20; ++i) run();
    CHECK(cudaStreamSynchronize(stream));
    std::vector<double> rounds;
    for (int round = 0; round < 7; ++round) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < REPLAYS; ++i) run();
        CHECK(cudaStreamSynchronize(stream));
        auto end = std::chrono::steady_clock::now();
        rounds.push_back(std::chrono::duration<double, std::micro>(end - start).count() / (REPLAYS * KERNELS));
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <kernels.ptx>\n", argv[0]);
        return 2;
    }
    CHECK(cudaFree(0));
    CUmodule module;
    CHECK_CU(cuModuleLoad(&module, argv[1]));
    Launcher l;
    CHECK_CU(cuModuleGetFunction(&l.f, module, "add_kernel__1d"));
    float *p, *q, *ones;
    CHECK(cudaMalloc(&p, N * sizeof(float)));
    CHECK(cudaMalloc(&q, N * sizeof(float)));
    CHECK(cudaMalloc(&ones, N * sizeof(float)));
    std::vector<float> host(N, 1.0f);
    CHECK(cudaMemcpy(ones, host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    l.p = (CUdeviceptr)p; l.q = (CUdeviceptr)q; l.ones = (CUdeviceptr)ones;
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaMemsetAsync(p, 0, N * sizeof(float), stream));

    double separate = per_kernel_us([&] { for (int k = 0; k < KERNELS; ++k) l.launch(k, stream); }, stream);
    printf("RESULT cuda_c_separate_us %.3f us\n", separate);

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    for (int k = 0; k < KERNELS; ++k) l.launch(k, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaMemsetAsync(p, 0, N * sizeof(float), stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaMemcpyAsync(host.data(), p, N * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    if (host[0] != (float)KERNELS) {
        printf("FAILED the CUDA C graph computed %f, not %d\n", host[0], KERNELS);
        return 1;
    }
    double replay = per_kernel_us([&] { CHECK(cudaGraphLaunch(exec, stream)); }, stream);
    printf("RESULT cuda_c_graph_us %.3f us\n", replay);
    return 0;
}
