// The grouped tile order both GEMM kernels walk.
// Part of benches/cuda/gemm_tc.cu (the CUDA C twins of issue #22).
#pragma once
#include <cuda_runtime.h>

// Tile t of the grouped order: tiles go down group_m tile-rows, then right.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int group_m, int& tile_m, int& tile_n) {
    const int per_group = group_m * tiles_n;
    const int group = t / per_group;
    const int first_m = group * group_m;
    const int rows = min(tiles_m - first_m, group_m);
    const int in_group = t - group * per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
}
