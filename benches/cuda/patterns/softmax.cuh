// Row softmax, f32: the narrow (float4) and the wide fused form.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include "collectives.cuh"

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
