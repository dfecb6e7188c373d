// gemm_bf16_mma_sync: cp.async + ldmatrix + mma.sync, the sm_80 design.
// Part of benches/cuda/gemm_tc.cu (the CUDA C twins of issue #22).
#pragma once
#include <cuda_bf16.h>
#include "ptx.cuh"
#include "tile_order.cuh"

typedef __nv_bfloat16 bf16;

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
                ldmatrix_x4(bfr[p],
                            sb + swizzled(wn * 64 + p * 16 + 8 * (lane / 16) + lane % 8, 2 * kk + (lane / 8) % 2));
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    mma_m16n8k16_bf16(acc[i][j], af[i], bfr[j / 2][2 * (j % 2)], bfr[j / 2][2 * (j % 2) + 1]);
        }
    }
    cp_async_wait<0>();

    const bool ldc_even = (ldc & 1) == 0;
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
                    const float lo = acc[i][j][2 * half], hi = acc[i][j][2 * half + 1];
                    // col is even: the pair is 4-byte aligned where ldc or row is even.
                    if (col + 1 < n && (ldc_even || (row & 1) == 0)) {
                        *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(lo, hi);
                    } else {
                        dst[0] = __float2bfloat16_rn(lo);
                        if (col + 1 < n) dst[1] = __float2bfloat16_rn(hi);
                    }
                }
            }
        }
}
