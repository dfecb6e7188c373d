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
// Each kernel's comment is the spec for its Rust port; benches/cuda/KERNELS.md
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

#define CHECK_CUBLAS(call)                                                     \
    do {                                                                       \
        cublasStatus_t st_ = (call);                                           \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                    \
            fprintf(stderr, "%s failed: cuBLAS status %d\n", #call, (int)st_); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

constexpr unsigned FULL_MASK = 0xFFFFFFFFu;

// ===========================================================================
// Warp and block collectives.
// ===========================================================================

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(FULL_MASK, x, offset);
    return x;
}
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(FULL_MASK, x, offset));
    return x;
}
__device__ __forceinline__ uint32_t warp_sum_u32(uint32_t x) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(FULL_MASK, x, offset);
    return x;
}

// Block-wide sum / max of one value a thread; every thread gets the result.
// `slots` is WARPS shared floats owned by this call (lane 0 of each warp writes
// its warp's slot); a block that calls twice passes two different arrays.
template <int WARPS>
__device__ __forceinline__ float block_sum(float x, float* slots) {
    x = warp_sum(x);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = x;
    __syncthreads();
    float total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) total += slots[w];
    return total;
}
template <int WARPS>
__device__ __forceinline__ float block_max(float x, float* slots) {
    x = warp_max(x);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = x;
    __syncthreads();
    float total = slots[0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) total = fmaxf(total, slots[w]);
    return total;
}

// Block-wide exclusive scan of one u32 a thread (wrapping sums). Returns the
// thread's exclusive prefix and sets `total` to the block's sum. Warp scan by
// shuffles; lane 31 of each warp (the warp's leader for this) writes the warp's
// total to `slots[warp]`; after one barrier every thread adds up the slots of
// the warps before its own. A second call must be separated by a barrier.
template <int WARPS>
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t x, uint32_t* slots, uint32_t& total) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    uint32_t inclusive = x;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const uint32_t y = __shfl_up_sync(FULL_MASK, inclusive, offset);
        if (lane >= offset) inclusive += y;
    }
    if (lane == 31) slots[warp] = inclusive;
    __syncthreads();
    uint32_t before = 0;
    total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        const uint32_t s = slots[w];
        if (w < warp) before += s;
        total += s;
    }
    return before + inclusive - x;
}

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

