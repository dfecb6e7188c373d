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

// (c) Single-pass scan with decoupled look-back (Merrill & Garland).
// - Tile order: thread 0 takes the next tile index from a global counter
//   (atomicAdd), so a tile is only started once every earlier tile has been
//   started by a block already running: the look-back never waits on a block
//   that cannot run. The counter and the status words are zeroed before each
//   launch (cudaMemsetAsync, part of the timed work, as CUB's init kernel).
// - Status of tile i: one 64-bit word, flag << 32 | value, written and read
//   with relaxed gpu-scope 64-bit accesses (flag and value travel together):
//   flag 0 = nothing yet, 1 = value is the tile's aggregate, 2 = value is the
//   inclusive prefix (everything up to and including tile i).
// - After its block scan a tile publishes its aggregate (tile 0: its inclusive
//   prefix). Warp 0 then looks back over windows of 32 predecessors: lane l
//   reads tile - 1 - l (an index below 0 reads as "prefix 0"); while any lane
//   sees flag 0 the window is read again; then the lanes up to the nearest
//   flag-2 lane add their values (warp sum); without a flag-2 lane the window
//   moves 32 tiles back. Lane 0 publishes the inclusive prefix (exclusive +
//   aggregate) and shares the exclusive prefix with the block.
constexpr uint32_t FLAG_AGGREGATE = 1, FLAG_PREFIX = 2;

__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_status(unsigned long long* p, uint32_t flag, uint32_t value) {
    const unsigned long long v = ((unsigned long long)flag << 32) | value;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void __launch_bounds__(SCAN_THREADS) scan_lookback(const uint32_t* __restrict__ in,
                                                              uint32_t* __restrict__ out, int n,
                                                              unsigned long long* __restrict__ status,
                                                              int* __restrict__ tile_counter) {
    __shared__ uint32_t slots[SCAN_THREADS / 32];
    __shared__ int tile_slot;
    __shared__ uint32_t exclusive_slot;
    if (threadIdx.x == 0) tile_slot = atomicAdd(tile_counter, 1);
    __syncthreads();
    const int tile = tile_slot;
    uint32_t v[SCAN_ITEMS];
    load_tile_items(in, n, tile, v);
    const uint32_t mine = thread_exclusive_scan(v);
    uint32_t aggregate;
    const uint32_t prefix = block_exclusive_scan<SCAN_THREADS / 32>(mine, slots, aggregate);
    if (threadIdx.x == 0) store_status(&status[tile], tile == 0 ? FLAG_PREFIX : FLAG_AGGREGATE, aggregate);
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        uint32_t exclusive = 0;
        if (tile > 0) {
            for (int window = tile - 1;; window -= 32) {
                const int pred = window - lane;
                unsigned long long s;
                do {
                    s = pred >= 0 ? load_status(&status[pred]) : ((unsigned long long)FLAG_PREFIX << 32);
                } while (__any_sync(FULL_MASK, (s >> 32) == 0));
                const unsigned prefixes = __ballot_sync(FULL_MASK, (s >> 32) == FLAG_PREFIX);
                const int stop = prefixes ? __ffs(prefixes) - 1 : 31;  // the nearest inclusive prefix
                exclusive += warp_sum_u32(lane <= stop ? (uint32_t)s : 0u);
                if (prefixes) break;
            }
            if (lane == 0) store_status(&status[tile], FLAG_PREFIX, exclusive + aggregate);
        }
        if (lane == 0) exclusive_slot = exclusive;
    }
    __syncthreads();
    const uint32_t offset = prefix + exclusive_slot;
#pragma unroll
    for (int i = 0; i < SCAN_ITEMS; ++i) v[i] += offset;
    store_tile_items(out, n, tile, v);
}
