//! The five classic CUDA kernels of issue 9's benchmark, written with no
//! `unsafe` in their bodies: the same algorithms and launch shapes as the
//! CUDA C versions in `benches/cuda/kernels.cu`.
//!
//! - [`matmul_tiled`]: `C = A * B` in `f32` through 16 x 16 shared tiles;
//! - [`jacobi5`]: one 2-D 5-point Jacobi step, on 32-bit matrix views;
//! - [`histogram256`]: 256 bins privatised per block in shared atomics;
//! - [`transpose_32x32`] and [`transpose_32x8`]: a transpose through a
//!   padded 32 x 33 shared tile, one or four elements per thread (the
//!   first on 32-bit matrix views);
//! - [`stencil1d_r4`]: a 1-D stencil of radius 4 with a shared halo.
//!
//! Each kernel declares the block shape it is benchmarked with
//! (`#[kernel(block = ...)]`), so the launcher refuses any other. Each one that
//! assumes it a block shape checks it first
//! ([`Block::require_shape`](gpu_device::Block::require_shape)) and panics (a
//! trap on the GPU, a report on the simulator) when the launch differs: a
//! wrong shape is an error, never a silently wrong result. Inputs read as
//! matrices go through [`Slice2d`](gpu_device::Slice2d) or
//! [`Slice2dU32`](gpu_device::Slice2dU32), which check each axis, so the kernels' own range tests are the only bounds checks.

mod histogram;
mod matrix;
mod stencil;

pub use histogram::histogram256;
pub use matrix::{matmul_tiled, transpose_32x32, transpose_32x8, MATMUL_TILE, TRANSPOSE_TILE};
pub use stencil::{jacobi5, stencil1d_r4, StencilWeights, STENCIL_BLOCK, STENCIL_RADIUS};
