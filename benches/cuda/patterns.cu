// The kernels of issue #20's benchmark table in CUDA C, written as an expert
// writes them (nvcc -O3, int indices, __restrict__, 16-byte vector loads where
// the alignment is known, #pragma unroll, __launch_bounds__), beside the library
// baselines a CUDA C user would call instead, for comparison with the Rust kernels:
//
//   1. exclusive scan of u32: (a) scan-then-propagate (block scan + block sums +
//      add back, the issue's three kernels), (b) reduce-then-scan (three kernels,
//      one pass less), (c) single-pass decoupled look-back; baseline
//      cub::DeviceScan::ExclusiveSum.
//   2. row softmax, f32: narrow (1000 and 1024 columns, one block per row,
//      float4 block-stride ownership, 1-D grid of 100,003 rows) and wide (4099
//      columns, fused: each thread keeps columns t, t + 256, ... in registers).
//   3. SGEMM, f32: 4 x 4 register tiles (64 x 64 x 16 block tiles) and 8 x 8
//      register tiles (128 x 128 x 8, the classic double-buffered design);
//      baseline cublasSgemm (FP32, no TF32).
//   4. 5 x 5 convolution (filter as a by-value struct parameter, halo tile in
//      shared memory, 25 taps unrolled, 4 outputs a thread) and layer norm (one
//      block per row, two passes over registers).
//
// The kernels are in patterns/*.cuh; each kernel's comment is the spec for its Rust port; benches/cuda/KERNELS.md
// ("Kernel patterns") says the same in prose. torch's baselines are in
// benches/python/patterns_torch.py.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o patterns patterns.cu -lcublas
// Usage: patterns [--quick]
//   --quick: correctness only, at small odd sizes; no timing.
//   default: the issue's sizes; median of 30 launches after 5 warm-ups, each
//            result checked against a CPU reference before and after timing.
// Prints RESULT / FAILED lines as it goes and the tables last; exits 1 if any
// check failed.
#include "twins.h"
#include <cub/device/device_scan.cuh>
#ifndef TWINS_NO_CUBLAS  // defined by run_twins.sh when -lcublas does not link
#include <cublas_v2.h>
#else
typedef void* cublasHandle_t;
#endif

using namespace twins;

// The kernels, one file per concept (each file's comments are the spec for its Rust port).
#include "patterns/scan.cuh"
#include "patterns/softmax.cuh"
#include "patterns/sgemm.cuh"
#include "patterns/conv2d.cuh"
#include "patterns/layer_norm.cuh"

