// 5 x 5 convolution, f32, the filter a by-value struct parameter.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include <cuda_runtime.h>

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
