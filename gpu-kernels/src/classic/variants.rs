//! Candidate forms of [`jacobi5`](super::jacobi5) and
//! [`transpose_32x32`](super::transpose_32x32), each a complete kernel with
//! no `unsafe` in its body, run by the benchmark beside the kernel they may
//! replace (`KERNEL_VARIANTS=1 kernels`) and tested against the same CPU
//! references. Each one changes one thing, named by its suffix:
//!
//! - `_interior`: the 5-point stencil's neighbours through
//!   [`Slice2d::interior`] (one interior test, then loads at fixed distances
//!   from the element, with no bounds check);
//! - `_u32`: the matrices as [`DisjointSlice2dU32`] and [`Slice2dU32`]
//!   (32-bit extents and offsets, widened once; the launcher refuses a
//!   matrix of more than `u32::MAX` elements), with the interior witness
//!   for the Jacobi step;
//! - `_u32_block`: `_u32` with the launch's block shape declared, `(32, 8)`,
//!   as the benchmark launches it (the launcher refuses any other).

use super::TRANSPOSE_TILE;
use gpu_device::prelude::*;

/// [`jacobi5`](super::jacobi5) reading the neighbours through
/// [`Slice2d::interior`]. Launch as `jacobi5`.
#[kernel]
pub fn jacobi5_interior(input: &[f32], mut out: DisjointSlice2d<f32>) {
    let i = thread_index_2d();
    let (x, y) = (i.x(), i.y());
    if x < out.cols() && y < out.rows() {
        let input = Slice2d::with_shape(input, out.shape());
        let v = match input.interior(y, x) {
            Some(n) => 0.25 * ((n.up() + n.down()) + (n.left() + n.right())),
            None => input[(y, x)],
        };
        out.set(i, v);
    }
}

/// [`jacobi5`](super::jacobi5) on a grid of at most `u32::MAX` points,
/// indexed in 32 bits, its neighbours read through
/// [`Slice2dU32::interior`]. Launch as `jacobi5`; a larger grid is a launch
/// error naming `out`.
#[kernel]
pub fn jacobi5_u32(input: &[f32], mut out: DisjointSlice2dU32<f32>) {
    let i = thread_index_2d();
    if let Some((y, x)) = out.position(i) {
        let input = Slice2dU32::with_shape(input, out.shape());
        let v = match input.interior(y, x) {
            Some(n) => 0.25 * ((n.up() + n.down()) + (n.left() + n.right())),
            None => input[(y, x)],
        };
        out.set(i, v);
    }
}

/// [`jacobi5_u32`] declared with blocks of `(32, 8)` threads, the only
/// shape it runs in.
#[kernel(block = (32, 8))]
pub fn jacobi5_u32_block(input: &[f32], mut out: DisjointSlice2dU32<f32>) {
    let i = thread_index_2d();
    if let Some((y, x)) = out.position(i) {
        let input = Slice2dU32::with_shape(input, out.shape());
        let v = match input.interior(y, x) {
            Some(n) => 0.25 * ((n.up() + n.down()) + (n.left() + n.right())),
            None => input[(y, x)],
        };
        out.set(i, v);
    }
}

/// [`transpose_32x32`](super::transpose_32x32) on matrices of at most
/// `u32::MAX` elements, indexed in 32 bits. Launch as `transpose_32x32`; a
/// larger matrix is a launch error naming `out`.
#[kernel(block = (TRANSPOSE_TILE, TRANSPOSE_TILE))]
pub fn transpose_32x32_u32(input: &[f32], mut out: DisjointSlice2dU32<f32>, block: Block) {
    const T: u32 = TRANSPOSE_TILE as u32;
    let block = block.require_shape(T, T, 1);
    let tile = shared_array!(f32; TRANSPOSE_TILE, TRANSPOSE_TILE, padding = 1);
    let input = Slice2dU32::with_shape(input, out.shape().transposed());
    let b = block_idx();
    let [tx, ty, _] = thread_idx().as_usize();
    // Where these wrap (a grid of more than 2^32 threads along an axis), the
    // block's threads are outside the output and write nothing.
    let (out_row0, out_col0) = (b.y.wrapping_mul(T), b.x.wrapping_mul(T));
    let mut wp = block;
    // tile[r][c] = input[out_col0 + r][out_row0 + c]
    tile.fill(&mut wp, |r, c| {
        let (in_row, in_col) = (
            out_col0.wrapping_add(r as u32),
            out_row0.wrapping_add(c as u32),
        );
        if input.shape().contains(in_row, in_col) {
            input[(in_row, in_col)]
        } else {
            0.0
        }
    });
    let rd = wp.sync();
    // out[out_row0 + ty][out_col0 + tx] = tile[tx][ty]
    out.set(thread_index_2d(), tile.get(&rd, tx, ty));
}
