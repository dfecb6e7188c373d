//! SGEMM, f32: `C (m x n) = A (m x k) B (k x n)`, all row-major with
//! leading dimensions `lda`, `ldb` (multiples of 4 in the benchmark, so
//! rows are 16-byte aligned; any value works, with element loads) and C a
//! `m x ldc` matrix whose first `n` columns are written: the twins
//! `sgemm_4x4` and `sgemm_8x8` of `patterns.cu`.
//!
//! Both: 256 threads; A's tile is stored transposed in shared memory
//! (`As[k][m]`, a register-tile map whose ranks walk the k axis first) so
//! that a thread reads its rows' values of one k as a 16-byte vector; B's
//! tile as is (`Bs[k][n]`, four consecutive columns a thread, one 16-byte
//! store). Two buffers of each: while the block computes from one, each
//! thread holds its share of the next k-tile in registers and stores it to
//! the other, then one barrier per k-tile (the second buffer is an array
//! written in the Reading phase). Global loads are 16-byte vectors where
//! the four elements are inside the matrix and aligned, else element by
//! element with zeros outside; C's runs are stored likewise.

use gpu_device::ownership::{Axis, DisjointMatrix, RowsFirst, TileItems, Tiles};
use gpu_device::prelude::*;
use gpu_device::shared::{Phase, Shared2d};
use gpu_device::vector::read_run;
use gpu_device::Slice2dU32;

/// The four elements of row `row` from column `col` of `p` (its rows `ld`
/// apart, of which the first `cols` are the matrix's), 0 outside it: one
/// 16-byte load when whole and aligned (the twin's `load4_guarded`). 32-bit
/// indices, as the twin's `int`: `p` is a `Slice2dU32` of `rows x ld`.
#[inline(always)]
fn load4_guarded(p: Slice2dU32<f32>, row: u32, col: u32, cols: u32) -> [f32; 4] {
    let mut r = [0.0f32; 4];
    if row < p.rows() {
        let line = p.row(row);
        if col < cols && cols - col > 3 {
            if let Some(v) = read_run(line, col as usize) {
                return v;
            }
        }
        unroll!(for i in 0..3 {
            if col < cols && cols - col > i as u32 {
                r[i] = line.get(col as usize + i).copied().unwrap_or(0.0);
            }
        });
    }
    r
}

/// The problem's extents, by value.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct GemmShape {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of B and C (C's written columns).
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// A's leading dimension (elements between rows).
    pub lda: u32,
    /// B's leading dimension.
    pub ldb: u32,
}

/// C's register tiles of `sgemm_4x4`: thread `t = 16 ty + tx` owns rows
/// `4 ty ..`, columns `4 tx ..` of the block's 64 x 64 tile.
pub type C4x4 = Tiles<Axis<16, 4>, Axis<16, 4>>;
/// `As[k][m]` of `sgemm_4x4` (16 x 64): thread `t` stores column `t / 4`,
/// rows `4 (t % 4) ..` (its float4 of A's row `t / 4`).
type A4x4 = Tiles<Axis<4, 4>, Axis<64>, RowsFirst>;
/// `Bs[k][n]` of `sgemm_4x4` (16 x 64): thread `t` stores row `t / 16`,
/// columns `4 (t % 16) ..`.
type B4x4 = Tiles<Axis<16>, Axis<16, 4>>;

/// C's register tiles of `sgemm_8x8`: thread `t = 16 ty + tx` owns rows
/// `{4 ty, 64 + 4 ty} + 0..4` and columns `{4 tx, 64 + 4 tx} + 0..4` of the
/// block's 128 x 128 tile.
pub type C8x8 = Tiles<Axis<16, 4, 2>, Axis<16, 4, 2>>;
/// `As[k][m]` of `sgemm_8x8` (8 x 128): thread `t` stores column `t / 2`,
/// rows `4 (t % 2) ..`.
type A8x8 = Tiles<Axis<2, 4>, Axis<128>, RowsFirst>;
/// `Bs[k][n]` of `sgemm_8x8` (8 x 128): thread `t` stores row `t / 32`,
/// columns `4 (t % 32) ..`.
type B8x8 = Tiles<Axis<8>, Axis<32, 4>>;