#define CHECK_CUBLAS(call)                                                     \
    do {                                                                       \
        cublasStatus_t st_ = (call);                                           \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                    \
            fprintf(stderr, "%s failed: cuBLAS status %d\n", #call, (int)st_); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

// ===========================================================================
// Host side.
// ===========================================================================

// One implementation of one problem: poison the output, launch, check, time,
// check again, add the table row. `check` returns whether every checked value
// is right and raises *max_error. `work` is bytes (GB/s) or flops (TFLOP/s).
struct Case {
    std::string table, kernel, size;
    double work;
    bool flops;
    std::function<void()> prepare;  // queued before every launch, outside the timed interval (may be empty)
    std::function<void()> launch;   // queues the launch(es) on the stream; timed
    std::function<bool(const char* pass, double* max_error)> check;
    std::function<void()> poison;
};

static void run_case(const Case& c, bool quick, cudaStream_t stream) {
    const std::string what = c.kernel + " " + c.size;
    double max_error = 0;
    c.poison();
    if (c.prepare) c.prepare();
    c.launch();
    sync_or_die(stream, what.c_str());
    bool ok = c.check("before timing", &max_error);
    double ms = -1;
    if (ok && !quick) {
        ms = median_ms(stream, what.c_str(), c.launch, c.prepare);
        ok = c.check("after timing", &max_error);
    }
    const double rate = ms > 0 ? (c.flops ? c.work / (ms * 1e-3) / 1e12 : c.work / (ms * 1e-3) / 1e9) : 0;
    add_row({c.table, c.kernel, c.size, ms, rate, c.flops ? "TFLOP/s" : "GB/s", max_error, ok});
}

static const double U32 = 0x1p-24;  // unit roundoff of f32
static double gamma_n(int n) { return n * U32 / (1 - n * U32); }

// --- 1. scan -------------------------------------------------------------------

static void bench_scan(int n, bool quick, cudaStream_t stream) {
    require_int_indexable("scan", (size_t)n + SCAN_TILE);
    const int tiles = ceil_div(n, SCAN_TILE);
    const int lb_tiles = ceil_div(n, LB_TILE);
    printf("exclusive scan: %d u32, tiles of %d (%d tiles)\n", n, SCAN_TILE, tiles);
    std::vector<uint32_t> hin(n);
    SplitMix64 rng{10};
    for (auto& v : hin) v = (uint32_t)(rng.next() >> 32);
    std::vector<uint32_t> want(n);
    uint32_t running = 0;
    for (int i = 0; i < n; ++i) want[i] = running, running += hin[i];
    uint32_t *in = to_device(hin), *out, *tile_sums;
    unsigned long long* status;  // tiles status words, then the tile counter
    CHECK(cudaMalloc(&out, (size_t)n * 4));
    CHECK(cudaMalloc(&tile_sums, (size_t)tiles * 4));
    CHECK(cudaMalloc(&status, ((size_t)lb_tiles + 1) * 8));
    unsigned* counter = reinterpret_cast<unsigned*>(status + lb_tiles);
    size_t temp_bytes = 0;
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in, out, n, stream));
    void* temp;
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));

    const std::string size = std::to_string(n) + " u32";
    auto check = [&](const std::string& kernel) {
        return [&, kernel](const char* pass, double* max_error) {
            const std::vector<uint32_t> got = to_host(out, n);
            Check bad(kernel + " (" + pass + ")");
            for (int i = 0; i < n; ++i)
                if (got[i] != want[i]) {
                    bad.error(1);
                    bad.report("out[%d] = %u, reference %u", i, got[i], want[i]);
                }
            *max_error = std::max(*max_error, bad.ok() ? 0.0 : 1.0);  // exact: 0 or 1 (wrong)
            return bad.ok();
        };
    };
    auto poison_out = [&] { poison(out, (size_t)n * 4); };
    const double bytes = 2.0 * n * 4;
    const char* table = "exclusive scan, u32 (issue #20)";
    const std::vector<Case> cases = {
        {table, "scan-then-propagate: tile scans + sums scan + add back (3 kernels)", size, bytes, false, nullptr,
         [&] {
             scan_tiles_local<<<tiles, SCAN_THREADS, 0, stream>>>(in, out, tile_sums, n);
             scan_tile_sums<<<1, SUMS_THREADS, 0, stream>>>(tile_sums, tiles);
             add_tile_offsets<<<tiles, SCAN_THREADS, 0, stream>>>(out, tile_sums, n);
             CHECK(cudaGetLastError());
         },
         check("scan-then-propagate"), poison_out},
        {table, "reduce-then-scan: tile sums + sums scan + tile scans (3 kernels)", size, bytes, false, nullptr,
         [&] {
             reduce_tiles<<<tiles, SCAN_THREADS, 0, stream>>>(in, tile_sums, n);
             scan_tile_sums<<<1, SUMS_THREADS, 0, stream>>>(tile_sums, tiles);
             scan_tiles_from_sums<<<tiles, SCAN_THREADS, 0, stream>>>(in, out, tile_sums, n);
             CHECK(cudaGetLastError());
         },
         check("reduce-then-scan"), poison_out},
        {table, "decoupled look-back (1 kernel + status memset)", size, bytes, false, nullptr,
         [&] {
             CHECK(cudaMemsetAsync(status, 0, ((size_t)lb_tiles + 1) * 8, stream));
             scan_lookback<<<lb_tiles, LB_THREADS, 0, stream>>>(in, out, n, status, counter);
             CHECK(cudaGetLastError());
         },
         check("decoupled look-back"), poison_out},
        {table, "CUB DeviceScan::ExclusiveSum", size, bytes, false, nullptr,
         [&] { CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream)); }, check("CUB"),
         poison_out},
    };
    for (const Case& c : cases) run_case(c, quick, stream);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(tile_sums));
    CHECK(cudaFree(status));
    CHECK(cudaFree(temp));
}