__device__ __forceinline__ void load_tile_items(const uint32_t* __restrict__ in, int n, int tile, uint32_t (&v)[SCAN_ITEMS]) {
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

__device__ __forceinline__ void store_tile_items(uint32_t* __restrict__ out, int n, int tile, const uint32_t (&v)[SCAN_ITEMS]) {
    const int first = tile * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    if (first + SCAN_ITEMS <= n) {
        uint4* dst = reinterpret_cast<uint4*>(out + first);
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q) dst[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
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

// ===========================================================================
// 2. Row softmax, f32: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r)
// ===========================================================================
//
// Both forms: one block per row on a 1-D grid (blockIdx.x = row, so up to
// 2^31 - 1 rows; the row's base offset is 64-bit), the row's values kept in
// registers between the passes (the input is read once): block max, then
// exp(x - max) in place and block sum, then x * (1 / sum) stored. exp is
// __expf (ex2.approx of x * log2 e). Reductions: warp shuffles (xor), lane 0
// of each warp writes its warp's slot, one barrier, every thread adds the
// slots; max and sum use separate slot arrays, so 2 barriers a row.

// Narrow: columns a multiple of 4 (rows 16-byte aligned) and at most
// THREADS * VECS * 4. Thread t owns the float4 vectors t + j * THREADS,
// j < VECS (block stride over vectors): columns 4 (t + j THREADS) .. + 3.
// Built as <128, 2>: 1000 columns = 250 vectors (thread t < 122 has two).
template <int THREADS, int VECS>
__global__ void __launch_bounds__(THREADS) softmax_rows_vec4(const float* __restrict__ in, float* __restrict__ out,
                                                             int cols) {
    __shared__ float max_slots[THREADS / 32], sum_slots[THREADS / 32];
    const size_t base = (size_t)blockIdx.x * cols;
    const float4* src = reinterpret_cast<const float4*>(in + base);
    float4* dst = reinterpret_cast<float4*>(out + base);
    const int vectors = cols / 4;
    float4 v[VECS];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        const int i = threadIdx.x + j * THREADS;
        v[j] = i < vectors ? __ldg(src + i) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        mx = fmaxf(mx, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
    }
    mx = block_max<THREADS / 32>(mx, max_slots);
    float sum = 0;
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        v[j].x = __expf(v[j].x - mx), v[j].y = __expf(v[j].y - mx);  // exp(-inf) = 0 for unowned slots
        v[j].z = __expf(v[j].z - mx), v[j].w = __expf(v[j].w - mx);
        sum += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    }
    const float inv = 1.0f / block_sum<THREADS / 32>(sum, sum_slots);
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        const int i = threadIdx.x + j * THREADS;
        if (i < vectors) dst[i] = make_float4(v[j].x * inv, v[j].y * inv, v[j].z * inv, v[j].w * inv);
    }
}

// Wide, fused: any column count up to THREADS * ITEMS (rows need no
// alignment). Thread t owns columns t + j * THREADS, j < ITEMS (block stride);
// a warp's loads and stores of one j are 32 consecutive floats. Built as
// <256, 17>: 4099 columns (thread t < 3 has 17 columns, the others 16).
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) softmax_rows_strided(const float* __restrict__ in,
                                                                float* __restrict__ out, int cols) {
    __shared__ float max_slots[THREADS / 32], sum_slots[THREADS / 32];
    const size_t base = (size_t)blockIdx.x * cols;
    const float* src = in + base;
    float* dst = out + base;
    float v[ITEMS];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int c = threadIdx.x + j * THREADS;
        v[j] = c < cols ? __ldg(src + c) : -INFINITY;
        mx = fmaxf(mx, v[j]);
    }
    mx = block_max<THREADS / 32>(mx, max_slots);
    float sum = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        v[j] = __expf(v[j] - mx);
        sum += v[j];
    }
    const float inv = 1.0f / block_sum<THREADS / 32>(sum, sum_slots);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int c = threadIdx.x + j * THREADS;
        if (c < cols) dst[c] = v[j] * inv;
    }
}

// ===========================================================================
// 3. SGEMM, f32: C (M x N) = A (M x K) * B (K x N), all row-major with leading
// dimensions lda, ldb, ldc that are multiples of 4 (16-byte aligned rows).
// ===========================================================================
//
// Both kernels: 256 threads; A's tile is stored transposed in shared memory
// (As[k][m]) so that a thread reads its rows' values of one k as float4s, B's
// tile as is (Bs[k][n]); two shared buffers: while the block computes from one,
// each thread holds its share of the next tiles in registers (one float4 of A,
// one of B) and stores it to the other buffer, then one barrier. Global loads
// are float4 when the 4 elements are inside the matrix, else element by element
// with zeros outside (rows past M/N, columns past K/N, so the padding columns
// of the leading dimension are never read). C stores are float4 likewise.
// Partial tiles at the edges are handled by those guards alone.

// sgemm_4x4: block tile 64 x 64, BK = 16. Thread t = 16 ty + tx owns the 4 x 4
// tile of C at rows 4 ty .. 4 ty + 3, columns 4 tx .. 4 tx + 3 of the block tile.
// Loads: A row t / 4, columns 4 (t % 4) .. + 3 of the k-tile; B row t / 16,
// columns 4 (t % 16) .. + 3. Per k: As[k][4 ty] and Bs[k][4 tx] as float4, 16 FFMA.
constexpr int S4_BM = 64, S4_BN = 64, S4_BK = 16;

