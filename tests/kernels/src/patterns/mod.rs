//! The Rust ports of the CUDA C kernels of issue #20's benchmark table
//! (`benches/cuda/patterns.cu`, specified in `benches/cuda/KERNELS.md`):
//! the same algorithm, tiles, launch shape and per-thread ownership, with
//! no `unsafe`. `benches/patterns.rs` times them beside their twins.
//!
//! - [`softmax`]: row softmax, narrow (`float4` runs, 128 threads) and wide
//!   (fused, 256 threads, 17 columns a thread), one block per row on a 1-D
//!   grid;
//! - [`sgemm`]: SGEMM with 4 x 4 and 8 x 8 register tiles, double-buffered
//!   shared tiles with one barrier per k-tile (gpu-ops', which
//!   `gpu_ops::matmul` runs for f32; re-exported here);
//! - [`conv`]: 5 x 5 convolution with a by-value filter, a 36 x 36 halo
//!   tile, the 25 taps unrolled, 4 outputs a thread;
//! - [`layernorm`]: layer norm, one block per row, two passes over
//!   registers;
//! - [`scan`]: exclusive scan of `u32` in three kernels (tile scans, the
//!   tile sums' scan, add back); the single-pass scan is `gpu_ops::scan`.
//!
//! And issue #22's tensor-core GEMMs (`benches/cuda/gemm_tc.cu`, timed by
//! `benches/gemm.rs`): [`gemm_tc`], `mma.sync` fed by a `cp.async` ring
//! (sm_80 and later; gpu-ops', which `gpu_ops::matmul` runs for bf16;
//! re-exported here), and [`gemm_wgmma`] (sm_90a; gpu-ops', re-exported here), which shares
//! its loads.

pub mod collectives;
pub mod conv;
// sm_80's: in the PTX of sm_80 and sm_90a only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use gpu_ops::matmul::gemm_tc;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use gpu_ops::matmul::gemm_wgmma;
pub mod layernorm;
pub mod scan;
pub use gpu_ops::matmul::sgemm;
pub mod softmax;
