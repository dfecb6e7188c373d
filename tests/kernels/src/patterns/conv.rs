//! 5 x 5 convolution, f32, zero padding ("same" size): `out[y][x] =
//! sum_{dy, dx} w[5 dy + dx] in[y + dy - 2][x + dx - 2]`, the twin
//! `conv2d_5x5` of `patterns.cu`.
//!
//! The filter is a struct passed by value (it lives in the parameter
//! constant bank; FFMA reads it from there). Block (32, 8) computes a 32 x
//! 32 output tile; thread (tx, ty) owns the 4 outputs at column tx, rows `4
//! ty ..` (a `DisjointSlice2d<f32, 4>`: its 2-D witness names exactly
//! those). Shared: the 36 x 36 input tile with its 2-wide halo, slot (r, c)
//! holding `in[y0 - 2 + r][x0 - 2 + c]` (0 outside the image), filled by
//! block stride (thread t fills slots t, t + 256, ...: a warp's loads are
//! consecutive columns). After one barrier each thread reads its 8 x 5
//! window and does 4 x 25 FFMA, all unrolled (`unroll!`), each output's
//! taps in the order dy, dx.

use gpu_device::prelude::*;

/// A 5 x 5 filter, by value: `w[5 dy + dx]`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Filter5x5 {
    /// The taps, row by row.
    pub w: [f32; 25],
}

/// The convolution of the `h x w` image `x` with `filter` into `out`
/// (`h x w`, 32-bit indices as the twin's `int`): grid `(ceil(w / 32),
/// ceil(h / 32))`, block (32, 8). `x` must hold `h x w` elements (the
/// launcher checks: `len(x >= out)`).
#[kernel(block = (32, 8), len(x >= out))]
pub fn conv2d_5x5(x: &[f32], filter: Filter5x5, mut out: DisjointSlice2dU32<f32, 4>, block: Block) {
    let tile = shared_array!(f32; 36, 36);
    let image = Slice2dU32::with_shape(x, out.shape());
    let [tx, ty, _] = thread_idx().as_usize();
    let (x0, y0) = (block_idx().x * 32, block_idx().y * 32);
    let mut wr = block;
    tile.fill(&mut wr, |r, c| {
        // Rows and columns left of or above the image wrap to large values,
        // outside it.
        let (gy, gx) = (
            (y0 + r as u32).wrapping_sub(2),
            (x0 + c as u32).wrapping_sub(2),
        );
        image.get(gy, gx).copied().unwrap_or(0.0)
    });
    let rd = wr.sync();
    let mut acc = [0.0f32; 4];
    unroll!(for r in 0..8 {
        let row = tile.row(&rd, 4 * ty + r);
        unroll!(for dx in 0..5 {
            let v = row[tx + dx];
            unroll!(for j in 0..4 {
                // Output row `4 ty + j` takes input row `4 ty + r` as tap `dy = r - j`.
                if r >= j && r - j < 5 {
                    acc[j] = filter.w[5 * (r - j) + dx].mul_add(v, acc[j]);
                }
            });
        });
    });
    let i = thread_index_2d();
    unroll!(for j in 0..4 {
        out.set_at(i, j, acc[j]);
    });
}
