//! The Rust ports of the CUDA C kernels of issue #20's benchmark table
//! (`benches/cuda/patterns.cu`, specified in `benches/cuda/KERNELS.md`):
//! the same algorithm, tiles, launch shape and per-thread ownership, with
//! no `unsafe`. `benches/patterns.rs` times them beside their twins.
//!
//! - [`softmax`]: row softmax, narrow (`float4` runs, 128 threads) and wide
//!   (fused, 256 threads, 17 columns a thread), one block per row on a 1-D
//!   grid;
//! - [`sgemm`]: SGEMM with 4 x 4 and 8 x 8 register tiles, double-buffered
//!   shared tiles with one barrier per k-tile;
//! - [`conv`]: 5 x 5 convolution with a by-value filter, a 36 x 36 halo
//!   tile, the 25 taps unrolled, 4 outputs a thread;
//! - [`layernorm`]: layer norm, one block per row, two passes over
//!   registers;
//! - [`scan`]: exclusive scan of `u32` in three kernels (tile scans, the
//!   tile sums' scan, add back); the single-pass scan is `gpu_ops::scan`.

pub mod collectives;
pub mod conv;
pub mod layernorm;
pub mod scan;
pub mod sgemm;
pub mod softmax;
