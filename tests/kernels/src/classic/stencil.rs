//! Stencils: a 2-D 5-point Jacobi step and a 1-D stencil with a shared halo.

use gpu_device::prelude::*;

/// One Jacobi step on an `h x w` row-major grid of at most `u32::MAX`
/// points (`out`'s extents; `input` has the same shape): interior points get
/// `0.25 * ((up + down) + (left + right))`, boundary points are copied.
///
/// Both grids are 32-bit matrix views ([`DisjointSlice2dU32`],
/// [`Slice2dU32`]: extents and offsets in `u32`, widened once), and the
/// neighbours are read through [`Slice2dU32::interior`]: one test that the
/// point has a neighbour on each side, then loads at fixed distances with
/// no further bounds check.
///
/// Launch with blocks of `(32, 8)` threads (declared: the launcher refuses
/// any other shape) and a grid of `(w.div_ceil(32), h.div_ceil(8))`; a grid
/// of more than `u32::MAX` points is a launch error naming `out`, and an
/// `input` shorter than `out` one naming `input` (declared `len(input >=
/// out)`: the device then skips `with_shape`'s test).
#[kernel(block = (32, 8), len(input >= out))]
pub fn jacobi5(input: &[f32], mut out: DisjointSlice2dU32<f32>) {
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
