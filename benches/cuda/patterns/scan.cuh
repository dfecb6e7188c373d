// Exclusive scan of u32: scan-then-propagate, reduce-then-scan, decoupled look-back.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include "collectives.cuh"

// ===========================================================================
// 1. Exclusive scan, u32
// ===========================================================================
//
// Common tile design: 256 threads, 16 items a thread, tiles of 4096 items.
// Thread t owns the 16 consecutive items [16 t, 16 t + 16) of its tile ("blocked"
// arrangement): it loads them as four 16-byte vectors (a full tile: the tile
// start is a multiple of 4096 items, so the vectors are aligned), or item by
// item with a bound check in the last, partial tile (0 past n). It scans them
// sequentially (exclusive, keeping its total), the block scans the 256 totals
// (block_exclusive_scan), and each item gets its thread's prefix added.

constexpr int SCAN_THREADS = 256, SCAN_ITEMS = 16, SCAN_TILE = SCAN_THREADS * SCAN_ITEMS;
constexpr int SUMS_THREADS = 1024;  // the single block that scans the tile sums

__device__ __forceinline__ void load_tile_items(const uint32_t* __restrict__ in, int n, int tile,
                                                uint32_t (&v)[SCAN_ITEMS]) {
    const int first = tile * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    if (first + SCAN_ITEMS <= n) {
        const uint4* src = reinterpret_cast<const uint4*>(in + first);
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
            const uint4 x = __ldg(src + q);
            v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; ++i) v[i] = first + i < n ? in[first + i] : 0u;
    }
}

__device__ __forceinline__ void store_tile_items(uint32_t* __restrict__ out, int n, int tile,
                                                 const uint32_t (&v)[SCAN_ITEMS]) {
    const int first = tile * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    if (first + SCAN_ITEMS <= n) {
        uint4* dst = reinterpret_cast<uint4*>(out + first);
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q)
            dst[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
    } else {
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; ++i)
            if (first + i < n) out[first + i] = v[i];
    }
}

// Exclusive scan of the thread's items in place; returns their total.
__device__ __forceinline__ uint32_t thread_exclusive_scan(uint32_t (&v)[SCAN_ITEMS]) {
    uint32_t running = 0;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        const uint32_t x = v[i];
        v[i] = running;
        running += x;
    }
    return running;
}

// (a1) Scan of each tile on its own: out = the tile-local exclusive scan, and
// thread 0 (the block's leader) writes the tile's total to tile_sums[tile].
// Grid: one block per tile.
__global__ void __launch_bounds__(SCAN_THREADS) scan_tiles_local(const uint32_t* __restrict__ in,
                                                                 uint32_t* __restrict__ out,
                                                                 uint32_t* __restrict__ tile_sums, int n) {
    __shared__ uint32_t slots[SCAN_THREADS / 32];
    uint32_t v[SCAN_ITEMS];
    load_tile_items(in, n, blockIdx.x, v);
    const uint32_t mine = thread_exclusive_scan(v);
    uint32_t total;
    const uint32_t prefix = block_exclusive_scan<SCAN_THREADS / 32>(mine, slots, total);
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) v[i] += prefix;
    store_tile_items(out, n, blockIdx.x, v);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// (a2, b2) Exclusive scan of the `count` tile sums in place, by one block of
// 1024 threads: chunks of 1024 x 16, each thread 16 consecutive sums, a running
// carry between chunks (thread 0 writes it to shared memory after the chunk).
__global__ void __launch_bounds__(SUMS_THREADS) scan_tile_sums(uint32_t* __restrict__ sums, int count) {
    __shared__ uint32_t slots[SUMS_THREADS / 32];
    uint32_t carry = 0;
    for (int base = 0; base < count; base += SUMS_THREADS * SCAN_ITEMS) {
        const int first = base + threadIdx.x * SCAN_ITEMS;
        uint32_t v[SCAN_ITEMS];
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; ++i) v[i] = first + i < count ? sums[first + i] : 0u;
        const uint32_t mine = thread_exclusive_scan(v);
        uint32_t total;
        const uint32_t prefix = block_exclusive_scan<SUMS_THREADS / 32>(mine, slots, total) + carry;
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; ++i)
            if (first + i < count) sums[first + i] = v[i] + prefix;
        carry += total;
        __syncthreads();  // the slots are rewritten by the next chunk's scan
    }
}

// (a3) Adds tile_sums[tile] (now exclusive) to every item of the tile: the same
// ownership as the tile kernels, 16-byte vectors in full tiles.
__global__ void __launch_bounds__(SCAN_THREADS) add_tile_offsets(uint32_t* __restrict__ out,
                                                                 const uint32_t* __restrict__ tile_sums, int n) {
    const uint32_t offset = __ldg(&tile_sums[blockIdx.x]);
    const int first = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    if (first + SCAN_ITEMS <= n) {
        uint4* p = reinterpret_cast<uint4*>(out + first);
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
            uint4 x = p[q];
            x.x += offset, x.y += offset, x.z += offset, x.w += offset;
            p[q] = x;
        }
    } else {
        for (int i = 0; i < SCAN_ITEMS; ++i)
            if (first + i < n) out[first + i] += offset;
    }
}

