// What the CUDA C twins of issues #20 and #22 (patterns.cu, gemm_tc.cu) share:
// inputs, a hang watchdog, per-launch timing and the result tables.
#pragma once
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

namespace twins {

constexpr int WARMUP = 5;
constexpr int TIMED = 30;            // median of 30 per-launch times (the issue asks for >= 20)
constexpr double HANG_SECONDS = 20;  // a launch still running after this is a hang

// splitmix64, as benches/cuda/kernels.cu: the same stream on every platform.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [-1, 1), a multiple of 2^-23.
    float next_f32() { return (float)(next() >> 40) * 0x1p-23f - 1.0f; }
};

inline std::vector<float> random_f32(size_t n, uint64_t seed) {
    SplitMix64 rng{seed};
    std::vector<float> v(n);
    for (auto& x : v) x = rng.next_f32();
    return v;
}

template <class T>
T* to_device(const std::vector<T>& host) {
    T* dev;
    CHECK(cudaMalloc(&dev, std::max<size_t>(1, host.size()) * sizeof(T)));
    CHECK(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return dev;
}

template <class T>
std::vector<T> to_host(const T* dev, size_t n) {
    std::vector<T> host(n);
    CHECK(cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

// Waits for `stream`; a launch that runs past HANG_SECONDS is reported by name
// and ends the program (a deadlocked kernel would otherwise hold the GPU forever).
inline void sync_or_die(cudaStream_t stream, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const cudaError_t state = cudaStreamQuery(stream);
        if (state == cudaSuccess) return;
        if (state != cudaErrorNotReady) {
            fprintf(stderr, "FAILED %s: %s\n", what, cudaGetErrorString(state));
            printf("FAILED %s: %s\n", what, cudaGetErrorString(state));
            fflush(stdout);
            exit(1);
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited > HANG_SECONDS) {
            printf("HANG %s: still running after %.0f s; giving up (the process exits, the driver ends the kernel)\n",
                   what, waited);
            fflush(stdout);
            _exit(3);
        }
        usleep(200);
    }
}

// Fills `bytes` of `dev` with 0xFF (NaN for f32 and bf16), so that an element a
// kernel never writes fails its check.
inline void poison(void* dev, size_t bytes) {
    CHECK(cudaMemset(dev, 0xFF, bytes));
    CHECK(cudaDeviceSynchronize());
}

// `launch` queues one launch on `stream` (and checks it); `before`, if any, is
// queued before each launch, outside the timed interval. Returns the median of
// TIMED per-launch times in ms.
inline float median_ms(cudaStream_t stream, const char* what, const std::function<void()>& launch,
                       const std::function<void()>& before = nullptr) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < WARMUP; ++i) {
        if (before) before();
        launch();
    }
    sync_or_die(stream, what);
    std::vector<float> times;
    for (int i = 0; i < TIMED; ++i) {
        if (before) before();
        CHECK(cudaEventRecord(start, stream));
        launch();
        CHECK(cudaEventRecord(stop, stream));
        sync_or_die(stream, what);
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    printf("  %s: per-launch ms min %.4f, median %.4f, max %.4f (%d launches)\n", what, times.front(),
           times[times.size() / 2], times.back(), TIMED);
    return times[times.size() / 2];
}

// Counts a check's mismatches, prints the first few, and keeps the largest
// error seen (in the check's own unit).
struct Check {
    std::string what;
    size_t count = 0, checked = 0;
    double max_error = 0;
    explicit Check(std::string w) : what(std::move(w)) {}
    void error(double e) {
        if (e > max_error || e != e) max_error = e;
    }
    void report(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        if (++count <= 5) {
            printf("  mismatch (%s): ", what.c_str());
            va_list args;
            va_start(args, fmt);
            vprintf(fmt, args);
            va_end(args);
            printf("\n");
        }
    }
    bool ok() const { return count == 0; }
};

// One row of a result table.
struct Row {
    std::string table, kernel, size;
    double ms;          // < 0: not timed
    double rate;        // GB/s or TFLOP/s
    std::string unit;   // "GB/s", "TFLOP/s"
    double max_error;   // of the checks before and after timing
    bool ok;
};

inline std::vector<Row>& rows() {
    static std::vector<Row> all;
    return all;
}

inline int& failures() {
    static int n = 0;
    return n;
}

inline void add_row(Row row) {
    if (!row.ok) {
        ++failures();
        printf("FAILED %s %s (%s)\n", row.kernel.c_str(), row.size.c_str(), row.table.c_str());
    }
    if (row.ok && row.ms >= 0)
        printf("RESULT %s | %s | %.4f ms | %.1f %s\n", row.kernel.c_str(), row.size.c_str(), row.ms, row.rate,
               row.unit.c_str());
    rows().push_back(std::move(row));
}

// Prints every table (markdown), in the order the tables first appeared.
inline void print_tables() {
    std::vector<std::string> order;
    for (const Row& r : rows())
        if (std::find(order.begin(), order.end(), r.table) == order.end()) order.push_back(r.table);
    for (const std::string& t : order) {
        printf("\n### %s\n\n| kernel | size | median ms | rate | max error | check |\n|---|---|---|---|---|---|\n",
               t.c_str());
        for (const Row& r : rows()) {
            if (r.table != t) continue;
            char ms[32] = "-", rate[48] = "-";
            if (r.ms >= 0) {
                snprintf(ms, sizeof ms, "%.4f", r.ms);
                snprintf(rate, sizeof rate, "%.1f %s", r.rate, r.unit.c_str());
            }
            printf("| %s | %s | %s | %s | %.3g | %s |\n", r.kernel.c_str(), r.size.c_str(), ms, rate, r.max_error,
                   r.ok ? "ok" : "WRONG");
        }
    }
    fflush(stdout);
}

inline bool has_flag(int argc, char** argv, const char* flag) {
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], flag) == 0) return true;
    return false;
}

inline int ceil_div(long long a, long long b) { return (int)((a + b - 1) / b); }
inline int round_up(int a, int b) { return ceil_div(a, b) * b; }

// The kernels index in 32-bit int: every index they form must stay below 2^31.
inline void require_int_indexable(const char* what, size_t elements) {
    if (elements >= ((size_t)1 << 31)) {
        fprintf(stderr, "%s: %zu elements do not fit the kernels' int indices\n", what, elements);
        exit(1);
    }
}

inline void print_device(int* sms) {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, sm_%d%d, %d SMs, %.0f MB L2\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           prop.l2CacheSize / 1048576.0);
    *sms = prop.multiProcessorCount;
}

}  // namespace twins