// --- 2. softmax ------------------------------------------------------------------

static void bench_softmax(int rows, int cols, bool quick, cudaStream_t stream) {
    require_int_indexable("softmax row", (size_t)cols);
    const size_t cells = (size_t)rows * cols;
    const bool narrow = cols % 4 == 0 && cols <= 128 * 2 * 4;
    if (!narrow && cols > 256 * 17) {
        printf("softmax: %d columns is more than the built kernels hold\n", cols);
        exit(1);
    }
    printf("softmax: %d rows x %d columns, f32, 1-D grid of %d blocks (%s)\n", rows, cols, rows,
           narrow ? "narrow: 128 threads, float4 block stride" : "wide: 256 threads, 17 columns a thread");
    std::vector<float> hin = random_f32(cells, 11);
    for (float& x : hin) x *= 8.0f;  // [-8, 8): exp would overflow nowhere, but the max matters
    float *in = to_device(hin), *out;
    CHECK(cudaMalloc(&out, cells * 4));
    // Reference in double; tolerance 1e-5 relative (__expf and the f32 sums are within ~2e-6).
    std::vector<double> want(cells);
    for (int r = 0; r < rows; ++r) {
        const float* x = &hin[(size_t)r * cols];
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c) mx = std::max(mx, (double)x[c]);
        for (int c = 0; c < cols; ++c) sum += exp((double)x[c] - mx);
        for (int c = 0; c < cols; ++c) want[(size_t)r * cols + c] = exp((double)x[c] - mx) / sum;
    }
    const std::string kernel = narrow ? "softmax, one block per row (narrow, float4)"
                                      : "softmax, one block per row (wide, fused, registers)";
    Case c{"row softmax, f32 (issue #20)", kernel, std::to_string(rows) + " x " + std::to_string(cols),
           2.0 * cells * 4, false, nullptr,
           [&] {
               if (narrow)
                   softmax_rows_vec4<128, 2><<<rows, 128, 0, stream>>>(in, out, cols);
               else
                   softmax_rows_strided<256, 17><<<rows, 256, 0, stream>>>(in, out, cols);
               CHECK(cudaGetLastError());
           },
           [&](const char* pass, double* max_error) {
               const std::vector<float> got = to_host(out, cells);
               Check bad(kernel + " (" + pass + ")");
               for (size_t i = 0; i < cells; ++i) {
                   const double err = fabs(got[i] - want[i]) / want[i];
                   bad.error(err);
                   if (!(err <= 1e-5))
                       bad.report("y[%zu][%zu] = %.9g, reference %.9g", i / cols, i % cols, got[i], want[i]);
               }
               *max_error = std::max(*max_error, bad.max_error);
               return bad.ok();
           },
           [&] { poison(out, cells * 4); }};
    run_case(c, quick, stream);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

// --- 3. SGEMM --------------------------------------------------------------------