// (b1) Sum of each tile: thread sums its 16 items, block sum, thread 0 writes it.
__global__ void __launch_bounds__(SCAN_THREADS) reduce_tiles(const uint32_t* __restrict__ in,
                                                             uint32_t* __restrict__ tile_sums, int n) {
    __shared__ uint32_t slots[SCAN_THREADS / 32];
    uint32_t v[SCAN_ITEMS];
    load_tile_items(in, n, blockIdx.x, v);
    uint32_t mine = 0;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) mine += v[i];
    mine = warp_sum_u32(mine);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t total = 0;
#pragma unroll
        for (int w = 0; w < SCAN_THREADS / 32; ++w) total += slots[w];
        tile_sums[blockIdx.x] = total;
    }
}

// (b3) Scan of each tile starting from its exclusive tile sum.
__global__ void __launch_bounds__(SCAN_THREADS) scan_tiles_from_sums(const uint32_t* __restrict__ in,
                                                                     uint32_t* __restrict__ out,
                                                                     const uint32_t* __restrict__ tile_sums, int n) {
    __shared__ uint32_t slots[SCAN_THREADS / 32];
    uint32_t v[SCAN_ITEMS];
    load_tile_items(in, n, blockIdx.x, v);
    const uint32_t mine = thread_exclusive_scan(v);
    uint32_t total;
    const uint32_t prefix = block_exclusive_scan<SCAN_THREADS / 32>(mine, slots, total) + __ldg(&tile_sums[blockIdx.x]);
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) v[i] += prefix;
    store_tile_items(out, n, blockIdx.x, v);
}

// (c) Single-pass scan with decoupled look-back (Merrill & Garland), the
// design of the Rust kernel `gpu_ops::scan::scan_tiles` line by line (and of
// CUB's tuning for 4-byte sums on sm_90: 128 threads, 24 items a thread):
// - Tile order: thread 0 takes the next tile index from a global counter
//   (atomicAdd), so a tile is only started once every earlier tile has been
//   started by a block already running: the look-back never waits on a block
//   that cannot run. The counter and the status words are zeroed before each
//   launch (cudaMemsetAsync, part of the timed work, as CUB's init kernel).
// - Tiles of 3072 u32 for 128 threads: warp w owns the 768 consecutive items
//   from 768 w; lane l owns six runs of four, runs l + 32 k (k < 6): each of
//   a warp's six 16-byte loads (and stores) is 512 contiguous bytes. A lane
//   scans each run; the warp scans the six run totals row by row (shuffle-up
//   scans; a row is the warp's k-th runs, in lane order); lane 0 writes the
//   warp's total; one barrier; each thread combines the four warp totals.
// - Status of tile i: one 64-bit word, flag << 32 | value, relaxed gpu-scope
//   64-bit accesses (flag and value travel together): flag 0 = empty, 1 =
//   value is the tile's aggregate, 2 = value is the inclusive prefix. The
//   aggregate (tile 0: its prefix) is published by compare-and-swap from
//   empty (the Rust side's proof that one block owns the tile; a word that is
//   not empty traps).
// - Warp 0 looks back over windows of 32 predecessors (lane l reads tile - 1
//   - l; an index below 0 reads as a prefix): in grids of 500 blocks or more
//   it first sleeps 1245 ns (CUB's tuned delay), then each lane re-reads its
//   word while it is empty (sleeping 32, 64, ... up to 640 ns between reads;
//   CUB re-reads the whole window while any lane sees an empty word); the lanes up to the nearest prefix are combined earliest tile
//   first (shuffles down, distances 1, 2, 4, ...); lane 0 publishes the
//   inclusive prefix and shares the exclusive one through shared memory
//   (one more barrier).
constexpr int LB_THREADS = 128, LB_RUN = 4, LB_RUNS = 6;
constexpr int LB_WARP_ITEMS = 32 * LB_RUN * LB_RUNS, LB_TILE = LB_THREADS * LB_RUN * LB_RUNS;
constexpr uint32_t FLAG_AGGREGATE = 1, FLAG_PREFIX = 2;
constexpr unsigned LB_LARGE_GRID = 500, LB_FIRST_READ_DELAY_NS = 1245, LB_MAX_POLL_DELAY_NS = 640;

