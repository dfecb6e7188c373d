// Layer norm over rows, f32.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include "collectives.cuh"

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
