//! Stencils: a 2-D 5-point Jacobi step and a 1-D stencil with a shared halo.

use gpu_device::prelude::*;

/// One Jacobi step on an `h x w` row-major grid (`out`'s extents; `input`
/// has the same shape): interior points get `0.25 * ((up + down) + (left +
/// right))`, boundary points are copied.
///
/// Launch with 2-D blocks (the benchmark uses `(32, 8)`) covering the grid.
#[kernel]
pub fn jacobi5(input: &[f32], mut out: DisjointSlice2d<f32>) {
    let i = thread_index_2d();
    let (h, w) = (out.rows(), out.cols());
    let (x, y) = (i.x(), i.y());
    if x < w && y < h {
        // Indexed per axis: the tests above are the bounds checks.
        let input = Slice2d::with_shape(input, out.shape());
        let mid = input.row(y);
        let v = if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
            let (up, down) = (input.row(y - 1), input.row(y + 1));
            0.25 * ((up[x] + down[x]) + (mid[x - 1] + mid[x + 1]))
        } else {
            mid[x]
        };
        out.set(i, v);
    }
}

/// The radius of [`stencil1d_r4`].
pub const STENCIL_RADIUS: usize = 4;

/// The block size of [`stencil1d_r4`].
pub const STENCIL_BLOCK: usize = 256;

/// The weights of [`stencil1d_r4`], passed by value: `w[k]` multiplies
/// `input[i + k - 4]`.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct StencilWeights {
    /// The nine weights.
    pub w: [f32; 2 * STENCIL_RADIUS + 1],
}

/// `out[i] = sum over k of w[k] * input[i + k - 4]`, with `input[j] = 0`
/// outside `0..input.len()`. Each block stages its 256 + 8 inputs in shared
/// memory: thread `t` fills slots `t` and, for `t < 8`, `t + 256` (the
/// ownership rule's own slots), then reads slots `t..t + 9`.
///
/// Launch with blocks of 256 threads (the only shape it runs in) and
/// `n.div_ceil(256)` blocks.
#[kernel(block = STENCIL_BLOCK)]
pub fn stencil1d_r4(
    input: &[f32],
    weights: StencilWeights,
    mut out: DisjointSlice<f32>,
    block: Block,
) {
    const R: usize = STENCIL_RADIUS;
    const B: usize = STENCIL_BLOCK;
    let block = block.require_shape(B as u32, 1, 1);
    let span = shared_array!(f32; B + 2 * R);
    let n = input.len();
    let base = block_idx().x as usize * B;
    let mut w = block;
    // Slot s holds input[base + s - R] (0 outside the input).
    span.fill(&mut w, |s| {
        let g = (base + s).wrapping_sub(R);
        if g < n {
            input[g]
        } else {
            0.0
        }
    });
    let r = w.sync();
    let i = thread_index();
    let window = span.window::<{ 2 * R + 1 }>(&r, r.thread_rank());
    let mut acc = weights.w[0] * window[0];
    let mut k = 1;
    while k <= 2 * R {
        acc += weights.w[k] * window[k];
        k += 1;
    }
    out.set(i, acc);
}
