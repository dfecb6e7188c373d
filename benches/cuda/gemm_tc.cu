// Tensor-core GEMMs of issue #22 in CUDA C, written as an expert writes them for
// Hopper (sm_90a), beside cuBLAS, for comparison with the Rust kernels:
//
//   1. gemm_bf16_wgmma: TMA (cp.async.bulk.tensor, tensor maps encoded on the host
//      with cuTensorMapEncodeTiled, passed as __grid_constant__ parameters),
//      mbarrier with expect-tx, a 4-stage shared-memory ring, 128-byte swizzle,
//      wgmma.mma_async m64nNk16 with shared-memory descriptors, one producer
//      warpgroup and 2 (or 3) consumer warpgroups resized with setmaxnreg, a
//      persistent grid with a grouped tile order; optionally clusters of 2 CTAs
//      sharing the B tile through TMA multicast.
//   2. gemm_bf16_mma_sync: the sm_80 design: cp.async into a 4-stage XOR-swizzled
//      ring, ldmatrix.x4, mma.sync.m16n8k16, 8 warps of 64 x 64.
//
// Every PTX-level step is inline `asm volatile` (no CUTLASS/CuTe, no cuda::
// wrappers), so a Rust kernel can mirror each instruction with `asm!`.
// The kernels are in gemm_tc/*.cuh; benches/cuda/KERNELS.md ("Tensor-core GEMMs")
// gives the design in words.
//
// Problem (both kernels and cuBLAS): C = A * B^T, bf16 in, f32 accumulate, bf16 out.
//   A: M x K, row-major, leading dimension lda (elements)  -- "K-major"
//   B: N x K, row-major, leading dimension ldb              -- i.e. the K x N operand
//      stored column-major: K-major, as TMA + wgmma (and ldmatrix) want it
//   C: M x N, row-major, leading dimension ldc (any: an odd ldc, a dense C of odd
//      N as torch and the Rust kernels write, stores the pairs of its odd rows as
//      two bf16 stores, where a bf16x2 store would be misaligned)
// cuBLAS calls this "TN" (cublasGemmEx(OP_T, OP_N) on the column-major view).
// Leading dimensions are multiples of 8 elements (16 bytes): TMA requires 16-byte
// global strides, and cp.async 16-byte chunks need 16-byte aligned rows. M, N and
// K are arbitrary: TMA zero-fills out-of-bounds box elements, cp.async zero-fills
// through its src-size operand, and every store is guarded. The padding columns
// (K <= k < lda) are never read as data.
//
// Build (sm_90a features do not exist in plain sm_90):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemm_tc gemm_tc.cu -lcublas -lcuda
// Usage: gemm_tc [--quick] [--no-cluster]
//   --quick: correctness only, small ragged sizes (incl. a persistent grid of 3
//            blocks looping over many tiles); no timing.
//   --no-cluster: leaves out the cluster (TMA multicast) variants.
//   default: 8192^3, 4096^3, 4099 x 4097 x 4095; median of 30 launches each.
// Prints RESULT / FAILED lines as it goes and the tables last; exits 1 if any
// check failed.
#include "twins.h"
#include <cuda_bf16.h>
#include <deque>
#include <memory>
#ifndef TWINS_NO_CUBLAS  // defined by run_twins.sh when -lcublas does not link
#include <cublas_v2.h>
#else
typedef void* cublasHandle_t;
#endif

// The kernels, one file per concept (their comments are the spec for the Rust ports).
#include "gemm_tc/wgmma_gemm.cuh"
#include "gemm_tc/mma_sync_gemm.cuh"

using namespace twins;

