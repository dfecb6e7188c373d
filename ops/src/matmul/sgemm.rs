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
//! the other, then one barrier per k-tile: a `DoubleBuffer2d` of an array
//! written in the Writing phase and one written in the Reading phase, with
//! an `Alternating` token, so that the loop body is written once (as the
//! twin's `buf ^= 1` loop; written twice, once per typed phase, ptxas
//! allocated the accumulators with three times the register-bank
//! conflicts: `benches/NOTES.md`). One body serves both kernels, generic
//! over the tile sizes. Global loads are 16-byte vectors where
//! the four elements are inside the matrix and aligned, else element by
//! element with zeros outside; C's runs are stored likewise.

use gpu_device::ownership::{
    Axis, AxisMap, DisjointMatrix, RowsFirst, ThreadOrder, TileItems, Tiles,
};
use gpu_device::prelude::*;
use gpu_device::shared::{Alternating, DoubleBuffer2d, Phase};
use gpu_device::Slice2dU32;

/// The four elements of row `row` from column `col` of `p` (its rows `ld`
/// apart, of which the first `cols` are the matrix's), 0 outside it: one
/// 16-byte load when whole and aligned (the twin's `load4_guarded`). 32-bit
/// indices, as the twin's `int`: `p` is a `Slice2dU32` of `rows x ld`.
#[inline(always)]
fn load4_guarded(p: Slice2dU32<f32>, row: u32, col: u32, cols: u32) -> [f32; 4] {
    p.read_run_or(row, col, cols, 0.0)
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

/// One SGEMM block: `BM x BN` block tiles of C, `BK`-deep k-tiles of A
/// (`As[k][m]`, map `Tiles<AR, AC, AO>`) and B (`Bs[k][n]`), each thread a
/// `TM x TN` register tile of C in 4 x 4 quarters (map `Tiles<CR, CC,
/// CO>`, `CC::THREADS` threads along a row). Thread `t` loads A's row
/// `t / (BK / 4)`, columns `4 (t % (BK / 4)) ..` of the k-tile and B's row
/// `t / (BN / 4)`, columns `4 (t % (BN / 4)) ..`: the positions of the A
/// and B maps (a mismatch would show in the tests' results).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn sgemm_tiles<
    const BK: usize,
    const BM: usize,
    const BN: usize,
    const TM: usize,
    const TN: usize,
    AR: AxisMap,
    AC: AxisMap,
    AO: ThreadOrder,
    BR: AxisMap,
    BC: AxisMap,
    BO: ThreadOrder,
    CR: AxisMap,
    CC: AxisMap,
    CO: ThreadOrder,
>(
    a: &[f32],
    b: &[f32],
    shape: GemmShape,
    c: &mut DisjointMatrix<f32, Tiles<CR, CC, CO>>,
    block: Block,
    a_tiles: DoubleBuffer2d<f32, BK, BM, BM, Tiles<AR, AC, AO>>,
    b_tiles: DoubleBuffer2d<f32, BK, BN, BN, Tiles<BR, BC, BO>>,
) {
    const {
        assert!(TM == CR::PER_THREAD && TN == CC::PER_THREAD && CR::RUN == 4 && CC::RUN == 4);
        assert!(BM == CR::SPAN && BN == CC::SPAN && BK.is_multiple_of(4));
    };
    let (m, n, k) = (shape.m, shape.n, shape.k);
    // A is `m x lda`, B `k x ldb` (the launch traps, naming the shape, if
    // either slice is too short).
    let (a, b) = (
        Slice2dU32::new(a, m, shape.lda),
        Slice2dU32::new(b, k, shape.ldb),
    );
    let t = thread_rank();
    let (tx, ty) = (t % CC::THREADS, t / CC::THREADS);
    let t = t as u32;
    let (bk, bm, bn) = (BK as u32, BM as u32, BN as u32);
    let (m0, n0) = (block_idx().y * bm, block_idx().x * bn);
    let (a_row, a_col) = (t / (bk / 4), (t % (bk / 4)) * 4);
    let (b_row, b_col) = (t / (bn / 4), (t % (bn / 4)) * 4);
    let mut acc = [[0.0f32; TN]; TM];

    let mut a_next = load4_guarded(a, m0 + a_row, a_col, k);
    let mut b_next = load4_guarded(b, b_row, n0 + b_col, n);
    let mut s = block.alternate();
    unroll!(for i in 0..4 {
        a_tiles.set(&mut s, i, 0, a_next[i]);
    });
    b_tiles.set_run(&mut s, 0, 0, b_next);
    s.sync();
    let mut k0 = 0;
    loop {
        // Compute from one buffer while the next k-tile comes into
        // registers, then store it to the other.
        let more = k - k0 > bk;
        if more {
            a_next = load4_guarded(a, m0 + a_row, k0 + bk + a_col, k);
            b_next = load4_guarded(b, k0 + bk + b_row, n0 + b_col, n);
        }
        products::<BK, BM, BN, TM, TN, _, _, _>(
            &a_tiles,
            &b_tiles,
            &s,
            (tx, ty),
            CC::THREADS,
            &mut acc,
        );
        if !more {
            break;
        }
        unroll!(for i in 0..4 {
            a_tiles.set(&mut s, i, 0, a_next[i]);
        });
        b_tiles.set_run(&mut s, 0, 0, b_next);
        s.sync();
        k0 += bk;
    }
    let tile = TileItems::<Tiles<CR, CC, CO>>::mine();
    unroll!(for i in 0..TM {
        unroll!(for j in 0..TN {
            if j.is_multiple_of(4) {
                let run = [acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]];
                c.set_run_within(&tile, i, j / 4, run, n as usize);
            }
        });
    });
}

