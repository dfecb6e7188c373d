// The host cost of cudaEventRecord in CUDA C, for benches/streams_and_ops.rs:
// the floor under any library's event record on this driver.
// Usage: event_record_cuda        Prints `RESULT <name> <value> <unit>` lines.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Median over 7 rounds of 100k records on an idle non-blocking stream, in ns.
static double record_ns(cudaEvent_t event, cudaStream_t stream) {
    std::vector<double> rounds;
    for (int round = 0; round < 7; ++round) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 100000; ++i) CHECK(cudaEventRecord(event, stream));
        auto end = std::chrono::steady_clock::now();
        CHECK(cudaStreamSynchronize(stream));
        rounds.push_back(std::chrono::duration<double, std::nano>(end - start).count() / 100000);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

int main() {
    CHECK(cudaFree(0));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t timed, untimed;
    CHECK(cudaEventCreate(&timed));
    CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    printf("RESULT cuda_c_record_ns %.1f ns\n", record_ns(timed, stream));
    printf("RESULT cuda_c_record_untimed_ns %.1f ns\n", record_ns(untimed, stream));
    return 0;
}
