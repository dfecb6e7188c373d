// gemm_bf16_wgmma: TMA + mbarrier + wgmma, warp-specialized, persistent, optional clusters.
// Part of benches/cuda/gemm_tc.cu (the CUDA C twins of issue #22).
#pragma once
#include <cuda_bf16.h>
#include "ptx.cuh"
#include "tile_order.cuh"

typedef __nv_bfloat16 bf16;

// The wgmma kernel exists only in sm_90a code; elsewhere its body traps (the
// host never launches it on another architecture).
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_UNAVAILABLE 1
#endif

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
//   (neither is ever stored). empty[s] then counts the releases of both CTAs
//   (8 x CONSUMERS arrivals): every consumer warp's lane 0 also arrives on the
//   peer's empty[s] (mapa + mbarrier.arrive.shared::cluster). A cluster barrier
//   follows the barrier initialisation and precedes the exit. The grid is
//   2 x the clusters that fit at once (cudaOccupancyMaxActiveClusters).

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
            const bool ldc_even = (ldc & 1) == 0;
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
    }
    // No CTA of a cluster leaves while its peer may still arrive on its barriers.
    if constexpr (CLUSTER > 1) cluster_sync();
#endif
}
