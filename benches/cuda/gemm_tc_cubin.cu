// The CUDA C twins' GEMM kernels of gemm_tc.cu as a cubin, for benches/gemm.rs
// to load into its own process and launch interleaved with the Rust kernels on
// one stream (its table "twin in this process, interleaved"): the same headers
// and the same template instantiations as gemm_tc.cu, so the same code (the
// kernels' source is gemm_tc/*.cuh, untouched; nothing here is compiled into
// the gemm_tc program). The bench finds each kernel by its C++ name's prefix
// in the cubin's symbols (the full mangled name holds the parameter types).
//
// Build (sm_90a, as gemm_tc.cu; benches/gemm.rs looks for it as
// <helpers dir>/gemm_tc.cubin):
//   nvcc -cubin -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemm_tc.cubin gemm_tc_cubin.cu
#include "gemm_tc/wgmma_gemm.cuh"
#include "gemm_tc/mma_sync_gemm.cuh"

// gemm_tc.cu's "wgmma+TMA 128x256, 2 consumer WGs" (cluster 1). The mma.sync
// kernel, gemm_bf16_mma_sync, is not a template: the header defines it.
template __global__ void gemm_bf16_wgmma<2, 256, 1>(const __grid_constant__ CUtensorMap,
                                                    const __grid_constant__ CUtensorMap, bf16* __restrict__, int,
                                                    int, int, int, int);