__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ p, int row, int col, int rows, int cols,
                                                int ld) {
    if (row < rows && col + 3 < cols) return __ldg(reinterpret_cast<const float4*>(p + row * ld + col));
    float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
    if (row < rows) {
        const float* q = p + row * ld;
        if (col < cols) r.x = __ldg(q + col);
        if (col + 1 < cols) r.y = __ldg(q + col + 1);
        if (col + 2 < cols) r.z = __ldg(q + col + 2);
    }
    return r;
}

__device__ __forceinline__ void store4_guarded(float* __restrict__ p, int row, int col, int rows, int cols, int ld,
                                               float4 v) {
    if (row >= rows) return;
    float* q = p + row * ld + col;
    if (col + 3 < cols) {
        *reinterpret_cast<float4*>(q) = v;
    } else {
        if (col < cols) q[0] = v.x;
        if (col + 1 < cols) q[1] = v.y;
        if (col + 2 < cols) q[2] = v.z;
    }
}

__global__ void __launch_bounds__(256) sgemm_4x4(const float* __restrict__ a, const float* __restrict__ b,
                                                 float* __restrict__ c, int m, int n, int k, int lda, int ldb,
                                                 int ldc) {
    __shared__ __align__(16) float as[2][S4_BK][S4_BM];
    __shared__ __align__(16) float bs[2][S4_BK][S4_BN];
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int m0 = blockIdx.y * S4_BM, n0 = blockIdx.x * S4_BN;
    const int a_row = t / 4, a_col = (t % 4) * 4;   // within the 64 x 16 A tile
    const int b_row = t / 16, b_col = (t % 16) * 4;  // within the 16 x 64 B tile
    float acc[4][4] = {};

    float4 a_next = load4_guarded(a, m0 + a_row, a_col, m, k, lda);
    float4 b_next = load4_guarded(b, b_row, n0 + b_col, k, n, ldb);
    as[0][a_col][a_row] = a_next.x, as[0][a_col + 1][a_row] = a_next.y;
    as[0][a_col + 2][a_row] = a_next.z, as[0][a_col + 3][a_row] = a_next.w;
    *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = b_next;
    __syncthreads();

    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += S4_BK) {
        const bool more = k0 + S4_BK < k;
        if (more) {
            a_next = load4_guarded(a, m0 + a_row, k0 + S4_BK + a_col, m, k, lda);
            b_next = load4_guarded(b, k0 + S4_BK + b_row, n0 + b_col, k, n, ldb);
        }
#pragma unroll
        for (int kk = 0; kk < S4_BK; ++kk) {
            const float4 av = *reinterpret_cast<const float4*>(&as[buf][kk][4 * ty]);
            const float4 bv = *reinterpret_cast<const float4*>(&bs[buf][kk][4 * tx]);
            const float ar[4] = {av.x, av.y, av.z, av.w}, br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (more) {
            buf ^= 1;
            as[buf][a_col][a_row] = a_next.x, as[buf][a_col + 1][a_row] = a_next.y;
            as[buf][a_col + 2][a_row] = a_next.z, as[buf][a_col + 3][a_row] = a_next.w;
            *reinterpret_cast<float4*>(&bs[buf][b_row][b_col]) = b_next;
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
        store4_guarded(c, m0 + 4 * ty + i, n0 + 4 * tx, m, n, ldc,
                       make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
}

// sgemm_8x8: block tile 128 x 128, BK = 8. Thread t = 16 ty + tx owns an 8 x 8
// tile of C split in four 4 x 4 quarters: rows {4 ty, 64 + 4 ty} + 0..3, columns
// {4 tx, 64 + 4 tx} + 0..3 (a warp's float4 reads of Bs are then 16 distinct
// consecutive vectors, its reads of As 2 broadcast vectors, and its C stores
// 16-float runs). Loads: A row t / 2, columns 4 (t % 2) .. + 3 of the k-tile;
// B row t / 32, columns 4 (t % 32) .. + 3. Per k: 2 + 2 float4 from As/Bs, 64 FFMA.
constexpr int S8_BM = 128, S8_BN = 128, S8_BK = 8;

__global__ void __launch_bounds__(256, 2) sgemm_8x8(const float* __restrict__ a, const float* __restrict__ b,
                                                    float* __restrict__ c, int m, int n, int k, int lda, int ldb,
                                                    int ldc) {
    __shared__ __align__(16) float as[2][S8_BK][S8_BM];
    __shared__ __align__(16) float bs[2][S8_BK][S8_BN];
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int m0 = blockIdx.y * S8_BM, n0 = blockIdx.x * S8_BN;
    const int a_row = t / 2, a_col = (t % 2) * 4;    // within the 128 x 8 A tile
    const int b_row = t / 32, b_col = (t % 32) * 4;  // within the 8 x 128 B tile
    float acc[8][8] = {};

    float4 a_next = load4_guarded(a, m0 + a_row, a_col, m, k, lda);
    float4 b_next = load4_guarded(b, b_row, n0 + b_col, k, n, ldb);
    as[0][a_col][a_row] = a_next.x, as[0][a_col + 1][a_row] = a_next.y;
    as[0][a_col + 2][a_row] = a_next.z, as[0][a_col + 3][a_row] = a_next.w;
    *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = b_next;
    __syncthreads();

    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += S8_BK) {
        const bool more = k0 + S8_BK < k;
        if (more) {
            a_next = load4_guarded(a, m0 + a_row, k0 + S8_BK + a_col, m, k, lda);
            b_next = load4_guarded(b, k0 + S8_BK + b_row, n0 + b_col, k, n, ldb);
        }
#pragma unroll
        for (int kk = 0; kk < S8_BK; ++kk) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&as[buf][kk][4 * ty]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&as[buf][kk][64 + 4 * ty]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&bs[buf][kk][4 * tx]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&bs[buf][kk][64 + 4 * tx]);
            const float ar[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float br[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (more) {
            buf ^= 1;
            as[buf][a_col][a_row] = a_next.x, as[buf][a_col + 1][a_row] = a_next.y;
            as[buf][a_col + 2][a_row] = a_next.z, as[buf][a_col + 3][a_row] = a_next.w;
            *reinterpret_cast<float4*>(&bs[buf][b_row][b_col]) = b_next;
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
        store4_guarded(c, row, n0 + 4 * tx, m, n, ldc, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        store4_guarded(c, row, n0 + 64 + 4 * tx, m, n, ldc, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}

// ===========================================================================
// 4a. 5 x 5 convolution, f32, zero padding ("same" size):
//     out[y][x] = sum_{dy, dx in 0..4} w[dy][dx] * in[y + dy - 2][x + dx - 2]
// ===========================================================================
//
// The filter is a struct passed by value (it lives in the parameter constant
// bank; FFMA reads it from there). Block (32, 8) computes a 32 x 32 output tile;
// thread (tx, ty) owns the 4 outputs at column tx, rows 4 ty .. 4 ty + 3.
// Shared: the 36 x 36 input tile with its 2-wide halo, slot (r, c) holding
// in[y0 - 2 + r][x0 - 2 + c] (0 outside the image). Thread t = 32 ty + tx fills
// slots t, t + 256, ... (slot i = 36 r + c; a warp's loads are consecutive
// columns). After one barrier each thread reads the 8 x 5 window rows
// 4 ty .. 4 ty + 7, columns tx .. tx + 4 (40 loads, a warp reading 32
// consecutive floats each time) and does 4 x 25 FFMA, all unrolled, each
// output's taps in the order dy = 0..4, dx = 0..4.
struct Filter5x5 {
    float w[25];  // w[5 dy + dx]
};
constexpr int CONV_TILE = 32, CONV_R = 2, CONV_SPAN = CONV_TILE + 2 * CONV_R;

__global__ void __launch_bounds__(256) conv2d_5x5(const float* __restrict__ in, float* __restrict__ out, int h, int w,
                                                  Filter5x5 filter) {
    __shared__ float tile[CONV_SPAN][CONV_SPAN];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
    const int x0 = blockIdx.x * CONV_TILE, y0 = blockIdx.y * CONV_TILE;
    for (int i = t; i < CONV_SPAN * CONV_SPAN; i += 256) {
        const int r = i / CONV_SPAN, col = i % CONV_SPAN;
        const int gy = y0 - CONV_R + r, gx = x0 - CONV_R + col;
        tile[r][col] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? __ldg(in + gy * w + gx) : 0.0f;
    }
    __syncthreads();
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int dx = 0; dx < 5; ++dx) {
            const float v = tile[4 * ty + r][tx + dx];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int dy = r - j;
                if (dy >= 0 && dy < 5) acc[j] = fmaf(filter.w[5 * dy + dx], v, acc[j]);
            }
        }
    const int x = x0 + tx;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int y = y0 + 4 * ty + j;
        if (y < h && x < w) out[y * w + x] = acc[j];
    }
}

// ===========================================================================
// 4b. Layer norm over rows, f32: y = (x - mean) / sqrt(var + eps) * gamma + beta
// ===========================================================================
//
// One block per row (1-D grid, 64-bit row base); thread t owns columns
// t + j * THREADS, j < ITEMS, kept in registers: block sum -> mean, block sum
// of (x - mean)^2 -> biased variance (two passes over registers, no
// cancellation), rsqrtf(var + eps), then the affine map with gamma and beta
// (read through the read-only path). Built as <256, 17> for 4099 columns and
// <128, 8> for 1000.
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) layer_norm_rows(const float* __restrict__ in, float* __restrict__ out,
                                                           const float* __restrict__ gamma,
                                                           const float* __restrict__ beta, int cols, float eps) {
    __shared__ float mean_slots[THREADS / 32], var_slots[THREADS / 32];
    const size_t base = (size_t)blockIdx.x * cols;
    float v[ITEMS];
    float sum = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int c = threadIdx.x + j * THREADS;
        v[j] = c < cols ? __ldg(in + base + c) : 0.0f;
        sum += v[j];
    }
    const float mean = block_sum<THREADS / 32>(sum, mean_slots) / cols;
    float squares = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int c = threadIdx.x + j * THREADS;
        const float d = c < cols ? v[j] - mean : 0.0f;
        squares += d * d;
    }
    const float rstd = rsqrtf(block_sum<THREADS / 32>(squares, var_slots) / cols + eps);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int c = threadIdx.x + j * THREADS;
        if (c < cols) out[base + c] = (v[j] - mean) * rstd * __ldg(gamma + c) + __ldg(beta + c);
    }
}

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
    CHECK(cudaMalloc(&status, ((size_t)tiles + 1) * 8));
    int* counter = reinterpret_cast<int*>(status + tiles);
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
             CHECK(cudaMemsetAsync(status, 0, ((size_t)tiles + 1) * 8, stream));
             scan_lookback<<<tiles, SCAN_THREADS, 0, stream>>>(in, out, n, status, counter);
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
                if (!(err <= bound)) bad.report("C[%d][%d] = %.9g, reference %.9g (bound %.3g)", i, j, g, exact[e], bound);
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
             sgemm_4x4<<<dim3(ceil_div(n, S4_BN), ceil_div(m, S4_BM)), 256, 0, stream>>>(a, b, c, m, n, k, lda, ldb, ldc);
             CHECK(cudaGetLastError());
         },
         check("sgemm_4x4"), poison_c},
        {table, "sgemm 128x128x8 tiles, 8x8 per thread", size, flops, true, nullptr,
         [&] {
             sgemm_8x8<<<dim3(ceil_div(n, S8_BN), ceil_div(m, S8_BM)), 256, 0, stream>>>(a, b, c, m, n, k, lda, ldb, ldc);
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
    Case c{"5x5 convolution and layer norm, f32 (issue #20)", "conv2d 5x5, 32x32 tile + halo in shared, 4 outputs a thread",
           std::to_string(h) + " x " + std::to_string(w), 2.0 * cells * 4, false, nullptr,
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