static void bench_sgemm(int m, int n, int k, bool quick, cudaStream_t stream, cublasHandle_t handle) {
    const int lda = round_up(k, 4), ldb = round_up(n, 4), ldc = round_up(n, 4);
    require_int_indexable("sgemm", std::max({(size_t)m * lda, (size_t)k * ldb, (size_t)m * ldc}));
    printf("sgemm: C (%d x %d) = A (%d x %d) * B (%d x %d), f32, lda %d, ldb %d, ldc %d\n", m, n, m, k, k, n, lda, ldb,
           ldc);
    // Padding columns hold NaN: a kernel that reads them as data fails its check.
    std::vector<float> ha((size_t)m * lda, NAN), hb((size_t)k * ldb, NAN);
    SplitMix64 rng{1};
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j) ha[(size_t)i * lda + j] = rng.next_f32();
    rng = SplitMix64{2};
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < n; ++j) hb[(size_t)i * ldb + j] = rng.next_f32();
    float *a = to_device(ha), *b = to_device(hb), *c;
    CHECK(cudaMalloc(&c, (size_t)m * ldc * 4));
    // Checked entries: all (quick), else the corners, 400 random ones, the last row and column.
    std::vector<std::pair<int, int>> entries;
    if (quick) {
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) entries.push_back({i, j});
    } else {
        SplitMix64 pick{3};
        entries = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
        for (int i = 0; i < 400; ++i) entries.push_back({(int)(pick.next() % m), (int)(pick.next() % n)});
        for (int j = 0; j < n; ++j) entries.push_back({m - 1, j});
        for (int i = 0; i < m; ++i) entries.push_back({i, n - 1});
    }
    std::vector<double> exact(entries.size()), magnitude(entries.size());
    for (size_t e = 0; e < entries.size(); ++e) {
        double s = 0, mag = 0;
        for (int kk = 0; kk < k; ++kk) {
            const double p = (double)ha[(size_t)entries[e].first * lda + kk] * hb[(size_t)kk * ldb + entries[e].second];
            s += p;
            mag += fabs(p);
        }
        exact[e] = s, magnitude[e] = mag;
    }
    const double gamma = gamma_n(k);
    auto check = [&](const std::string& kernel) {
        return [&, kernel](const char* pass, double* max_error) {
            const std::vector<float> got = to_host(c, (size_t)m * ldc);
            Check bad(kernel + " (" + pass + ")");
            for (size_t e = 0; e < entries.size(); ++e) {
                const auto [i, j] = entries[e];
                const double g = got[(size_t)i * ldc + j], err = fabs(g - exact[e]);
                const double bound = gamma * magnitude[e] * 1.01 + 1e-30;
                bad.error(err);
                if (!(err <= bound))
                    bad.report("C[%d][%d] = %.9g, reference %.9g (bound %.3g)", i, j, g, exact[e], bound);
            }
            *max_error = std::max(*max_error, bad.max_error);
            return bad.ok();
        };
    };
    const std::string size = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    const double flops = 2.0 * m * n * k;
    auto poison_c = [&] { poison(c, (size_t)m * ldc * 4); };
    const char* table = "SGEMM, f32 (issue #20)";
    std::vector<Case> cases = {
        {table, "sgemm 64x64x16 tiles, 4x4 per thread", size, flops, true, nullptr,
         [&] {
             const dim3 grid(ceil_div(n, S4_BN), ceil_div(m, S4_BM));
             sgemm_4x4<<<grid, 256, 0, stream>>>(a, b, c, m, n, k, lda, ldb, ldc);
             CHECK(cudaGetLastError());
         },
         check("sgemm_4x4"), poison_c},
        {table, "sgemm 128x128x8 tiles, 8x8 per thread", size, flops, true, nullptr,
         [&] {
             const dim3 grid(ceil_div(n, S8_BN), ceil_div(m, S8_BM));
             sgemm_8x8<<<grid, 256, 0, stream>>>(a, b, c, m, n, k, lda, ldb, ldc);
             CHECK(cudaGetLastError());
         },
         check("sgemm_8x8"), poison_c},
    };
#ifndef TWINS_NO_CUBLAS
    // Row-major C = A B is column-major C^T = B^T A^T.
    cases.push_back({table, "cuBLAS cublasSgemm (FP32, no TF32)", size, flops, true, nullptr,
                     [&] {
                         const float alpha = 1.0f, beta = 0.0f;
                         CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a, lda,
                                                  &beta, c, ldc));
                     },
                     check("cublasSgemm"), poison_c});
#else
    (void)handle;
#endif
    for (const Case& cs : cases) run_case(cs, quick, stream);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
}

// --- 4a. convolution ---------------------------------------------------------------