__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_status(unsigned long long* p, uint32_t flag, uint32_t value) {
    const unsigned long long v = ((unsigned long long)flag << 32) | value;
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ bool fill_empty_status(unsigned long long* p, uint32_t flag, uint32_t value) {
    const unsigned long long v = ((unsigned long long)flag << 32) | value;
    unsigned long long old;
    asm volatile("atom.relaxed.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(0ull), "l"(v) : "memory");
    return old == 0;
}

// The look-back of tile `tile` (> 0) by warp 0: returns the exclusive prefix
// in lane 0, after publishing the inclusive one.
__device__ __forceinline__ uint32_t look_back(unsigned long long* status, int tile, uint32_t aggregate, int lane) {
    if (gridDim.x >= LB_LARGE_GRID) __nanosleep(LB_FIRST_READ_DELAY_NS);
    uint32_t exclusive = 0;
    for (int end = tile;; end -= 32) {
        const int pred = end - 1 - lane;
        auto read = [&] {
            return pred >= 0 ? load_status(&status[pred]) : ((unsigned long long)FLAG_PREFIX << 32);
        };
        unsigned long long s = read();
        unsigned pause = 32;
        while ((s >> 32) == 0) {  // each lane waits for its own word
            __nanosleep(pause);
            pause = min(pause * 2, LB_MAX_POLL_DELAY_NS);
            s = read();
        }
        const unsigned prefixes = __ballot_sync(FULL_MASK, (s >> 32) == FLAG_PREFIX);
        const int stop = prefixes ? __ffs(prefixes) - 1 : 31;  // the nearest inclusive prefix
        uint32_t v = (uint32_t)s;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const uint32_t other = __shfl_down_sync(FULL_MASK, v, d);
            if (lane + d <= stop) v = other + v;
        }
        exclusive = v + exclusive;
        if (prefixes) break;
    }
    if (lane == 0) store_status(&status[tile], FLAG_PREFIX, exclusive + aggregate);
    return exclusive;
}

__global__ void __launch_bounds__(LB_THREADS) scan_lookback(const uint32_t* __restrict__ in,
                                                            uint32_t* __restrict__ out, int n,
                                                            unsigned long long* __restrict__ status,
                                                            unsigned* __restrict__ tile_counter) {
    __shared__ uint32_t warp_totals[LB_THREADS / 32];
    __shared__ uint32_t claim_slot, prefix_slot;
    if (threadIdx.x == 0) claim_slot = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const int tile = claim_slot;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long base = (long long)tile * LB_TILE + warp * LB_WARP_ITEMS;
    uint32_t run[LB_RUNS][LB_RUN], totals[LB_RUNS];
#pragma unroll
    for (int k = 0; k < LB_RUNS; ++k) {
        const long long start = base + LB_RUN * (lane + 32 * k);
        if (start + LB_RUN <= n) {
            const uint4 x = __ldg(reinterpret_cast<const uint4*>(in + start));
            run[k][0] = x.x, run[k][1] = x.y, run[k][2] = x.z, run[k][3] = x.w;
        } else {
#pragma unroll
            for (int i = 0; i < LB_RUN; ++i) run[k][i] = start + i < n ? in[start + i] : 0u;
        }
#pragma unroll
        for (int i = 1; i < LB_RUN; ++i) run[k][i] += run[k][i - 1];  // inclusive within the run
        totals[k] = run[k][LB_RUN - 1];
    }
    uint32_t before_row[LB_RUNS], row_start = 0;
#pragma unroll
    for (int k = 0; k < LB_RUNS; ++k) {
        uint32_t inclusive = totals[k];
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const uint32_t y = __shfl_up_sync(FULL_MASK, inclusive, d);
            if (lane >= d) inclusive += y;
        }
        const uint32_t row_total = __shfl_sync(FULL_MASK, inclusive, 31);
        before_row[k] = row_start + (inclusive - totals[k]);
        row_start += row_total;
    }
    if (lane == 0) warp_totals[warp] = row_start;
    __syncthreads();
    uint32_t before_warp = 0, aggregate = 0;
#pragma unroll
    for (int w = 0; w < LB_THREADS / 32; ++w) {
        if (w == warp) before_warp = aggregate;
        aggregate += warp_totals[w];
    }
    if (warp == 0) {
        if (lane == 0 && !fill_empty_status(&status[tile], tile == 0 ? FLAG_PREFIX : FLAG_AGGREGATE, aggregate))
            __trap();  // the tile was claimed twice, or the words were not zeroed
        if (tile > 0) {
            const uint32_t exclusive = look_back(status, tile, aggregate, lane);
            if (lane == 0) prefix_slot = exclusive;
        }
    }
    __syncthreads();
    const uint32_t prefix = (tile > 0 ? prefix_slot : 0u) + before_warp;
#pragma unroll
    for (int k = 0; k < LB_RUNS; ++k) {
        const uint32_t b = prefix + before_row[k];
        const uint32_t v[LB_RUN] = {b, b + run[k][0], b + run[k][1], b + run[k][2]};
        const long long start = base + LB_RUN * (lane + 32 * k);
        if (start + LB_RUN <= n) {
            *reinterpret_cast<uint4*>(out + start) = make_uint4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
            for (int i = 0; i < LB_RUN; ++i)
                if (start + i < n) out[start + i] = v[i];
        }
    }
}