#define CHECK_CUBLAS(call)                                                   \
    do {                                                                     \
        cublasStatus_t st_ = (call);                                         \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                  \
            fprintf(stderr, "%s failed: cuBLAS status %d\n", #call, (int)st_); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// ===========================================================================
// Host side.
// ===========================================================================

static uint16_t bf16_bits(float f) {  // round to nearest even (no NaN inputs)
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static float bf16_value(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

struct Problem {
    int m, n, k, lda, ldb, ldc;
    // The size; with " (ldc L)" when C's rows are padded (ldc > n), so that the
    // dense problem of the same size, the Rust kernels', keeps the plain name.
    std::string name() const {
        char s[64];
        if (ldc > n)
            snprintf(s, sizeof s, "%dx%dx%d (ldc %d)", m, n, k, ldc);
        else
            snprintf(s, sizeof s, "%dx%dx%d", m, n, k);
        return s;
    }
};

// A rows x k bf16 matrix with leading dimension ld, uniform in [-1, 1) rounded to
// bf16; the padding columns hold NaN, so a kernel that reads them as data fails.
static std::vector<uint16_t> random_bf16(int rows, int k, int ld, uint64_t seed) {
    SplitMix64 rng{seed};
    std::vector<uint16_t> v((size_t)rows * ld, 0x7FC0);
    for (int r = 0; r < rows; ++r)
        for (int i = 0; i < k; ++i) v[(size_t)r * ld + i] = bf16_bits(rng.next_f32());
    return v;
}

// A tensor map of a rows x k bf16 matrix (leading dimension ld) in boxes of
// 64 (K) x box_rows, 128-byte swizzle, out-of-bounds elements read as zero.
static bool encode_tensor_map(CUtensorMap* map, const void* base, int rows, int k, int ld, int box_rows) {
    const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * 2};  // bytes between rows; a multiple of 16
    const cuuint32_t box[2] = {WG_BK, (cuuint32_t)box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims,
                                              strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        const char* msg = "";
        cuGetErrorString(r, &msg);
        printf("  cuTensorMapEncodeTiled(rows %d, k %d, ld %d, box 64 x %d) failed: %s\n", rows, k, ld, box_rows, msg);
        return false;
    }
    return true;
}

static int group_for(int sms, int bm, int bn, int tiles_m) {
    const int g = (int)lround(sqrt((double)sms * bn / bm));
    return std::max(1, std::min(g, tiles_m));
}

// One GEMM implementation: queues a launch on the stream (false: cannot run).
struct Gemm {
    std::string name;
    std::function<bool(cudaStream_t)> setup;  // once per problem; false: skip
    std::function<void(cudaStream_t)> launch;
};

// The references of the checked entries of one problem.
struct Reference {
    std::vector<std::pair<int, int>> entries;
    std::vector<double> exact, magnitude;
    std::vector<double> norm_a, norm_b;  // Euclidean norms of A's and B's rows (Cauchy-Schwarz bound)
};

static Reference make_reference(const Problem& p, const std::vector<uint16_t>& ha, const std::vector<uint16_t>& hb,
                                bool every_entry) {
    Reference ref;
    if (every_entry) {
        for (int i = 0; i < p.m; ++i)
            for (int j = 0; j < p.n; ++j) ref.entries.push_back({i, j});
    } else {
        SplitMix64 pick{9};
        ref.entries = {{0, 0}, {0, p.n - 1}, {p.m - 1, 0}, {p.m - 1, p.n - 1}};
        for (int i = 0; i < 256; ++i) ref.entries.push_back({(int)(pick.next() % p.m), (int)(pick.next() % p.n)});
        for (int j = 0; j < p.n; ++j) ref.entries.push_back({p.m - 1, j});  // the last (partial) tile row
        for (int i = 0; i < p.m; ++i) ref.entries.push_back({i, p.n - 1});  // and tile column
    }
    std::vector<float> a((size_t)p.m * p.k), b((size_t)p.n * p.k);
    for (int i = 0; i < p.m; ++i)
        for (int kk = 0; kk < p.k; ++kk) a[(size_t)i * p.k + kk] = bf16_value(ha[(size_t)i * p.lda + kk]);
    for (int j = 0; j < p.n; ++j)
        for (int kk = 0; kk < p.k; ++kk) b[(size_t)j * p.k + kk] = bf16_value(hb[(size_t)j * p.ldb + kk]);
    ref.exact.resize(ref.entries.size());
    ref.magnitude.resize(ref.entries.size());
#pragma omp parallel for
    for (size_t e = 0; e < ref.entries.size(); ++e) {
        const float* ra = &a[(size_t)ref.entries[e].first * p.k];
        const float* rb = &b[(size_t)ref.entries[e].second * p.k];
        double s = 0, mag = 0;
        for (int kk = 0; kk < p.k; ++kk) {
            const double prod = (double)ra[kk] * rb[kk];
            s += prod;
            mag += fabs(prod);
        }
        ref.exact[e] = s;
        ref.magnitude[e] = mag;
    }
    ref.norm_a.resize(p.m);
    ref.norm_b.resize(p.n);
    for (int i = 0; i < p.m; ++i) {
        double s = 0;
        for (int kk = 0; kk < p.k; ++kk) s += (double)a[(size_t)i * p.k + kk] * a[(size_t)i * p.k + kk];
        ref.norm_a[i] = sqrt(s);
    }
    for (int j = 0; j < p.n; ++j) {
        double s = 0;
        for (int kk = 0; kk < p.k; ++kk) s += (double)b[(size_t)j * p.k + kk] * b[(size_t)j * p.k + kk];
        ref.norm_b[j] = sqrt(s);
    }
    return ref;
}

// f32 accumulation of k products (any order, fused or not, round-to-nearest or
// truncating adds: u = 2^-23), then one rounding to bf16 (2^-8 relative: 8
// significant bits).
static double accumulation_gamma(int k) {
    const double u = 0x1p-23;
    return k * u / (1 - k * u);
}

// Checks the checked entries of c against the CPU reference, and (when
// `cublas` is given) every entry against cuBLAS's result.
static bool check_gemm(const Problem& p, const Reference& ref, const bf16* c, const std::vector<uint16_t>* cublas,
                       const std::string& what, double* max_error) {
    const std::vector<uint16_t> got = to_host(reinterpret_cast<const uint16_t*>(c), (size_t)p.m * p.ldc);
    Check check(what);
    const double gamma = accumulation_gamma(p.k);
    for (size_t e = 0; e < ref.entries.size(); ++e) {
        const auto [i, j] = ref.entries[e];
        const double g = bf16_value(got[(size_t)i * p.ldc + j]);
        const double err = fabs(g - ref.exact[e]);
        const double bound = (0x1p-8 * fabs(ref.exact[e]) + gamma * ref.magnitude[e]) * 1.01 + 1e-30;
        check.error(err);
        if (!(err <= bound))
            check.report("C[%d][%d] = %.6g, reference %.9g (bound %.3g)", i, j, g, ref.exact[e], bound);
    }
    if (cublas) {
        double max_diff = 0;
        for (int i = 0; i < p.m; ++i)
            for (int j = 0; j < p.n; ++j) {
                const double g = bf16_value(got[(size_t)i * p.ldc + j]);
                const double w = bf16_value((*cublas)[(size_t)i * p.ldc + j]);
                const double diff = fabs(g - w);
                // Both within gamma |a_i| |b_j| (Cauchy-Schwarz) of the exact value, then rounded (2^-8 each).
                const double bound = 0x1p-7 * 1.01 * fabs(w) + 2.05 * gamma * ref.norm_a[i] * ref.norm_b[j] + 1e-30;
                if (diff > max_diff || diff != diff) max_diff = diff;
                if (!(diff <= bound)) check.report("C[%d][%d] = %.6g, cuBLAS %.6g (bound %.3g)", i, j, g, w, bound);
            }
        printf("  %s: every entry against cuBLAS: max |difference| %.3g\n", what.c_str(), max_diff);
    }
    if (!check.ok())
        printf("  %s: %zu mismatches\n", what.c_str(), check.count);
    *max_error = std::max(*max_error, check.max_error);
    return check.ok();
}

static void bench_problem(const Problem& p, bool quick, int sms, int grid_cap, cudaStream_t stream,
                          cublasHandle_t handle, bool hopper, bool clusters_on) {
    require_int_indexable("A", (size_t)p.m * p.lda);
    require_int_indexable("B", (size_t)p.n * p.ldb);
    require_int_indexable("C", (size_t)p.m * p.ldc);
    printf("problem %s (lda %d, ldb %d, ldc %d)%s\n", p.name().c_str(), p.lda, p.ldb, p.ldc,
           grid_cap ? " with the persistent grid capped" : "");
    const std::vector<uint16_t> ha = random_bf16(p.m, p.k, p.lda, 1), hb = random_bf16(p.n, p.k, p.ldb, 2);
    const Reference ref = make_reference(p, ha, hb, quick);
    bf16* a = reinterpret_cast<bf16*>(to_device(ha));
    bf16* b = reinterpret_cast<bf16*>(to_device(hb));
    bf16* c;
    const size_t c_bytes = (size_t)p.m * p.ldc * sizeof(bf16);
    CHECK(cudaMalloc(&c, c_bytes));

    std::vector<Gemm> gemms;
#ifndef TWINS_NO_CUBLAS
    // cuBLAS first: its result is the full-matrix reference of the others.
    gemms.push_back({"cuBLAS cublasGemmEx (TN, bf16 -> f32 accumulate -> bf16)", [](cudaStream_t) { return true; },
                     [&](cudaStream_t) {
                         const float alpha = 1.0f, beta = 0.0f;
                         CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b,
                                                   CUDA_R_16BF, p.ldb, a, CUDA_R_16BF, p.lda, &beta, c, CUDA_R_16BF,
                                                   p.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                     }});
#else
    (void)handle;
    printf("  built without cuBLAS (TWINS_NO_CUBLAS): no cuBLAS row, no full-matrix comparison\n");
#endif
    std::deque<CUtensorMap> maps;  // stable addresses: the launches read them by pointer
    // A wgmma configuration; `cluster` CTAs (1 or 2, along M) share each B tile by multicast.
    auto add_wgmma = [&](auto kernel, int bm, int bn, int cluster, int threads, int smem, const char* name) {
        if (cluster > 1 && !clusters_on) return;
        CUtensorMap* map_a = &maps.emplace_back();
        CUtensorMap* map_b = &maps.emplace_back();
        auto grid = std::make_shared<int>(0);
        const int tiles_m = ceil_div(p.m, bm), tiles_n = ceil_div(p.n, bn);
        const int pairs_m = ceil_div(tiles_m, cluster), pairs = pairs_m * tiles_n;
        const int group = group_for(sms, bm * cluster, bn, pairs_m);
        auto config = [=](cudaStream_t s, cudaLaunchAttribute* attr) {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(*grid);
            cfg.blockDim = dim3(threads);
            cfg.dynamicSmemBytes = smem;
            cfg.stream = s;
            attr->id = cudaLaunchAttributeClusterDimension;
            attr->val.clusterDim.x = cluster;
            attr->val.clusterDim.y = 1;
            attr->val.clusterDim.z = 1;
            cfg.attrs = attr;
            cfg.numAttrs = cluster > 1 ? 1 : 0;
            return cfg;
        };
        gemms.push_back(
            {name,
             [=](cudaStream_t s) {
                 if (!hopper) {
                     printf("  %s: skipped (needs sm_90a)\n", name);
                     return false;
                 }
                 if (!encode_tensor_map(map_a, a, p.m, p.k, p.lda, bm) ||
                     !encode_tensor_map(map_b, b, p.n, p.k, p.ldb, bn / cluster))
                     return false;
                 CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
                 int clusters = sms / cluster;
                 if (cluster > 1) {  // as many clusters as fit at once (GPCs limit where pairs of SMs are)
                     *grid = cluster * clusters;
                     cudaLaunchAttribute attr;
                     const cudaLaunchConfig_t cfg = config(s, &attr);
                     int active = 0;
                     const cudaError_t e = cudaOccupancyMaxActiveClusters(&active, kernel, &cfg);
                     if (e == cudaSuccess && active > 0) {
                         clusters = std::min(clusters, active);
                     } else {
                         (void)cudaGetLastError();
                         printf("  %s: cudaOccupancyMaxActiveClusters: %s; assuming %d clusters\n", name,
                                cudaGetErrorString(e), clusters);
                     }
                 }
                 if (grid_cap) clusters = std::max(1, grid_cap / cluster);
                 *grid = cluster * std::min(clusters, pairs);
                 printf("  %s: grid %d (clusters of %d; %d tiles of %d x %d, group %d), block %d, %d bytes of shared "
                        "memory\n",
                        name, *grid, cluster, tiles_m * tiles_n, bm, bn, group, threads, smem);
                 return true;
             },
             [=](cudaStream_t s) {
                 cudaLaunchAttribute attr;
                 const cudaLaunchConfig_t cfg = config(s, &attr);
                 CHECK(cudaLaunchKernelEx(&cfg, kernel, *map_a, *map_b, c, p.m, p.n, p.k, p.ldc, group));
             }});
    };
    using C2 = WgmmaConfig<2, 256>;
    using C3 = WgmmaConfig<3, 192>;
    add_wgmma(gemm_bf16_wgmma<2, 256, 1>, C2::BM, 256, 1, C2::THREADS, C2::SMEM_BYTES,
              "wgmma+TMA 128x256, 2 consumer WGs");
    add_wgmma(gemm_bf16_wgmma<3, 192, 1>, C3::BM, 192, 1, C3::THREADS, C3::SMEM_BYTES,
              "wgmma+TMA 192x192, 3 consumer WGs");
    {
        const int tiles_m = ceil_div(p.m, MS_BM), tiles = tiles_m * ceil_div(p.n, MS_BN);
        const int group = group_for(sms, MS_BM, MS_BN, tiles_m);
        const char* name = "mma.sync m16n8k16 + ldmatrix 128x256";
        gemms.push_back({name,
                         [=](cudaStream_t) {
                             CHECK(cudaFuncSetAttribute(gemm_bf16_mma_sync, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                        MS_SMEM_BYTES));
                             printf("  %s: grid %d (group %d), block %d, %d bytes of shared memory\n", name, tiles,
                                    group, MS_THREADS, MS_SMEM_BYTES);
                             return true;
                         },
                         [=](cudaStream_t s) {
                             gemm_bf16_mma_sync<<<tiles, MS_THREADS, MS_SMEM_BYTES, s>>>(a, b, c, p.m, p.n, p.k, p.lda,
                                                                                         p.ldb, p.ldc, group);
                             CHECK(cudaGetLastError());
                         }});
    }
    // Last, so that a failure of the cluster variants costs the least.
    add_wgmma(gemm_bf16_wgmma<2, 256, 2>, C2::BM, 256, 2, C2::THREADS, C2::SMEM_BYTES,
              "wgmma+TMA 128x256, 2 consumer WGs, cluster 2x1 (B multicast)");
    add_wgmma(gemm_bf16_wgmma<3, 192, 2>, C3::BM, 192, 2, C3::THREADS, C3::SMEM_BYTES,
              "wgmma+TMA 192x192, 3 consumer WGs, cluster 2x1 (B multicast)");

    std::vector<uint16_t> cublas_result;
    double cublas_ms = -1;
    const double flops = 2.0 * p.m * p.n * p.k;
    for (size_t g = 0; g < gemms.size(); ++g) {
        const Gemm& gemm = gemms[g];
        const std::string what = gemm.name + " " + p.name();
        if (!gemm.setup(stream)) {
            if (hopper || gemm.name.find("wgmma") == std::string::npos)
                add_row({"bf16 GEMM (issue #22)", gemm.name, p.name(), -1, 0, "", 0, false});
            continue;
        }
        double max_error = 0;
        const bool is_cublas = gemm.name.rfind("cuBLAS", 0) == 0;
        const std::vector<uint16_t>* full = (!is_cublas && !cublas_result.empty()) ? &cublas_result : nullptr;
        poison(c, c_bytes);
        gemm.launch(stream);
        sync_or_die(stream, what.c_str());
        bool ok = check_gemm(p, ref, c, full, what + " (before timing)", &max_error);
        if (is_cublas && ok) cublas_result = to_host(reinterpret_cast<const uint16_t*>(c), (size_t)p.m * p.ldc);
        double ms = -1;
        if (ok && !quick) {
            ms = median_ms(stream, what.c_str(), [&] { gemm.launch(stream); });
            ok = check_gemm(p, ref, c, full, what + " (after timing)", &max_error);
        }
        if (is_cublas && ok) cublas_ms = ms;
        if (ms > 0 && cublas_ms > 0 && !is_cublas)
            printf("RATIO %s %s: %.3f of cuBLAS's speed\n", gemm.name.c_str(), p.name().c_str(), cublas_ms / ms);
        add_row({"bf16 GEMM (issue #22)", gemm.name, p.name(), ms, ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0, "TFLOP/s",
                 max_error, ok});
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
}

// Registers and local memory per thread of each kernel as the GPU runs it.
static void print_registers(bool hopper) {
    const struct {
        const char* name;
        const void* kernel;
        bool needs_hopper;
    } kernels[] = {{"gemm_bf16_wgmma<2, 256, 1>", (const void*)gemm_bf16_wgmma<2, 256, 1>, true},
                   {"gemm_bf16_wgmma<3, 192, 1>", (const void*)gemm_bf16_wgmma<3, 192, 1>, true},
                   {"gemm_bf16_wgmma<2, 256, 2>", (const void*)gemm_bf16_wgmma<2, 256, 2>, true},
                   {"gemm_bf16_wgmma<3, 192, 2>", (const void*)gemm_bf16_wgmma<3, 192, 2>, true},
                   {"gemm_bf16_mma_sync", (const void*)gemm_bf16_mma_sync, false}};
    for (const auto& k : kernels) {
        if (k.needs_hopper && !hopper) continue;
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, k.kernel));
        printf("RESULT regs %s %d registers, %zu bytes local, %zu bytes static shared\n", k.name, attr.numRegs,
               attr.localSizeBytes, attr.sharedSizeBytes);
    }
}

int main(int argc, char** argv) {
    const bool quick = has_flag(argc, argv, "--quick");
    const bool clusters_on = !has_flag(argc, argv, "--no-cluster");
    int sms;
    print_device(&sms);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const bool hopper = prop.major == 9 && prop.minor == 0;
    if (prop.major < 8) {
        printf("FAILED: needs sm_80 or later\n");
        return 1;
    }
    if (!hopper) printf("not sm_90: the wgmma kernels are skipped\n");
    print_registers(hopper);
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t handle = nullptr;
#ifndef TWINS_NO_CUBLAS
    CHECK_CUBLAS(cublasCreate(&handle));
    CHECK_CUBLAS(cublasSetStream(handle, stream));
#endif

    // C's rows padded to 8 elements (every pair store aligned), and dense (ldc = n,
    // as torch's and the Rust kernels' C).
    auto problem = [](int m, int n, int k) { return Problem{m, n, k, round_up(k, 8), round_up(k, 8), round_up(n, 8)}; };
    auto dense = [](int m, int n, int k) { return Problem{m, n, k, round_up(k, 8), round_up(k, 8), n}; };
    if (quick) {
        bench_problem(problem(520, 777, 333), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(dense(520, 777, 333), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(128, 256, 64), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(1, 1, 1), true, sms, 0, stream, handle, hopper, clusters_on);
        // A persistent grid of 3 CTAs (1 cluster), each looping over many tiles.
        bench_problem(problem(1000, 1100, 700), true, sms, 3, stream, handle, hopper, clusters_on);
    } else {
        bench_problem(problem(8192, 8192, 8192), false, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(4096, 4096, 4096), false, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(4099, 4097, 4095), false, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(dense(4099, 4097, 4095), false, sms, 0, stream, handle, hopper, clusters_on);
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
