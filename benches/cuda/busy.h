// The Day 7 pipeline's kernel, shared by the CUDA C pipelines (pipeline.cu,
// multi_gpu_pipeline.cu): `rounds` fused multiply-adds per element, the same
// arithmetic as the Rust kernel `gpu_kernels::busy`.
#pragma once
#include <cmath>
#include <cstddef>

__global__ void busy(const float* x, unsigned rounds, float* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (unsigned r = 0; r < rounds; ++r) v = __fmaf_rn(v, 0.999f, 0.001f);
        out[i] = v;
    }
}

// What `busy` makes of `v`, on the CPU (fmaf rounds once, as __fmaf_rn).
static inline float busy_reference(float v, unsigned rounds) {
    for (unsigned r = 0; r < rounds; ++r) v = fmaf(v, 0.999f, 0.001f);
    return v;
}