static void bench_conv(int h, int w, bool quick, cudaStream_t stream) {
    const size_t cells = (size_t)h * w;
    require_int_indexable("conv", cells);
    const dim3 grid(ceil_div(w, CONV_TILE), ceil_div(h, CONV_TILE));
    printf("conv2d 5x5: %d x %d f32 image (h x w), filter by value, block (32, 8), grid (%u, %u)\n", h, w, grid.x,
           grid.y);
    const std::vector<float> hin = random_f32(cells, 12);
    Filter5x5 filter;
    SplitMix64 rng{13};
    for (float& x : filter.w) x = rng.next_f32();
    float *in = to_device(hin), *out;
    CHECK(cudaMalloc(&out, cells * 4));
    const double gamma = gamma_n(25);
    Case c{"5x5 convolution and layer norm, f32 (issue #20)",
           "conv2d 5x5, 32x32 tile + halo in shared, 4 outputs a thread",
           std::to_string(h) + " x " + std::to_string(w),
           2.0 * cells * 4,
           false,
           nullptr,
           [&] {
               conv2d_5x5<<<grid, dim3(32, 8), 0, stream>>>(in, out, h, w, filter);
               CHECK(cudaGetLastError());
           },
           [&](const char* pass, double* max_error) {
               const std::vector<float> got = to_host(out, cells);
               Check bad(std::string("conv2d (") + pass + ")");
               for (int y = 0; y < h; ++y)
                   for (int x = 0; x < w; ++x) {
                       double s = 0, mag = 0;
                       for (int dy = 0; dy < 5; ++dy)
                           for (int dx = 0; dx < 5; ++dx) {
                               const int iy = y + dy - 2, ix = x + dx - 2;
                               if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                               const double p = (double)filter.w[5 * dy + dx] * hin[(size_t)iy * w + ix];
                               s += p, mag += fabs(p);
                           }
                       const double g = got[(size_t)y * w + x], err = fabs(g - s);
                       bad.error(err);
                       if (!(err <= gamma * mag * 1.01 + 1e-30))
                           bad.report("out[%d][%d] = %.9g, reference %.9g", y, x, g, s);
                   }
               *max_error = std::max(*max_error, bad.max_error);
               return bad.ok();
           },
           [&] { poison(out, cells * 4); }};
    run_case(c, quick, stream);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

// --- 4b. layer norm ----------------------------------------------------------------

static void bench_layer_norm(int rows, int cols, bool quick, cudaStream_t stream) {
    const size_t cells = (size_t)rows * cols;
    const bool small = cols <= 128 * 8;
    if (cols > 256 * 17) {
        printf("layer norm: %d columns is more than the built kernels hold\n", cols);
        exit(1);
    }
    printf("layer norm: %d rows x %d columns, f32, one block of %d per row\n", rows, cols, small ? 128 : 256);
    const std::vector<float> hin = random_f32(cells, 14), hgamma = random_f32(cols, 15), hbeta = random_f32(cols, 16);
    float *in = to_device(hin), *gamma = to_device(hgamma), *beta = to_device(hbeta), *out;
    CHECK(cudaMalloc(&out, cells * 4));
    const float eps = 1e-5f;
    std::vector<double> want(cells);
    for (int r = 0; r < rows; ++r) {
        const float* x = &hin[(size_t)r * cols];
        double mean = 0, var = 0;
        for (int c = 0; c < cols; ++c) mean += x[c];
        mean /= cols;
        for (int c = 0; c < cols; ++c) var += (x[c] - mean) * (x[c] - mean);
        const double rstd = 1.0 / sqrt(var / cols + eps);
        for (int c = 0; c < cols; ++c) want[(size_t)r * cols + c] = (x[c] - mean) * rstd * hgamma[c] + hbeta[c];
    }
    Case c{"5x5 convolution and layer norm, f32 (issue #20)",
           small ? "layer norm, one block (128) per row, two passes in registers"
                 : "layer norm, one block (256) per row, two passes in registers",
           std::to_string(rows) + " x " + std::to_string(cols), 2.0 * cells * 4, false, nullptr,
           [&] {
               if (small)
                   layer_norm_rows<128, 8><<<rows, 128, 0, stream>>>(in, out, gamma, beta, cols, eps);
               else
                   layer_norm_rows<256, 17><<<rows, 256, 0, stream>>>(in, out, gamma, beta, cols, eps);
               CHECK(cudaGetLastError());
           },
           [&](const char* pass, double* max_error) {
               const std::vector<float> got = to_host(out, cells);
               Check bad(std::string("layer norm (") + pass + ")");
               for (size_t i = 0; i < cells; ++i) {
                   const double err = fabs(got[i] - want[i]);
                   bad.error(err);
                   if (!(err <= 1e-5 * (1 + fabs(want[i]))))
                       bad.report("y[%zu][%zu] = %.9g, reference %.9g", i / cols, i % cols, got[i], want[i]);
               }
               *max_error = std::max(*max_error, bad.max_error);
               return bad.ok();
           },
           [&] { poison(out, cells * 4); }};
    run_case(c, quick, stream);
    CHECK(cudaFree(in));
    CHECK(cudaFree(gamma));
    CHECK(cudaFree(beta));
    CHECK(cudaFree(out));
}

static void print_registers() {
    const struct {
        const char* name;
        const void* kernel;
    } kernels[] = {{"scan_tiles_local", (const void*)scan_tiles_local},
                   {"scan_tile_sums", (const void*)scan_tile_sums},
                   {"add_tile_offsets", (const void*)add_tile_offsets},
                   {"reduce_tiles", (const void*)reduce_tiles},
                   {"scan_tiles_from_sums", (const void*)scan_tiles_from_sums},
                   {"scan_lookback", (const void*)scan_lookback},
                   {"softmax_rows_vec4<128, 2>", (const void*)softmax_rows_vec4<128, 2>},
                   {"softmax_rows_strided<256, 17>", (const void*)softmax_rows_strided<256, 17>},
                   {"sgemm_4x4", (const void*)sgemm_4x4},
                   {"sgemm_8x8", (const void*)sgemm_8x8},
                   {"conv2d_5x5", (const void*)conv2d_5x5},
                   {"layer_norm_rows<256, 17>", (const void*)layer_norm_rows<256, 17>},
                   {"layer_norm_rows<128, 8>", (const void*)layer_norm_rows<128, 8>}};
    for (const auto& k : kernels) {
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, k.kernel));
        printf("RESULT regs %s %d registers, %zu bytes local\n", k.name, attr.numRegs, attr.localSizeBytes);
    }
}

