//! Row softmax, `y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] -
//! max_r)`, f32: the twins `softmax_rows_vec4<128, 2>` and
//! `softmax_rows_strided<256, 17>` of `patterns.cu`.
//!
//! Both: one block per row on a 1-D grid (the row is the block's rank: up
//! to 2^31 - 1 rows), the row's values kept in registers between the
//! passes (the input is read once): block max, then `exp(x - max)` in
//! place (`ex2.approx` of `x log2 e`, CUDA's `__expf`) and block sum, then
//! `x * (1 / sum)` stored. Max and sum each have a per-warp slot array, the
//! sum's written in the Reading phase: two barriers a row.

use super::collectives::{block_max, block_sum};
use gpu_device::math::FastMath;
use gpu_device::ownership::{ByWarp, DisjointMatrix, RowItems, RowPerBlock};
use gpu_device::prelude::*;
use gpu_device::vector::{read_run_or, vectors};

/// Narrow rows (at most 1024 columns): 128 threads, thread `t` owns the
/// runs of four columns `4 (t + 128 j)`, `j < 2` (one `float4` each, read
/// and written as 16-byte vectors where the row is aligned; unowned
/// columns are `-inf`, whose exp is 0).
#[kernel(block = 128)]
pub fn softmax_rows_vec4(x: &[f32], mut y: DisjointMatrix<f32, RowPerBlock<4>>, block: Block) {
    const VECS: usize = 2;
    let max_slots = shared_array!(f32; 4, map = ByWarp<0>);
    let sum_slots = shared_array!(f32; 4, map = ByWarp<0>, written_in = Reading);
    let mine = RowItems::<4>::mine();
    let cols = y.cols();
    let Some(row) = row_of(x, mine.row(), cols).filter(|_| mine.row() < y.rows()) else {
        return; // The whole block: its row is past the input or the output.
    };
    // One 16-byte load a run where the row is aligned (tested once).
    let quads = vectors::<f32, 4>(row);
    let mut v = [[f32::NEG_INFINITY; 4]; VECS];
    let mut mx = f32::NEG_INFINITY;
    unroll!(for j in 0..VECS {
        if let Some(c) = mine.column(j).filter(|&c| c < cols) {
            v[j] = match quads.and_then(|q| q.get(c / 4)) {
                Some(quad) => quad.0,
                None => read_run_or(row, c, f32::NEG_INFINITY),
            };
        }
        mx = mx.max(v[j][0].max(v[j][1]).max(v[j][2].max(v[j][3])));
    });
    let (r, mx) = block_max(mx, max_slots, block);
    let mut sum = 0.0f32;
    unroll!(for j in 0..VECS {
        unroll!(for e in 0..4 {
            v[j][e] = FastMath::exp(v[j][e] - mx);
        });
        sum += (v[j][0] + v[j][1]) + (v[j][2] + v[j][3]);
    });
    let (_w, total) = block_sum(sum, sum_slots, r);
    let inv = 1.0 / total;
    unroll!(for j in 0..VECS {
        if mine.column(j).is_some_and(|c| c < cols) {
            y.set_run(&mine, j, v[j].map(|e| e * inv));
        }
    });
}

/// Wide rows, fused (up to 4352 columns): 256 threads, thread `t` owns
/// columns `t + 256 j`, `j < 17` (a warp's loads and stores of one `j` are
/// 32 consecutive floats; rows need no alignment). Eight blocks per
/// multiprocessor, as the twin's 32 registers give it.
#[kernel(block = 256, launch_bounds = (256, 8))]
pub fn softmax_rows_strided(x: &[f32], mut y: DisjointMatrix<f32, RowPerBlock>, block: Block) {
    const ITEMS: usize = 17;
    let max_slots = shared_array!(f32; 8, map = ByWarp<0>);
    let sum_slots = shared_array!(f32; 8, map = ByWarp<0>, written_in = Reading);
    let mine = RowItems::<1>::mine();
    let cols = y.cols();
    let Some(row) = row_of(x, mine.row(), cols).filter(|_| mine.row() < y.rows()) else {
        return; // The whole block: its row is past the input or the output.
    };
    let mut v = [f32::NEG_INFINITY; ITEMS];
    let mut mx = f32::NEG_INFINITY;
    unroll!(for j in 0..ITEMS {
        if let Some(c) = mine.column(j).filter(|&c| c < cols) {
            v[j] = row.get(c).copied().unwrap_or(f32::NEG_INFINITY);
        }
        mx = mx.max(v[j]);
    });
    let (r, mx) = block_max(mx, max_slots, block);
    let mut sum = 0.0f32;
    unroll!(for j in 0..ITEMS {
        v[j] = FastMath::exp(v[j] - mx);
        sum += v[j];
    });
    let (_w, total) = block_sum(sum, sum_slots, r);
    let inv = 1.0 / total;
    unroll!(for j in 0..ITEMS {
        y.set(&mine, j, 0, v[j] * inv);
    });
}

/// Row `row` of the row-major `x` with `cols` columns, or `None` past its
/// end. (The same for every thread of a block: a block that returns on
/// `None` returns whole, before its barriers.)
#[inline(always)]
pub(crate) fn row_of(x: &[f32], row: usize, cols: usize) -> Option<&[f32]> {
    let start = row.checked_mul(cols)?;
    x.get(start..start.checked_add(cols)?)
}
