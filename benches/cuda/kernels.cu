// The five kernels of issue #9 in CUDA C, as an expert writes them for sm_90,
// for comparison with the Rust kernels of benches/kernels.rs.
// Built on the GPU machine with `nvcc -O3 -arch=sm_90 -o kernels_cuda kernels.cu -lcuda`.
// Usage: kernels_cuda          Prints `RESULT <name> <value> <unit>` lines, and
// `FAILED <what>` lines (then exits 1) when a result differs from the CPU reference.
// benches/cuda/KERNELS.md describes each kernel precisely enough to port it.
//
// Every kernel is timed the same way: 5 warm-up launches, then 50 launches each
// between two events on one non-blocking stream; the figure is the median of the
// 50 per-launch times. Each result is checked against a CPU reference on a run
// into a poisoned output before timing, and again after timing.
#include "check.h"
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

// ---------------------------------------------------------------------------
// Kernels. All indices are 32-bit `int`: the host checks that every index a
// kernel forms stays below 2^30 before launching.
// ---------------------------------------------------------------------------

constexpr int MATMUL_TILE = 16;

// C (M x N) = A (M x K) * B (K x N), row-major, f32. Block (16, 16), grid
// (ceil(N / 16), ceil(M / 16)); thread (x, y) computes C[y][x]. Each step stages
// a 16 x 16 tile of A and of B in shared memory (zero outside the matrices).
extern "C" __global__ void matmul_tiled16(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, int m, int n, int k) {
    __shared__ float a_tile[MATMUL_TILE][MATMUL_TILE];
    __shared__ float b_tile[MATMUL_TILE][MATMUL_TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * MATMUL_TILE + ty;
    const int col = blockIdx.x * MATMUL_TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += MATMUL_TILE) {
        const int a_col = k0 + tx, b_row = k0 + ty;
        a_tile[ty][tx] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
        b_tile[ty][tx] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < MATMUL_TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];  // FFMA
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

// One Jacobi step of the 5-point stencil on an h x w row-major grid: interior
// points get 0.25 * ((up + down) + (left + right)), boundary points are copied.
// Block (32, 8), grid (ceil(w / 32), ceil(h / 8)); thread (x, y) writes out[y][x].
extern "C" __global__ void jacobi5(const float* __restrict__ in, float* __restrict__ out, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const int i = y * w + x;
    float v;
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1)
        v = 0.25f * ((in[i - w] + in[i + w]) + (in[i - 1] + in[i + 1]));
    else
        v = in[i];
    out[i] = v;
}

constexpr int HIST_BINS = 256;
constexpr int HIST_BLOCK = 256;  // one shared bin per thread

// Privatised 256-bin histogram of u32 values masked to their low 8 bits.
// Block 256, grid = SMs x resident blocks per SM (a grid-stride loop); each
// block counts into its shared bins with shared atomics, then adds each
// non-zero bin to the global bins with one global atomic. The loop keeps four
// independent loads in flight per thread before their four shared atomics.
// `bins` must be zero before the launch.
extern "C" __global__ void histogram256(const uint32_t* __restrict__ in, int n, uint32_t* __restrict__ bins) {
    __shared__ uint32_t local[HIST_BINS];
    const int t = threadIdx.x;
    local[t] = 0;
    __syncthreads();
    const int stride = gridDim.x * HIST_BLOCK;
    int i = blockIdx.x * HIST_BLOCK + t;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint32_t v0 = in[i], v1 = in[i + stride], v2 = in[i + 2 * stride], v3 = in[i + 3 * stride];
        atomicAdd(&local[v0 & 0xFF], 1u);
        atomicAdd(&local[v1 & 0xFF], 1u);
        atomicAdd(&local[v2 & 0xFF], 1u);
        atomicAdd(&local[v3 & 0xFF], 1u);
    }
    for (; i < n; i += stride) atomicAdd(&local[in[i] & 0xFF], 1u);
    __syncthreads();
    const uint32_t count = local[t];
    if (count != 0) atomicAdd(&bins[t], count);
}

constexpr int TILE = 32;

