//! Layer norm over rows, f32: `y = (x - mean) / sqrt(var + eps) * gamma +
//! beta`, the twins `layer_norm_rows<256, 17>` and `<128, 8>` of
//! `patterns.cu`.
//!
//! One block per row (its rank, on a 1-D grid); thread `t` owns columns
//! `t + THREADS j`, `j < ITEMS`, kept in registers: block sum -> mean, block
//! sum of `(x - mean)^2` -> biased variance (two passes over registers, no
//! cancellation), `rsqrt(var + eps)` (`rsqrt.approx`, CUDA's `rsqrtf`),
//! then the affine map with `gamma` and `beta`. Each sum has its per-warp
//! slot array, the second written in the Reading phase: two barriers a row.

use super::collectives::block_sum;
use super::softmax::row_of;
use gpu_device::math::FastMath;
use gpu_device::ownership::{ByWarp, DisjointMatrix, RowItems, RowPerBlock};
use gpu_device::prelude::*;
use gpu_device::shared::{Phase, Shared};

/// The row's layer norm for `THREADS` threads of `ITEMS` columns each.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn layer_norm<const ITEMS: usize, const WARPS: usize, P: Phase>(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
    y: &mut DisjointMatrix<f32, RowPerBlock>,
    block: Block<P>,
    mean_slots: Shared<f32, WARPS, ByWarp<0>, P>,
    var_slots: Shared<f32, WARPS, ByWarp<0>, P::Next>,
) {
    let mine = RowItems::<1>::mine();
    let cols = y.cols();
    let Some(row) = row_of(x, mine.row(), cols).filter(|_| mine.row() < y.rows()) else {
        return; // The whole block: its row is past the input or the output.
    };
    // One length check each (a trap naming the slice when too short), so
    // that the reads below need none.
    let (gamma, beta) = (&gamma[..cols], &beta[..cols]);
    let mut v = [0.0f32; ITEMS];
    let mut sum = 0.0f32;
    unroll!(for j in 0..ITEMS {
        if let Some(c) = mine.column(j).filter(|&c| c < cols) {
            v[j] = row.get(c).copied().unwrap_or(0.0);
        }
        sum += v[j];
    });
    let (r, total) = block_sum(sum, mean_slots, block);
    let mean = total / cols as f32;
    let mut squares = 0.0f32;
    unroll!(for j in 0..ITEMS {
        let d = if mine.column(j).is_some_and(|c| c < cols) {
            v[j] - mean
        } else {
            0.0
        };
        squares += d * d;
    });
    let (_w, total) = block_sum(squares, var_slots, r);
    let rstd = FastMath::rsqrt(total / cols as f32 + eps);
    unroll!(for j in 0..ITEMS {
        if let Some(c) = mine.column(j).filter(|&c| c < cols) {
            y.set(&mine, j, 0, (v[j] - mean) * rstd * gamma[c] + beta[c]);
        }
    });
}

/// Rows of up to 4352 columns: 256 threads, 17 columns a thread; five
/// blocks per multiprocessor, as the twin's 48 registers give it.
#[kernel(block = 256, launch_bounds = (256, 5))]
pub fn layer_norm_rows_256x17(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
    mut y: DisjointMatrix<f32, RowPerBlock>,
    block: Block,
) {
    let mean_slots = shared_array!(f32; 8, map = ByWarp<0>);
    let var_slots = shared_array!(f32; 8, map = ByWarp<0>, written_in = Reading);
    layer_norm::<17, 8, _>(x, gamma, beta, eps, &mut y, block, mean_slots, var_slots);
}

/// Rows of up to 1024 columns: 128 threads, 8 columns a thread; 14 blocks
/// per multiprocessor, as the twin's 36 registers give it.
#[kernel(block = 128, launch_bounds = (128, 14))]
pub fn layer_norm_rows_128x8(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
    mut y: DisjointMatrix<f32, RowPerBlock>,
    block: Block,
) {
    let mean_slots = shared_array!(f32; 4, map = ByWarp<0>);
    let var_slots = shared_array!(f32; 4, map = ByWarp<0>, written_in = Reading);
    layer_norm::<8, 4, _>(x, gamma, beta, eps, &mut y, block, mean_slots, var_slots);
}
