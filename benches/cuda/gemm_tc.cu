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
// benches/cuda/KERNELS.md ("Tensor-core GEMMs") gives the design in words.
//
// Problem (both kernels and cuBLAS): C = A * B^T, bf16 in, f32 accumulate, bf16 out.
//   A: M x K, row-major, leading dimension lda (elements)  -- "K-major"
//   B: N x K, row-major, leading dimension ldb              -- i.e. the K x N operand
//      stored column-major: K-major, as TMA + wgmma (and ldmatrix) want it
//   C: M x N, row-major, leading dimension ldc
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

using namespace twins;
typedef __nv_bfloat16 bf16;

// The wgmma kernel exists only in sm_90a code; elsewhere its body traps (the
// host never launches it on another architecture).
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_UNAVAILABLE 1
#endif

#define CHECK_CUBLAS(call)                                                   \
    do {                                                                     \
        cublasStatus_t st_ = (call);                                         \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                  \
            fprintf(stderr, "%s failed: cuBLAS status %d\n", #call, (int)st_); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// ===========================================================================
// PTX building blocks (one inline-asm statement each).
// ===========================================================================

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// --- mbarrier ---------------------------------------------------------------

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes the initialised barriers visible to the async proxy (TMA's complete_tx).
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also raises the phase's expected transaction bytes.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// True once the phase of parity `parity` has completed. A fresh barrier is in
// phase 0, and waiting for parity 1 (the phase "before" it) returns at once.
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}

// --- TMA ---------------------------------------------------------------------

// Copies the box at coordinates (c0 = inner/K, c1 = row) of the tensor map into
// shared memory at `dst`, completing `bytes` of transactions on `bar`.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
            dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"((uint64_t)map) : "memory");
}

// --- clusters (CLUSTER = 2) ---------------------------------------------------------

__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Every thread of every CTA of the cluster arrives, then waits for all (release/acquire).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The shared::cluster address of the variable at `addr` in CTA `cta` of the cluster.
__device__ __forceinline__ uint32_t map_to_cta(uint32_t addr, uint32_t cta) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
    return r;
}

// An arrival on a barrier of another CTA of the cluster. Default semantics
// (release at CTA scope), as CUTLASS's ClusterBarrier: what it orders is the
// completion of this warp's wgmmas (an execution dependency, known complete at
// wgmma.wait_group) before the peer's TMA overwrites the stage; a cluster-scope
// release would add a MEMBAR.ALL.GPU to every k-block.
__device__ __forceinline__ void mbar_arrive_remote(uint32_t cluster_addr) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}

// tma_load_2d, but the box lands at the same shared offset in every CTA of
// `cta_mask`, and completes its bytes on the barrier at `bar`'s offset in each.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                                      uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
        : "memory");
}

// --- warpgroup register reallocation ------------------------------------------

template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// --- wgmma -----------------------------------------------------------------------

