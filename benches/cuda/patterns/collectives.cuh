// Warp and block collectives (sum, max, exclusive scan) shared by the pattern kernels.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

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