/// The 4 x 4 kernel's products of one shared k-tile: per k, `As[k][4 ty
/// ..]` and `Bs[k][4 tx ..]` as 16-byte vectors, 16 FFMA.
#[inline(always)]
fn tile_4x4<P: Phase>(
    a: &Shared2d<f32, 16, 64, 64, A4x4, P::Next>,
    b: &Shared2d<f32, 16, 64, 64, B4x4, P::Next>,
    block: &Block<P>,
    (tx, ty): (usize, usize),
    acc: &mut [[f32; 4]; 4],
) {
    unroll!(for kk in 0..16 {
        let av: [f32; 4] = a.row_vector(block, kk, ty);
        let bv: [f32; 4] = b.row_vector(block, kk, tx);
        unroll!(for i in 0..4 {
            unroll!(for j in 0..4 {
                acc[i][j] += av[i] * bv[j];
            });
        });
    });
}

/// SGEMM with 64 x 64 x 16 block tiles and a 4 x 4 register tile a
/// thread: grid `(ceil(n / 64), ceil(m / 64))`, 256 threads, four blocks
/// per multiprocessor (64 registers a thread, the twin's count).
#[kernel(block = 256, launch_bounds = (256, 4))]
pub fn sgemm_4x4(
    a: &[f32],
    b: &[f32],
    shape: GemmShape,
    mut c: DisjointMatrix<f32, C4x4>,
    block: Block,
) {
    let as0 = shared_array!(f32; 16, 64, map = A4x4);
    let bs0 = shared_array!(f32; 16, 64, map = B4x4);
    let as1 = shared_array!(f32; 16, 64, map = A4x4, written_in = Reading);
    let bs1 = shared_array!(f32; 16, 64, map = B4x4, written_in = Reading);
    let (m, n, k) = (shape.m, shape.n, shape.k);
    // A is `m x lda`, B `k x ldb` (the launch traps, naming the shape, if
    // either slice is too short).
    let (a, b) = (
        Slice2dU32::new(a, m, shape.lda),
        Slice2dU32::new(b, k, shape.ldb),
    );
    let t = thread_rank();
    let (tx, ty) = (t % 16, t / 16);
    let t = t as u32;
    let (m0, n0) = (block_idx().y * 64, block_idx().x * 64);
    let (a_row, a_col) = (t / 4, (t % 4) * 4);
    let (b_row, b_col) = (t / 16, (t % 16) * 4);
    let mut acc = [[0.0f32; 4]; 4];

    let mut a_next = load4_guarded(a, m0 + a_row, a_col, k);
    let mut b_next = load4_guarded(b, b_row, n0 + b_col, n);
    let mut w = block;
    unroll!(for i in 0..4 {
        as0.set(&mut w, i, 0, a_next[i]);
    });
    bs0.set_run(&mut w, 0, 0, b_next);
    let mut r = w.sync();
    let mut k0 = 0;
    loop {
        // Reading: compute from buffer 0, store the next k-tile into 1.
        let more = k - k0 > 16;
        if more {
            a_next = load4_guarded(a, m0 + a_row, k0 + 16 + a_col, k);
            b_next = load4_guarded(b, k0 + 16 + b_row, n0 + b_col, n);
        }
        tile_4x4(&as0, &bs0, &r, (tx, ty), &mut acc);
        if !more {
            break;
        }
        unroll!(for i in 0..4 {
            as1.set(&mut r, i, 0, a_next[i]);
        });
        bs1.set_run(&mut r, 0, 0, b_next);
        let mut w = r.sync();
        k0 += 16;
        // Writing: compute from buffer 1, store the next k-tile into 0.
        let more = k - k0 > 16;
        if more {
            a_next = load4_guarded(a, m0 + a_row, k0 + 16 + a_col, k);
            b_next = load4_guarded(b, k0 + 16 + b_row, n0 + b_col, n);
        }
        tile_4x4(&as1, &bs1, &w, (tx, ty), &mut acc);
        if !more {
            break;
        }
        unroll!(for i in 0..4 {
            as0.set(&mut w, i, 0, a_next[i]);
        });
        bs0.set_run(&mut w, 0, 0, b_next);
        r = w.sync();
        k0 += 16;
    }
    let tile = TileItems::<C4x4>::mine();
    unroll!(for i in 0..4 {
        c.set_run_within(&tile, i, 0, acc[i], n as usize);
    });
}