/// The products of one shared k-tile: per k, the thread's `TM / 4` 16-byte
/// vectors of `As[k]` (vector `ty`, `ty + threads`, ...) and `TN / 4` of
/// `Bs[k]`, then `TM x TN` FFMA.
#[inline(always)]
fn products<
    const BK: usize,
    const BM: usize,
    const BN: usize,
    const TM: usize,
    const TN: usize,
    MA,
    MB,
    P: Phase,
>(
    a: &DoubleBuffer2d<f32, BK, BM, BM, MA>,
    b: &DoubleBuffer2d<f32, BK, BN, BN, MB>,
    s: &Alternating<P>,
    (tx, ty): (usize, usize),
    threads: usize,
    acc: &mut [[f32; TN]; TM],
) where
    MA: gpu_device::ownership::SharedMap,
    MB: gpu_device::ownership::SharedMap,
{
    unroll!(for kk in 0..BK {
        let mut ar = [0.0f32; TM];
        let mut br = [0.0f32; TN];
        unroll!(for i in 0..TM {
            if i.is_multiple_of(4) {
                let v: [f32; 4] = a.row_vector(s, kk, i / 4 * threads + ty);
                unroll!(for e in 0..4 {
                    ar[i + e] = v[e];
                });
            }
        });
        unroll!(for j in 0..TN {
            if j.is_multiple_of(4) {
                let v: [f32; 4] = b.row_vector(s, kk, j / 4 * threads + tx);
                unroll!(for e in 0..4 {
                    br[j + e] = v[e];
                });
            }
        });
        unroll!(for i in 0..TM {
            unroll!(for j in 0..TN {
                acc[i][j] += ar[i] * br[j];
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
    let a_tiles = shared_array!(f32; 16, 64, map = A4x4, buffers = 2);
    let b_tiles = shared_array!(f32; 16, 64, map = B4x4, buffers = 2);
    sgemm_tiles::<16, 64, 64, 4, 4, _, _, _, _, _, _, _, _, _>(
        a, b, shape, &mut c, block, a_tiles, b_tiles,
    );
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
    let a_tiles = shared_array!(f32; 8, 128, map = A8x8, buffers = 2);
    let b_tiles = shared_array!(f32; 8, 128, map = B8x8, buffers = 2);
    sgemm_tiles::<8, 128, 128, 8, 8, _, _, _, _, _, _, _, _, _>(
        a, b, shape, &mut c, block, a_tiles, b_tiles,
    );
}