// out (w x h) = transpose of in (h x w), both row-major, through a 32 x 33
// shared tile (the padding column keeps the column reads free of bank
// conflicts). The grid covers the OUTPUT in 32 x 32 tiles: grid
// (ceil(h / 32), ceil(w / 32)); block (bx, by) writes out rows by*32.. and
// columns bx*32.., reading in rows bx*32.. and columns by*32...
//
// Classic variant: block (32, 8), each thread moves 4 elements, rows ty + 8j.
extern "C" __global__ void transpose_32x8(const float* __restrict__ in, float* __restrict__ out, int h,
                                          int w) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int out_row0 = blockIdx.y * TILE, out_col0 = blockIdx.x * TILE;
    // Load: tile[r][c] = in[out_col0 + r][out_row0 + c].
    const int in_col = out_row0 + tx;
#pragma unroll
    for (int j = 0; j < TILE; j += 8) {
        const int in_row = out_col0 + ty + j;
        if (in_row < h && in_col < w) tile[ty + j][tx] = in[in_row * w + in_col];
    }
    __syncthreads();
    // Store: out[out_row0 + r][out_col0 + c] = tile[c][r].
    const int out_col = out_col0 + tx;
#pragma unroll
    for (int j = 0; j < TILE; j += 8) {
        const int out_row = out_row0 + ty + j;
        if (out_row < w && out_col < h) out[out_row * h + out_col] = tile[tx][ty + j];
    }
}

// One element per thread: block (32, 32); thread (x, y) writes out[y][x].
extern "C" __global__ void transpose_32x32(const float* __restrict__ in, float* __restrict__ out, int h,
                                           int w) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int out_row0 = blockIdx.y * TILE, out_col0 = blockIdx.x * TILE;
    const int in_row = out_col0 + ty, in_col = out_row0 + tx;
    if (in_row < h && in_col < w) tile[ty][tx] = in[in_row * w + in_col];
    __syncthreads();
    const int out_row = out_row0 + ty, out_col = out_col0 + tx;
    if (out_row < w && out_col < h) out[out_row * h + out_col] = tile[tx][ty];
}

constexpr int STENCIL_R = 4;
constexpr int STENCIL_BLOCK = 256;
constexpr int STENCIL_SPAN = STENCIL_BLOCK + 2 * STENCIL_R;

// The weights, passed by value as a kernel argument (they live in the
// parameter constant bank, which FFMA reads directly, as it would __constant__).
struct StencilWeights {
    float w[2 * STENCIL_R + 1];  // w[k] multiplies in[i + k - R]
};

// out[i] = sum_{k=0..2R} w[k] * in[i + k - R], with in[j] = 0 outside [0, n).
// Block 256, grid ceil(n / 256). Block b stages in[b*256 - R .. b*256 + 256 + R)
// in shared memory: slot s holds in[b*256 - R + s]; thread t fills slots t and,
// for t < 2R, t + 256. Then thread t reads slots t .. t + 2R.
extern "C" __global__ void stencil1d_r4(const float* __restrict__ in, float* __restrict__ out, int n,
                                        StencilWeights weights) {
    __shared__ float span[STENCIL_SPAN];
    const int t = threadIdx.x;
    const int g = blockIdx.x * STENCIL_BLOCK - STENCIL_R + t;  // in[] index of slot t
    span[t] = (g >= 0 && g < n) ? in[g] : 0.0f;
    if (t < 2 * STENCIL_R) span[t + STENCIL_BLOCK] = (g + STENCIL_BLOCK < n) ? in[g + STENCIL_BLOCK] : 0.0f;
    __syncthreads();
    const int i = blockIdx.x * STENCIL_BLOCK + t;
    if (i < n) {
        float acc = weights.w[0] * span[t];
#pragma unroll
        for (int k = 1; k <= 2 * STENCIL_R; ++k) acc += weights.w[k] * span[t + k];  // FFMA
        out[i] = acc;
    }
}

// ---------------------------------------------------------------------------
// Host side: inputs, timing, checks.
// ---------------------------------------------------------------------------