// Shared-memory matrix descriptor of a K-major bf16 tile whose rows are 128
// bytes (64 elements) with the 128-byte swizzle, starting at `addr` (the tile's
// base must be 1024-byte aligned; `addr` may be base + 32 * j to select the
// j-th K-slice of 16 elements):
//   bits  0-13  start address >> 4
//   bits 16-29  leading byte offset >> 4 (unused for swizzled K-major: 1)
//   bits 32-45  stride byte offset >> 4: 1024 bytes between 8-row groups
//   bits 49-51  base offset (0: 1024-byte aligned tiles)
//   bits 62-63  swizzle mode: 1 = 128-byte
__device__ __forceinline__ uint64_t smem_desc_sw128(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accesses of the accumulators across the
// wgmma fence/wait statements (it does not know wgmma writes them late).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}


// ===========================================================================
// 1. gemm_bf16_wgmma
// ===========================================================================
//
// Design (the spec for the Rust port):
// - Tile: each CTA computes BM x BN tiles of C, BM = 64 * CONSUMERS, BK = 64.
//   Configurations built: (CONSUMERS 2, BN 256): 128 x 256 tiles, 384 threads;
//   (CONSUMERS 3, BN 192): 192 x 192 tiles, 512 threads; each with CLUSTER 1
//   and 2 (below). 1 CTA per SM.
// - Persistent: grid = min(#SMs, #tiles); CTA b takes tiles b, b + grid, ...
//   in the grouped order of tile_coords (group_m tile-rows at a time, so that
//   the CTAs running together share A rows and B columns in L2).
// - Warpgroup 0 is the producer: it drops to PRODUCER_REGS registers
//   (setmaxnreg.dec) and one thread issues all TMA loads. Warpgroups 1.. are
//   consumers: they rise to CONSUMER_REGS (setmaxnreg.inc); consumer c owns
//   rows [64c, 64c + 64) of the tile and keeps its 64 x BN f32 accumulator in
//   BN / 2 registers a thread.
// - Shared memory: a ring of STAGES = 4 stages, each an A tile (BM rows x 64 bf16
//   = 128 bytes a row) and a B tile (BN rows x 64), both written by TMA with
//   the 128-byte swizzle (16-byte chunk j of row r lands at chunk j ^ (r % 8)),
//   each 1024-byte aligned. Stage bytes: (BM + BN) * 128 = 48 KiB; ring 192 KiB.
// - Barriers per stage: full[s] (1 arrival: the producer's arrive.expect_tx of
//   the stage's bytes; TMA's complete_tx finishes the phase) and empty[s]
//   (4 * CONSUMERS arrivals: lane 0 of every consumer warp once its wgmmas that
//   read the stage have completed). Phases are tracked by parity: stage index s
//   and a phase bit flipped each time s wraps; the producer waits on empty with
//   the flipped bit, so its first pass through the ring does not wait.
// - Producer loop, per tile, per k-block kb (ceil(K / 64) of them):
//       wait empty[s]; arrive.expect_tx(full[s], 48 KiB);
//       TMA A box (k = kb*64, row = tile_m*BM) and B box (k = kb*64, row = tile_n*BN)
// - Consumer loop, per tile: for each kb:
//       wait full[s]; wgmma.fence;
//       4 x wgmma m64nBNk16 (K slices j = 0..3: descriptors advanced by 32 bytes;
//         A at this consumer's 64 rows, B the whole BN rows; the first of the
//         tile has scale-d = 0, which zeroes the accumulator);
//       commit_group; wait_group 1 (the previous k-block's wgmmas are done) and
//       release that stage (arrive on empty).
//   then wait_group 0, release the last stage, and store: thread t of consumer c
//   (warp w = t / 32, lane l) holds, for each 8-column chunk j, d[4j], d[4j+1]
//   at (row 64c + 16w + l/4, col 8j + 2(l%4) + {0,1}) and d[4j+2], d[4j+3] 8
//   rows lower; it converts pairs to bf16x2 and stores them guarded (row < M,
//   col < N; a lone last column is stored alone).
// - Ragged edges: the tensor maps have the true M, N, K: boxes reaching past
//   them are zero-filled (and still count their full bytes for complete_tx),
//   so partial tiles need no special case until the guarded stores.
// - CLUSTER = 2: the CTAs of a cluster (rank r) take tile rows 2p + r of the
//   same tile column ("pair" p, in the grouped order over pairs), so they share
//   the B tile. Each loads its A tile and rows [r BN/2, r BN/2 + BN/2) of B with
//   the multicast form of the TMA load (both CTAs receive them at the same
//   offset, and both CTAs' full[s] get the bytes: each still expects the whole
//   stage). No box starts outside its tensor: a second tile wholly below M
//   loads the tile above it, a B part wholly right of N starts at row N - 1
//   (neither is ever stored). empty[s] then counts the releases of both CTAs (8 x CONSUMERS
//   arrivals): every consumer warp's lane 0 also arrives on the peer's empty[s]
//   (mapa + mbarrier.arrive.shared::cluster). A cluster barrier follows the
//   barrier initialisation and precedes the exit.

constexpr int WG_BK = 64;
constexpr int WG_STAGES = 4;

template <int CONSUMERS, int BN>
struct WgmmaConfig {
    static constexpr int BM = 64 * CONSUMERS;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int A_BYTES = BM * WG_BK * 2;
    static constexpr int B_BYTES = BN * WG_BK * 2;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM_BYTES = WG_STAGES * STAGE_BYTES + 1024;  // + slack to align to 1024
    // Registers a thread: the launch bound gives 65536 / THREADS (rounded down to
    // 8); the producer's release pays exactly for the consumers' growth.
    static constexpr int PRODUCER_REGS = CONSUMERS == 2 ? 24 : 32;
    static constexpr int CONSUMER_REGS = CONSUMERS == 2 ? 240 : 160;
    static_assert(BN % 16 == 0 && BN <= 256, "wgmma N");
    static_assert(BM <= 256 && BN <= 256, "a TMA box has at most 256 rows");
};

// Tile t of the grouped order: tiles go down group_m tile-rows, then right.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int group_m, int& tile_m, int& tile_n) {
    const int per_group = group_m * tiles_n;
    const int group = t / per_group;
    const int first_m = group * group_m;
    const int rows = min(tiles_m - first_m, group_m);
    const int in_group = t - group * per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
}