/// The 8 x 8 kernel's products of one shared k-tile: per k, two 16-byte
/// vectors of `As` (rows `4 ty ..`, `64 + 4 ty ..`) and two of `Bs`, 64
/// FFMA.
#[inline(always)]
fn tile_8x8<P: Phase>(
    a: &Shared2d<f32, 8, 128, 128, A8x8, P::Next>,
    b: &Shared2d<f32, 8, 128, 128, B8x8, P::Next>,
    block: &Block<P>,
    (tx, ty): (usize, usize),
    acc: &mut [[f32; 8]; 8],
) {
    unroll!(for kk in 0..8 {
        let a_lo: [f32; 4] = a.row_vector(block, kk, ty);
        let a_hi: [f32; 4] = a.row_vector(block, kk, 16 + ty);
        let b_lo: [f32; 4] = b.row_vector(block, kk, tx);
        let b_hi: [f32; 4] = b.row_vector(block, kk, 16 + tx);
        let ar = [
            a_lo[0], a_lo[1], a_lo[2], a_lo[3], a_hi[0], a_hi[1], a_hi[2], a_hi[3],
        ];
        let br = [
            b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3],
        ];
        unroll!(for i in 0..8 {
            unroll!(for j in 0..8 {
                acc[i][j] += ar[i] * br[j];
            });
        });
    });
}

/// SGEMM with 128 x 128 x 8 block tiles and an 8 x 8 register tile a
/// thread in four 4 x 4 quarters: grid `(ceil(n / 128), ceil(m / 128))`,
/// 256 threads, two blocks per multiprocessor (`__launch_bounds__(256,
/// 2)`).
#[kernel(block = 256, launch_bounds = (256, 2))]
pub fn sgemm_8x8(
    a: &[f32],
    b: &[f32],
    shape: GemmShape,
    mut c: DisjointMatrix<f32, C8x8>,
    block: Block,
) {
    let as0 = shared_array!(f32; 8, 128, map = A8x8);
    let bs0 = shared_array!(f32; 8, 128, map = B8x8);
    let as1 = shared_array!(f32; 8, 128, map = A8x8, written_in = Reading);
    let bs1 = shared_array!(f32; 8, 128, map = B8x8, written_in = Reading);
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let (a, b) = (
        Slice2dU32::new(a, m, shape.lda),
        Slice2dU32::new(b, k, shape.ldb),
    );
    let t = thread_rank();
    let (tx, ty) = (t % 16, t / 16);
    let t = t as u32;
    let (m0, n0) = (block_idx().y * 128, block_idx().x * 128);
    let (a_row, a_col) = (t / 2, (t % 2) * 4);
    let (b_row, b_col) = (t / 32, (t % 32) * 4);
    let mut acc = [[0.0f32; 8]; 8];

    let mut a_next = load4_guarded(a, m0 + a_row, a_col, k);
    let mut b_next = load4_guarded(b, b_row, n0 + b_col, n);
    let mut w = block;
    unroll!(for i in 0..4 {
        as0.set(&mut w, i, 0, a_next[i]);
    });
    bs0.set_run(&mut w, 0, 0, b_next);
    let mut r = w.sync();
    let mut k0 = 0;
    loop {
        let more = k - k0 > 8;
        if more {
            a_next = load4_guarded(a, m0 + a_row, k0 + 8 + a_col, k);
            b_next = load4_guarded(b, k0 + 8 + b_row, n0 + b_col, n);
        }
        tile_8x8(&as0, &bs0, &r, (tx, ty), &mut acc);
        if !more {
            break;
        }
        unroll!(for i in 0..4 {
            as1.set(&mut r, i, 0, a_next[i]);
        });
        bs1.set_run(&mut r, 0, 0, b_next);
        let mut w = r.sync();
        k0 += 8;
        let more = k - k0 > 8;
        if more {
            a_next = load4_guarded(a, m0 + a_row, k0 + 8 + a_col, k);
            b_next = load4_guarded(b, k0 + 8 + b_row, n0 + b_col, n);
        }
        tile_8x8(&as1, &bs1, &w, (tx, ty), &mut acc);
        if !more {
            break;
        }
        unroll!(for i in 0..4 {
            as0.set(&mut w, i, 0, a_next[i]);
        });
        bs0.set_run(&mut w, 0, 0, b_next);
        r = w.sync();
        k0 += 8;
    }
    let tile = TileItems::<C8x8>::mine();
    unroll!(for i in 0..8 {
        c.set_run_within(
            &tile,
            i,
            0,
            [acc[i][0], acc[i][1], acc[i][2], acc[i][3]],
            n as usize,
        );
        c.set_run_within(
            &tile,
            i,
            1,
            [acc[i][4], acc[i][5], acc[i][6], acc[i][7]],
            n as usize,
        );
    });
}
