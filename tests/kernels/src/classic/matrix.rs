//! Tiled matrix multiply and transposes through shared tiles.

use gpu_device::prelude::*;

/// The side of [`matmul_tiled`]'s shared tiles and blocks.
pub const MATMUL_TILE: usize = 16;

/// The side of the transposes' shared tile.
pub const TRANSPOSE_TILE: usize = 32;

/// `c = a * b` for row-major `a` (`m x k`), `b` (`k x n`) and `c` (`m x n`,
/// its extents give `m` and `n`): each thread computes `c[y][x]`, stepping
/// through `k` in 16 x 16 tiles of `a` and `b` held in shared memory.
///
/// Launch with blocks of `(16, 16)` threads (the only shape it runs in) and
/// a grid of `(n.div_ceil(16), m.div_ceil(16))`. Sizes need not be multiples
/// of 16: tiles are padded with zeros.
#[kernel(block = (MATMUL_TILE, MATMUL_TILE))]
pub fn matmul_tiled(a: &[f32], b: &[f32], k: usize, mut c: DisjointSlice2d<f32>, block: Block) {
    const T: usize = MATMUL_TILE;
    let block = block.require_shape(T as u32, T as u32, 1);
    let a_tile = shared_array!(f32; T, T);
    let b_tile = shared_array!(f32; T, T);
    let (m, n) = (c.rows(), c.cols());
    let (a, b) = (Slice2d::new(a, m, k), Slice2d::new(b, k, n));
    let [bx, by, _] = block_idx().as_usize();
    let [tx, ty, _] = thread_idx().as_usize();
    let (row0, col0) = (by * T, bx * T);
    let mut acc = 0.0f32;
    let mut w = block;
    let mut k0 = 0;
    while k0 < k {
        // Each thread loads the tile slot it owns: (ty, tx) in a 16 x 16 block.
        a_tile.fill(&mut w, |r, col| {
            let (row, col) = (row0 + r, k0 + col);
            if row < m && col < k {
                a[(row, col)]
            } else {
                0.0
            }
        });
        b_tile.fill(&mut w, |r, col| {
            let (row, col) = (k0 + r, col0 + col);
            if row < k && col < n {
                b[(row, col)]
            } else {
                0.0
            }
        });
        let r = w.sync();
        let a_row = a_tile.row(&r, ty);
        let mut kk = 0;
        while kk < T {
            acc += a_row[kk] * b_tile.get(&r, kk, tx);
            kk += 1;
        }
        w = r.sync();
        k0 += T;
    }
    c.set(thread_index_2d(), acc);
}

/// `out` (`w x h`) = the transpose of `input` (`h x w`, row-major; `h` and
/// `w` are `out`'s extents), through a 32 x 33 shared tile: each thread
/// moves one element. Both matrices are 32-bit views
/// ([`DisjointSlice2dU32`], [`Slice2dU32`]: extents and offsets in `u32`,
/// widened once), so they hold at most `u32::MAX` elements.
///
/// Launch with blocks of `(32, 32)` threads (the only shape it runs in) and
/// a grid of `(h.div_ceil(32), w.div_ceil(32))` (it covers the output); a
/// larger matrix is a launch error naming `out`, and an `input` shorter than
/// `out` one naming `input` (declared `len(input >= out)`).
#[kernel(block = (TRANSPOSE_TILE, TRANSPOSE_TILE), len(input >= out))]
pub fn transpose_32x32(input: &[f32], mut out: DisjointSlice2dU32<f32>, block: Block) {
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

/// [`transpose_32x32`] with blocks of `(32, 8)` threads, each moving four
/// elements: it loads tile rows `ty + 8j` and writes its four output rows
/// `4y + j` (its `DisjointSlice2d<f32, 4>`), reading `tile[tx][4ty + j]`.
///
/// Launch with blocks of `(32, 8)` threads (the only shape it runs in) and a
/// grid of `(h.div_ceil(32), w.div_ceil(32))`.
#[kernel(block = (TRANSPOSE_TILE, 8))]
pub fn transpose_32x8(input: &[f32], mut out: DisjointSlice2d<f32, 4>, block: Block) {
    const T: usize = TRANSPOSE_TILE;
    let block = block.require_shape(T as u32, 8, 1);
    let tile = shared_array!(f32; T, T, padding = 1);
    let (w, h) = (out.rows(), out.cols());
    let input = Slice2d::with_shape(input, out.shape().transposed());
    let [bx, by, _] = block_idx().as_usize();
    let [tx, ty, _] = thread_idx().as_usize();
    let (out_row0, out_col0) = (by * T, bx * T);
    let mut wp = block;
    // Four slots per thread: rows ty, ty + 8, ty + 16, ty + 24.
    tile.fill(&mut wp, |r, c| {
        let (in_row, in_col) = (out_col0 + r, out_row0 + c);
        if in_row < h && in_col < w {
            input[(in_row, in_col)]
        } else {
            0.0
        }
    });
    let rd = wp.sync();
    let i = thread_index_2d();
    let mut j = 0;
    while j < 4 {
        out.set_at(i, j, tile.get(&rd, tx, 4 * ty + j));
        j += 1;
    }
}