template <int N>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d);
// D (64 x 256, f32, 128 registers a thread) += A (64 x 16) * B (256 x 16)^T, A and B bf16 in shared
// memory (K-major, 128-byte swizzle), described by desc_a and desc_b. scale_d == 0 ignores D's old value.
template <>
__device__ __forceinline__ void wgmma_m64k16<256>(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 192, f32, 96 registers a thread) += A (64 x 16) * B (192 x 16)^T, A and B bf16 in shared
// memory (K-major, 128-byte swizzle), described by desc_a and desc_b. scale_d == 0 ignores D's old value.
template <>
__device__ __forceinline__ void wgmma_m64k16<192>(float (&d)[96], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

template <int CONSUMERS, int BN, int CLUSTER>
__global__ void __launch_bounds__(WgmmaConfig<CONSUMERS, BN>::THREADS, 1)
    gemm_bf16_wgmma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    bf16* __restrict__ c, int m, int n, int k, int ldc, int group_m) {
#ifdef WGMMA_UNAVAILABLE
    __trap();
#else
    static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 CTAs along M");
    using Cfg = WgmmaConfig<CONSUMERS, BN>;
    constexpr int BM = Cfg::BM;
    constexpr int B_PART_ROWS = BN / CLUSTER;  // rows of the B tile this CTA loads (and multicasts)
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[WG_STAGES], empty[WG_STAGES];
    // Stage s: A tile at ring + s * STAGE_BYTES, B tile A_BYTES after it.
    const uint32_t ring = (smem_u32(smem_raw) + 1023) & ~1023u;
    const int warpgroup = threadIdx.x / 128, t = threadIdx.x % 128;
    const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0;
    // A cluster works on CLUSTER vertically adjacent tiles (same tile column): its
    // "pair" p covers tile rows CLUSTER p .. CLUSTER p + CLUSTER - 1.
    const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const int pairs_m = (tiles_m + CLUSTER - 1) / CLUSTER, pairs = pairs_m * tiles_n;
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int k_blocks = (k + WG_BK - 1) / WG_BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < WG_STAGES; ++s) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), 4 * CONSUMERS * CLUSTER);
        }
        fence_barrier_init();
    }
    if constexpr (CLUSTER > 1)
        cluster_sync();  // the peer's barriers exist before anything reaches them
    else
        __syncthreads();

    if (warpgroup == 0) {
        // Producer.
        setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        if (t == 0) {
            prefetch_tensor_map(&map_a);
            prefetch_tensor_map(&map_b);
            int s = 0;
            uint32_t phase = 0;
            for (int pair = cluster_id; pair < pairs; pair += clusters) {
                int pair_m, tile_n;
                tile_coords(pair, pairs_m, tiles_n, group_m, pair_m, tile_n);
                // The second tile of the last pair may lie wholly below M (tiles_m odd): it then
                // loads the tile above it instead (its results are never stored), so that no
                // TMA box starts outside the tensor.
                const int tile_m = min(pair_m * CLUSTER + (int)rank, tiles_m - 1);
                for (int kb = 0; kb < k_blocks; ++kb) {
                    // Stage s is free (with CLUSTER > 1: in every CTA of the cluster, where this
                    // CTA's part of B lands too: empty[s] counts the releases of all of them).
                    mbar_wait(smem_u32(&empty[s]), phase ^ 1);
                    const uint32_t a_dst = ring + s * Cfg::STAGE_BYTES, b_dst = a_dst + Cfg::A_BYTES;
                    mbar_arrive_expect_tx(smem_u32(&full[s]), Cfg::STAGE_BYTES);
                    tma_load_2d(a_dst, &map_a, smem_u32(&full[s]), kb * WG_BK, tile_m * BM);
                    // A B part wholly right of N (the last tile column) loads from row N - 1 instead:
                    // those columns of C are never stored.
                    if constexpr (CLUSTER > 1)
                        tma_load_2d_multicast(b_dst + rank * B_PART_ROWS * 128, &map_b, smem_u32(&full[s]), kb * WG_BK,
                                              min(tile_n * BN + (int)rank * B_PART_ROWS, n - 1),
                                              (uint16_t)((1u << CLUSTER) - 1));
                    else
                        tma_load_2d(b_dst, &map_b, smem_u32(&full[s]), kb * WG_BK, tile_n * BN);
                    if (++s == WG_STAGES) {
                        s = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        // Consumer `consumer` owns rows [64 * consumer, 64 * consumer + 64) of each tile.
        setmaxnreg_inc<Cfg::CONSUMER_REGS>();
        const int consumer = warpgroup - 1, warp = t / 32, lane = t % 32;
        float d[BN / 2];
        int s = 0;
        uint32_t phase = 0;
        // Frees stage `stage` for the producers: lane 0 of each warp arrives on the
        // stage's empty barrier of every CTA of the cluster.
        auto release = [&](int stage) {
            if (lane == 0) {
                mbar_arrive(smem_u32(&empty[stage]));
                if constexpr (CLUSTER > 1) mbar_arrive_remote(map_to_cta(smem_u32(&empty[stage]), rank ^ 1));
            }
        };
        for (int pair = cluster_id; pair < pairs; pair += clusters) {
            int pair_m, tile_n;
            tile_coords(pair, pairs_m, tiles_n, group_m, pair_m, tile_n);
            const int tile_m = pair_m * CLUSTER + rank;
            int previous = 0;
            for (int kb = 0; kb < k_blocks; ++kb) {
                mbar_wait(smem_u32(&full[s]), phase);
                const uint32_t a_tile = ring + s * Cfg::STAGE_BYTES + consumer * 64 * 128;
                const uint32_t b_tile = ring + s * Cfg::STAGE_BYTES + Cfg::A_BYTES;
                wgmma_fence();
#pragma unroll
                for (int j = 0; j < WG_BK / 16; ++j)
                    wgmma_m64k16<BN>(d, smem_desc_sw128(a_tile + 32 * j), smem_desc_sw128(b_tile + 32 * j),
                                     (kb > 0 || j > 0) ? 1 : 0);
                wgmma_commit();
                if (kb > 0) {
                    wgmma_wait<1>();  // k-block kb - 1's wgmmas have completed: its stage is free
                    release(previous);
                }
                previous = s;
                if (++s == WG_STAGES) {
                    s = 0;
                    phase ^= 1;
                }
            }
            wgmma_wait<0>();
            release(previous);
            fence_accumulators<BN / 2>(d);

            // Store: pairs of columns as bf16x2, guarded (a cluster's last tile row may lie wholly below M).
            const int row0 = tile_m * BM + consumer * 64 + warp * 16 + lane / 4;
            const int col0 = tile_n * BN + 2 * (lane % 4);
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int col = col0 + 8 * j;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int row = row0 + 8 * half;
                    if (row < m && col < n) {
                        bf16* dst = c + row * ldc + col;
                        const float lo = d[4 * j + 2 * half], hi = d[4 * j + 2 * half + 1];
                        if (col + 1 < n)
                            *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(lo, hi);
                        else
                            *dst = __float2bfloat16_rn(lo);
                    }
                }
            }
        }
    }
    // No CTA of a cluster leaves while its peer may still arrive on its barriers.
    if constexpr (CLUSTER > 1) cluster_sync();
#endif
}

// ===========================================================================
// 2. gemm_bf16_mma_sync (sm_80 design, runs on sm_90)
// ===========================================================================
//
// Design:
// - Block tile 128 x 256 x 64 (BM x BN x BK), 256 threads = 8 warps as 2 (M) x 4
//   (N); warp (wm, wn) = (warp / 4, warp % 4) owns the 64 x 64 sub-tile at rows
//   64 wm, columns 64 wn: 4 x 8 mma tiles of 16 x 8, 128 f32 accumulators a thread.
// - Grid: one block per tile, 1-D, tiles in the grouped order of tile_coords.
// - Shared memory: a ring of MS_STAGES = 4 stages of A (128 rows x 128 bytes) and
//   B (256 rows x 128 bytes), 48 KiB a stage. 16-byte chunk j of row r is stored
//   at chunk j ^ (r % 8) of that row: ldmatrix's 8 rows of one chunk then hit 8
//   different bank groups, and so do cp.async's 8 chunks of one row.
// - Loads: cp.async.cg 16 bytes (L2 only); chunk i = t + 256 q of the stage
//   (row i / 8, chunk i % 8): 4 chunks of A and 8 of B per thread. A chunk that
//   reaches past K or a row past M/N has its src-size cut to the valid bytes
//   (0 to 16): the rest is zero-filled.
// - Pipeline (one __syncthreads a k-block): prologue loads stages 0..2; at k-block
//   kb: wait until at most 2 groups are pending (stage kb has landed),
//   __syncthreads, issue the loads of k-block kb + 3 into stage (kb + 3) % 4
//   (freed by k-block kb - 1, which every warp finished before the barrier),
//   commit, then compute stage kb % 4: for each 16-wide K slice kk (4 of them):
//     A fragments: 4 x ldmatrix.x4 (m-tile i: lane l addresses row 64 wm + 16 i + l % 16,
//       chunk 2 kk + l / 16), giving a0..a3 of mma's A operand;
//     B fragments: 4 x ldmatrix.x4 (n-tiles 2p, 2p+1: lane l addresses B row
//       64 wn + 16 p + 8 (l / 16) + l % 8, chunk 2 kk + (l / 8) % 2), giving
//       b0, b1 of n-tile 2p then of 2p + 1 (B is K-major: no .trans needed);
//     32 x mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32.
// - Store: thread (lane l) holds, for m-tile i and n-tile j, c0, c1 at (row
//   16 i + l / 4, col 8 j + 2 (l % 4) + {0, 1}) of its warp's sub-tile and c2, c3
//   8 rows lower; bf16x2 stores, guarded as in the wgmma kernel.

constexpr int MS_BM = 128, MS_BN = 256, MS_BK = 64, MS_STAGES = 4, MS_THREADS = 256;
constexpr int MS_A_BYTES = MS_BM * MS_BK * 2, MS_B_BYTES = MS_BN * MS_BK * 2;
constexpr int MS_STAGE_BYTES = MS_A_BYTES + MS_B_BYTES;
constexpr int MS_SMEM_BYTES = MS_STAGES * MS_STAGE_BYTES;

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of 128-byte rows.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

// Queues the cp.async copies of k-block kb of the tile into stage `stage`.
__device__ __forceinline__ void ms_load_stage(uint32_t stage_base, const bf16* __restrict__ a,
                                              const bf16* __restrict__ b, int m, int n, int k, int lda, int ldb,
                                              int row_a0, int row_b0, int kb, int t) {
    const int k0 = kb * MS_BK;
#pragma unroll
    for (int q = 0; q < MS_BM * 8 / MS_THREADS; ++q) {
        const int i = t + q * MS_THREADS, row = i / 8, chunk = i % 8;
        const int gr = row_a0 + row, gk = k0 + chunk * 8;
        const int valid = (gr < m) ? max(0, min(8, k - gk)) : 0;
        cp_async_16(stage_base + swizzled(row, chunk), valid > 0 ? a + gr * lda + gk : a, valid * 2);
    }
#pragma unroll
    for (int q = 0; q < MS_BN * 8 / MS_THREADS; ++q) {
        const int i = t + q * MS_THREADS, row = i / 8, chunk = i % 8;
        const int gr = row_b0 + row, gk = k0 + chunk * 8;
        const int valid = (gr < n) ? max(0, min(8, k - gk)) : 0;
        cp_async_16(stage_base + MS_A_BYTES + swizzled(row, chunk), valid > 0 ? b + gr * ldb + gk : b, valid * 2);
    }
}

__global__ void __launch_bounds__(MS_THREADS, 1)
    gemm_bf16_mma_sync(const bf16* __restrict__ a, const bf16* __restrict__ b, bf16* __restrict__ c, int m, int n,
                       int k, int lda, int ldb, int ldc, int group_m) {
    extern __shared__ __align__(128) uint8_t ms_smem[];
    const uint32_t ring = smem_u32(ms_smem);
    const int t = threadIdx.x, warp = t / 32, lane = t % 32, wm = warp / 4, wn = warp % 4;
    const int tiles_m = (m + MS_BM - 1) / MS_BM, tiles_n = (n + MS_BN - 1) / MS_BN;
    int tile_m, tile_n;
    tile_coords(blockIdx.x, tiles_m, tiles_n, group_m, tile_m, tile_n);
    const int row_a0 = tile_m * MS_BM, row_b0 = tile_n * MS_BN;
    const int k_blocks = (k + MS_BK - 1) / MS_BK;

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
    for (int s = 0; s < MS_STAGES - 1; ++s) {
        if (s < k_blocks) ms_load_stage(ring + s * MS_STAGE_BYTES, a, b, m, n, k, lda, ldb, row_a0, row_b0, s, t);
        cp_async_commit();
    }

    for (int kb = 0; kb < k_blocks; ++kb) {
        cp_async_wait<MS_STAGES - 2>();
        __syncthreads();
        const int next = kb + MS_STAGES - 1;
        if (next < k_blocks)
            ms_load_stage(ring + (next % MS_STAGES) * MS_STAGE_BYTES, a, b, m, n, k, lda, ldb, row_a0, row_b0, next,
                          t);
        cp_async_commit();

        const uint32_t sa = ring + (kb % MS_STAGES) * MS_STAGE_BYTES, sb = sa + MS_A_BYTES;
#pragma unroll
        for (int kk = 0; kk < MS_BK / 16; ++kk) {
            uint32_t af[4][4], bfr[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrix_x4(af[i], sa + swizzled(wm * 64 + i * 16 + lane % 16, 2 * kk + lane / 16));
#pragma unroll
            for (int p = 0; p < 4; ++p)
                ldmatrix_x4(bfr[p], sb + swizzled(wn * 64 + p * 16 + 8 * (lane / 16) + lane % 8, 2 * kk + (lane / 8) % 2));
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    mma_m16n8k16_bf16(acc[i][j], af[i], bfr[j / 2][2 * (j % 2)], bfr[j / 2][2 * (j % 2) + 1]);
        }
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int col = row_b0 + wn * 64 + j * 8 + 2 * (lane % 4);
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = row_a0 + wm * 64 + i * 16 + lane / 4 + 8 * half;
                if (row < m && col < n) {
                    bf16* dst = c + row * ldc + col;
                    if (col + 1 < n)
                        *reinterpret_cast<__nv_bfloat162*>(dst) =
                            __floats2bfloat162_rn(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
                    else
                        *dst = __float2bfloat16_rn(acc[i][j][2 * half]);
                }
            }
        }
}

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
    std::string name() const {
        char s[64];
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

    auto problem = [](int m, int n, int k) { return Problem{m, n, k, round_up(k, 8), round_up(k, 8), round_up(n, 8)}; };
    if (quick) {
        bench_problem(problem(520, 777, 333), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(128, 256, 64), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(1, 1, 1), true, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(1000, 1100, 700), true, sms, 3, stream, handle, hopper, clusters_on);  // 3 CTAs loop over the tiles
    } else {
        bench_problem(problem(8192, 8192, 8192), false, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(4096, 4096, 4096), false, sms, 0, stream, handle, hopper, clusters_on);
        bench_problem(problem(4099, 4097, 4095), false, sms, 0, stream, handle, hopper, clusters_on);
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