constexpr int WARMUP = 5;
constexpr int TIMED = 50;

static int failures = 0;

// splitmix64: the same stream on every platform (unlike <random>'s distributions).
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

static std::vector<float> random_f32(size_t n, uint64_t seed) {
    SplitMix64 rng{seed};
    std::vector<float> v(n);
    for (auto& x : v) x = rng.next_f32();
    return v;
}

template <class T>
static T* to_device(const std::vector<T>& host) {
    T* dev;
    CHECK(cudaMalloc(&dev, host.size() * sizeof(T)));
    CHECK(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return dev;
}

template <class T>
static std::vector<T> to_host(const T* dev, size_t n) {
    std::vector<T> host(n);
    CHECK(cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

// Fills `bytes` of `dev` with 0xFF: NaN for f32, 0xFFFFFFFF for u32.
static void poison(void* dev, size_t bytes) {
    CHECK(cudaMemset(dev, 0xFF, bytes));
    CHECK(cudaDeviceSynchronize());
}

static void require_int_sized(const char* what, size_t elements) {
    if (elements >= (size_t)1 << 30) {
        fprintf(stderr, "%s: %zu elements do not fit the kernels' int indices\n", what, elements);
        exit(1);
    }
}

// `launch` queues one launch on `stream` (and checks the launch); `before`, if
// any, is queued before each launch, outside the timed interval. Returns the
// median of TIMED per-launch times, in ms.
static float median_launch_ms(cudaStream_t stream, const std::function<void()>& launch,
                              const std::function<void()>& before = nullptr) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < WARMUP; ++i) {
        if (before) before();
        launch();
    }
    CHECK(cudaStreamSynchronize(stream));
    std::vector<float> times;
    for (int i = 0; i < TIMED; ++i) {
        if (before) before();
        CHECK(cudaEventRecord(start, stream));
        launch();
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    printf("  per-launch ms: min %.4f, median %.4f, max %.4f (%d launches)\n", times.front(),
           times[times.size() / 2], times.back(), TIMED);
    return times[times.size() / 2];
}

// Counts a check's mismatches and prints the first few.
struct Mismatches {
    const char* kernel;
    const char* pass;
    size_t count = 0;
    void report(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        if (++count <= 5) {
            printf("  mismatch (%s, %s): ", kernel, pass);
            va_list args;
            va_start(args, fmt);
            vprintf(fmt, args);
            va_end(args);
            printf("\n");
        }
    }
    // Prints `FAILED` and counts the failure when anything mismatched.
    bool ok(size_t checked) {
        if (count == 0) return true;
        printf("FAILED %s (%s): %zu of %zu checked values wrong\n", kernel, pass, count, checked);
        ++failures;
        return false;
    }
};

// Exact equality; false for NaN (the poison), so an unwritten element fails.
static bool same(float got, float want) { return got == want; }

static const double U32 = 0x1p-24;  // unit roundoff of f32

// --- 1. matmul --------------------------------------------------------------

static void bench_matmul(cudaStream_t stream) {
    const int m = 2049, n = 2049, k = 2049;
    require_int_sized("matmul", (size_t)m * k);
    printf("matmul_tiled16: C (%d x %d) = A (%d x %d) * B (%d x %d), f32, block (16, 16), grid (%d, %d)\n",
           m, n, m, k, k, n, (n + 15) / 16, (m + 15) / 16);
    const std::vector<float> ha = random_f32((size_t)m * k, 1), hb = random_f32((size_t)k * n, 2);
    float *a = to_device(ha), *b = to_device(hb), *c;
    CHECK(cudaMalloc(&c, (size_t)m * n * sizeof(float)));
    const dim3 block(MATMUL_TILE, MATMUL_TILE), grid((n + 15) / 16, (m + 15) / 16);
    auto launch = [&] {
        matmul_tiled16<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
        CHECK(cudaGetLastError());
    };
    // Entries checked: 400 random ones, the last row and the last column (the
    // partial tiles), and the corners. Reference in double; the tolerance is the
    // forward error bound of a k-term f32 dot product, gamma_k * sum |a_ik b_kj|.
    SplitMix64 pick{3};
    std::vector<std::pair<int, int>> entries = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (int i = 0; i < 400; ++i) entries.push_back({(int)(pick.next() % m), (int)(pick.next() % n)});
    for (int j = 0; j < n; ++j) entries.push_back({m - 1, j});
    for (int i = 0; i < m; ++i) entries.push_back({i, n - 1});
    const double gamma = k * U32 / (1 - k * U32);
    auto check = [&](const char* pass) {
        const std::vector<float> hc = to_host(c, (size_t)m * n);
        Mismatches bad{"cuda_matmul", pass};
        for (auto [i, j] : entries) {
            double exact = 0, magnitude = 0;
            for (int kk = 0; kk < k; ++kk) {
                const double p = (double)ha[(size_t)i * k + kk] * hb[(size_t)kk * n + j];
                exact += p;
                magnitude += fabs(p);
            }
            const float got = hc[(size_t)i * n + j];
            if (!(fabs(got - exact) <= gamma * magnitude * 1.01 + 1e-30))
                bad.report("C[%d][%d] = %.9g, reference %.9g (bound %.3g)", i, j, got, exact,
                           gamma * magnitude);
        }
        return bad.ok(entries.size());
    };
    poison(c, (size_t)m * n * sizeof(float));
    launch();
    CHECK(cudaStreamSynchronize(stream));
    if (check("before timing")) {
        const float ms = median_launch_ms(stream, launch);
        if (check("after timing")) {
            printf("RESULT cuda_matmul_ms %.4f ms\n", ms);
            printf("RESULT cuda_matmul_tflops %.3f TFLOP/s\n", 2.0 * m * n * k / (ms * 1e-3) / 1e12);
        }
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
}

// --- 2. Jacobi --------------------------------------------------------------

static void bench_jacobi(cudaStream_t stream) {
    const int h = 8191, w = 8193;
    const size_t cells = (size_t)h * w;
    require_int_sized("jacobi", cells);
    const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    printf("jacobi5: %d x %d f32 grid (h x w), block (32, 8), grid (%u, %u)\n", h, w, grid.x, grid.y);
    const std::vector<float> hin = random_f32(cells, 4);
    float *in = to_device(hin), *out;
    CHECK(cudaMalloc(&out, cells * sizeof(float)));
    auto launch = [&] {
        jacobi5<<<grid, block, 0, stream>>>(in, out, h, w);
        CHECK(cudaGetLastError());
    };
    // The same f32 operations in the same order: exact.
    std::vector<float> want(cells);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const size_t i = (size_t)y * w + x;
            want[i] = (x > 0 && y > 0 && x < w - 1 && y < h - 1)
                          ? 0.25f * ((hin[i - w] + hin[i + w]) + (hin[i - 1] + hin[i + 1]))
                          : hin[i];
        }
    auto check = [&](const char* pass) {
        const std::vector<float> got = to_host(out, cells);
        Mismatches bad{"cuda_jacobi", pass};
        for (size_t i = 0; i < cells; ++i)
            if (!same(got[i], want[i]))
                bad.report("out[%zu][%zu] = %.9g, reference %.9g", i / w, i % w, got[i], want[i]);
        return bad.ok(cells);
    };
    poison(out, cells * sizeof(float));
    launch();
    CHECK(cudaStreamSynchronize(stream));
    if (check("before timing")) {
        const float ms = median_launch_ms(stream, launch);
        if (check("after timing")) {
            printf("RESULT cuda_jacobi_ms %.4f ms\n", ms);
            printf("RESULT cuda_jacobi_gbps %.1f GB/s\n", 2.0 * cells * sizeof(float) / (ms * 1e-3) / 1e9);
        }
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

// --- 3. histogram -----------------------------------------------------------

static void bench_histogram(cudaStream_t stream) {
    const int n = (1 << 28) + 17;
    int sms, per_sm;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram256, HIST_BLOCK, 0));
    const int grid = sms * per_sm;
    require_int_sized("histogram", (size_t)n + 4 * (size_t)grid * HIST_BLOCK);
    printf("histogram256: %d u32 values (low 8 bits binned), 256 bins, block %d, grid %d (%d SMs x %d)\n", n,
           HIST_BLOCK, grid, sms, per_sm);
    std::vector<uint32_t> hin(n);
    SplitMix64 rng{5};
    for (auto& v : hin) v = (uint32_t)(rng.next() >> 32);
    uint32_t* in = to_device(hin);
    uint32_t* bins;
    CHECK(cudaMalloc(&bins, HIST_BINS * sizeof(uint32_t)));
    auto zero_bins = [&] { CHECK(cudaMemsetAsync(bins, 0, HIST_BINS * sizeof(uint32_t), stream)); };
    auto launch = [&] {
        histogram256<<<grid, HIST_BLOCK, 0, stream>>>(in, n, bins);
        CHECK(cudaGetLastError());
    };
    std::vector<uint32_t> want(HIST_BINS, 0);
    for (uint32_t v : hin) ++want[v & 0xFF];
    auto check = [&](const char* pass) {
        const std::vector<uint32_t> got = to_host(bins, HIST_BINS);
        Mismatches bad{"cuda_histogram", pass};
        for (int b = 0; b < HIST_BINS; ++b)
            if (got[b] != want[b]) bad.report("bin %d = %u, reference %u", b, got[b], want[b]);
        return bad.ok(HIST_BINS);
    };
    // Poisoned, then zeroed as every launch needs: the zeroing is part of the run.
    poison(bins, HIST_BINS * sizeof(uint32_t));
    zero_bins();
    launch();
    CHECK(cudaStreamSynchronize(stream));
    if (check("before timing")) {
        const float ms = median_launch_ms(stream, launch, zero_bins);
        if (check("after timing")) {
            printf("RESULT cuda_histogram_ms %.4f ms\n", ms);
            printf("RESULT cuda_histogram_gbps %.1f GB/s\n", (double)n * sizeof(uint32_t) / (ms * 1e-3) / 1e9);
        }
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(bins));
}

// --- 4. transpose -----------------------------------------------------------

static void bench_transpose(cudaStream_t stream) {
    const int h = 8191, w = 8193;
    const size_t cells = (size_t)h * w;
    require_int_sized("transpose", cells);
    const dim3 grid((h + TILE - 1) / TILE, (w + TILE - 1) / TILE);
    printf("transpose: in %d x %d f32 -> out %d x %d, 32 x 33 shared tile, grid (%u, %u) over the output\n", h,
           w, w, h, grid.x, grid.y);
    const std::vector<float> hin = random_f32(cells, 6);
    float *in = to_device(hin), *out;
    CHECK(cudaMalloc(&out, cells * sizeof(float)));
    auto check = [&](const char* kernel, const char* pass) {
        const std::vector<float> got = to_host(out, cells);
        Mismatches bad{kernel, pass};
        for (int r = 0; r < w; ++r)
            for (int col = 0; col < h; ++col) {
                const float g = got[(size_t)r * h + col], want = hin[(size_t)col * w + r];
                if (!same(g, want)) bad.report("out[%d][%d] = %.9g, reference %.9g", r, col, g, want);
            }
        return bad.ok(cells);
    };
    struct Variant {
        const char* name;
        void (*kernel)(const float*, float*, int, int);
        dim3 block;
    } variants[] = {{"cuda_transpose_32x8", transpose_32x8, dim3(TILE, 8)},
                    {"cuda_transpose_32x32", transpose_32x32, dim3(TILE, TILE)}};
    for (const Variant& v : variants) {
        printf("%s: block (%u, %u)\n", v.name + 5, v.block.x, v.block.y);
        auto launch = [&] {
            v.kernel<<<grid, v.block, 0, stream>>>(in, out, h, w);
            CHECK(cudaGetLastError());
        };
        poison(out, cells * sizeof(float));
        launch();
        CHECK(cudaStreamSynchronize(stream));
        if (!check(v.name, "before timing")) continue;
        const float ms = median_launch_ms(stream, launch);
        if (check(v.name, "after timing")) {
            printf("RESULT %s_ms %.4f ms\n", v.name, ms);
            printf("RESULT %s_gbps %.1f GB/s\n", v.name, 2.0 * cells * sizeof(float) / (ms * 1e-3) / 1e9);
        }
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

// --- 5. 1-D stencil ---------------------------------------------------------

static void bench_stencil(cudaStream_t stream) {
    const int n = (1 << 26) + 7;
    require_int_sized("stencil", (size_t)n + STENCIL_BLOCK);
    const int grid = (n + STENCIL_BLOCK - 1) / STENCIL_BLOCK;
    printf("stencil1d_r4: n = %d f32, radius %d, weights as a kernel argument, block %d, grid %d\n", n,
           STENCIL_R, STENCIL_BLOCK, grid);
    const std::vector<float> hin = random_f32(n, 7);
    StencilWeights weights;
    SplitMix64 rng{8};
    for (float& x : weights.w) x = rng.next_f32();
    float *in = to_device(hin), *out;
    CHECK(cudaMalloc(&out, (size_t)n * sizeof(float)));
    auto launch = [&] {
        stencil1d_r4<<<grid, STENCIL_BLOCK, 0, stream>>>(in, out, n, weights);
        CHECK(cudaGetLastError());
    };
    // Reference in double; the tolerance is the forward error bound of a
    // (2R+1)-term f32 dot product (fused or not), gamma_{2R+1} * sum |w_k x_k|.
    const int terms = 2 * STENCIL_R + 1;
    const double gamma = terms * U32 / (1 - terms * U32);
    auto check = [&](const char* pass) {
        const std::vector<float> got = to_host(out, n);
        Mismatches bad{"cuda_stencil", pass};
        for (int i = 0; i < n; ++i) {
            double exact = 0, magnitude = 0;
            for (int kk = 0; kk < terms; ++kk) {
                const int j = i + kk - STENCIL_R;
                const double p = (j >= 0 && j < n) ? (double)weights.w[kk] * hin[j] : 0.0;
                exact += p;
                magnitude += fabs(p);
            }
            if (!(fabs(got[i] - exact) <= gamma * magnitude * 1.01 + 1e-30))
                bad.report("out[%d] = %.9g, reference %.9g (bound %.3g)", i, got[i], exact, gamma * magnitude);
        }
        return bad.ok(n);
    };
    poison(out, (size_t)n * sizeof(float));
    launch();
    CHECK(cudaStreamSynchronize(stream));
    if (check("before timing")) {
        const float ms = median_launch_ms(stream, launch);
        if (check("after timing")) {
            printf("RESULT cuda_stencil_ms %.4f ms\n", ms);
            printf("RESULT cuda_stencil_gbps %.1f GB/s\n", 2.0 * n * sizeof(float) / (ms * 1e-3) / 1e9);
        }
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

// Registers and local memory per thread of each kernel as compiled for this GPU,
// as `RESULT cuda_<kernel>_regs` lines (benches/kernels.rs shows them beside the
// Rust kernels').
static void print_registers() {
    const struct {
        const char* name;
        const void* kernel;
    } kernels[] = {{"matmul", (const void*)matmul_tiled16},   {"jacobi", (const void*)jacobi5},
                   {"histogram", (const void*)histogram256},  {"transpose_32x8", (const void*)transpose_32x8},
                   {"transpose_32x32", (const void*)transpose_32x32}, {"stencil", (const void*)stencil1d_r4}};
    for (const auto& k : kernels) {
        cudaFuncAttributes attributes;
        CHECK(cudaFuncGetAttributes(&attributes, k.kernel));
        printf("RESULT cuda_%s_regs %d registers (%zu bytes of local memory)\n", k.name, attributes.numRegs,
               attributes.localSizeBytes);
    }
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
    print_registers();
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    bench_matmul(stream);
    bench_jacobi(stream);
    bench_histogram(stream);
    bench_transpose(stream);
    bench_stencil(stream);
    CHECK(cudaStreamDestroy(stream));
    if (failures != 0) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    return 0;
}