int main(int argc, char** argv) {
    const bool quick = has_flag(argc, argv, "--quick");
    int sms;
    print_device(&sms);
    print_registers();
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t handle = nullptr;
#ifndef TWINS_NO_CUBLAS
    CHECK_CUBLAS(cublasCreate(&handle));
    CHECK_CUBLAS(cublasSetStream(handle, stream));
    CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // FP32 stays FP32 (no TF32)
#else
    printf("built without cuBLAS (TWINS_NO_CUBLAS): no cublasSgemm row\n");
#endif
    if (quick) {
        for (int n : {1, 4095, 4096, 4097, 100003, (1 << 20) + 7}) bench_scan(n, true, stream);
        bench_softmax(65537, 1000, true, stream);  // more rows than grid.y could hold
        bench_softmax(5, 1024, true, stream);
        bench_softmax(3, 4, true, stream);
        bench_softmax(7, 4099, true, stream);
        bench_softmax(2, 1, true, stream);
        bench_sgemm(129, 131, 67, true, stream, handle);
        bench_sgemm(64, 64, 16, true, stream, handle);
        bench_sgemm(1, 1, 1, true, stream, handle);
        bench_sgemm(300, 200, 9, true, stream, handle);
        bench_conv(37, 45, true, stream);
        bench_conv(1, 1, true, stream);
        bench_conv(33, 31, true, stream);
        bench_layer_norm(3, 4099, true, stream);
        bench_layer_norm(65537, 1000, true, stream);
        bench_layer_norm(2, 1, true, stream);
    } else {
        bench_scan(1 << 26, false, stream);
        bench_scan((1 << 26) + 12345, false, stream);
        bench_softmax(100003, 1000, false, stream);
        bench_softmax(100003, 1024, false, stream);
        bench_softmax(16411, 4099, false, stream);
        bench_sgemm(4099, 4097, 4095, false, stream, handle);
        bench_sgemm(4096, 4096, 4096, false, stream, handle);
        bench_conv(8191, 4097, false, stream);
        bench_layer_norm(16411, 4099, false, stream);
        bench_layer_norm(100003, 1000, false, stream);
    }
#ifndef TWINS_NO_CUBLAS
    CHECK_CUBLAS(cublasDestroy(handle));
#endif
    CHECK(cudaStreamDestroy(stream));
    print_tables();
    if (failures() != 0) {
        printf("%d check(s) failed\n", failures());
        return 1;
    }
    return 0;
}
