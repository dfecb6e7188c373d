//! Matrix products: [`matmul`] (`torch.matmul`, `C = A @ B`) on the fastest
//! path the device has, and the kernels it launches.
//!
//! | inputs | path ([`MatmulPath`]) | device |
//! |---|---|---|
//! | `bf16`, `f16` | [`gemm_wgmma_tma`]: Hopper's `wgmma.m64n256k16` fed by a TMA ring from a producer warpgroup, persistent, f32 accumulation, C rounded once to the inputs' type | compute capability 9.0 (the sm_90a module: H100, H200) |
//! | `bf16`, `f16` | [`gemm_tc`]: `mma.sync.m16n8k16` tensor cores fed by a `cp.async` ring, f32 accumulation, C rounded once to the inputs' type | sm_80 and later but 9.0 (an older device is an error naming it) |
//! | `f32` | [`sgemm`]: the register-tiled FP32 SGEMM (`sgemm_8x8`) | every device |
//!
//! [`MatmulPath::tensor_cores`] makes the choice from the device's compute
//! capability (the one place it is made), and [`matmul_path`] tells it
//! for an element type on a device: sm_90a code runs on compute capability 9.0 only, which is
//! also the device the runtime loads this crate's sm_90a module on.
//!
//! All matrices are row-major and dense, as torch's contiguous tensors:
//! A is `m × k`, B is `k × n`, C is `m × n`. Both tensor-core kernels read
//! rows padded to 8 elements (16-byte chunks), and share their block tile
//! of 128 × 256 × 64 (ragged M and N are cut by the copies' zero fill and
//! the stores' bounds). The `wgmma` path reads B as it is
//! ([`gemm_wgmma_tma::gemm_bf16_wgmma_tma_kn`]: B's boxes land MN-major and
//! `wgmma` reads them transposed), so at `k` and `n` multiples of 8
//! [`matmul`] copies nothing; otherwise it pads the rows of A (`k`) or B
//! (`n`) with [`pad_rows_k_major`]. The `mma.sync` path reads B K-major
//! (`n × k`): [`matmul`] makes it first with [`transpose_k_major`], a tiled
//! transpose. What the copies cost is the gap between `benches/gemm.rs`'
//! `gpu_ops::matmul` table and its kernel rows.

// sm_80's: in the PTX of sm_80 and later only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod gemm_tc;
// sm_90a's: in the PTX of sm_90a only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod gemm_wgmma;
// sm_90a's, as `gemm_wgmma`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod gemm_wgmma_tma;
pub mod sgemm;

#[cfg(not(target_arch = "nvptx64"))]
mod host;

use gpu_device::half::{bf16, f16};
use gpu_device::ownership::{Axis, DisjointMatrix, TileItems, Tiles};
use gpu_device::prelude::*;
use gpu_device::vector::{read_runs_unaligned, VectorElement};

/// Copies the `rows × cols` matrix whose element `(r, c)` is `src[r *
/// row_step + c * col_step]` into the first `cols` columns of `out`, a
/// `rows × ld` row-major matrix (`ld >= cols`; the columns past `cols` are
/// left as they are). With `row_step = cols, col_step = 1` it pads a
/// row-major matrix's rows to `ld`; with `row_step = 1, col_step = rows` it
/// transposes a row-major `cols × rows` matrix. One thread an element of
/// `out`: launch `out.len()` threads or more.
#[kernel(bf16, f16, f32)]
pub fn pack_k_major<T: DeviceCopy>(
    src: &[T],
    rows: usize,
    cols: usize,
    ld: usize,
    row_step: usize,
    col_step: usize,
    mut out: DisjointSlice<T>,
) {
    let i = thread_index();
    let (r, c) = (i.get() / ld, i.get() % ld);
    if r < rows && c < cols {
        if let Some(o) = out.get_mut(i) {
            // The host checked `src`'s length; an index past it panics
            // (the launch fails naming this line), never reads past it.
            *o = src[r * row_step + c * col_step];
        }
    }
}

/// The threads of a [`pad_rows_k_major`] block: 16 row positions of 16
/// column positions ([`PadTiles`]).
pub const PAD_THREADS: usize = 256;

/// The rows of `out` each [`pad_rows_k_major`] thread writes (16 apart),
/// their loads all issued before the first store.
pub const PAD_ROWS: usize = 4;

/// The consecutive columns of a [`pad_rows_k_major`] thread's run: 16
/// bytes of a 16-bit element, one vector store.
pub const PAD_RUN: usize = 8;

/// [`pad_rows_k_major`]'s register tiles: thread `(p, q)` (rank `16 p +
/// q`) owns columns `8 q .. 8 q + 8` of rows `p + 16 i`, `i < 4`, of its
/// block's 64 × 128 tile; a warp stores two rows' 256-byte runs.
pub type PadTiles = Tiles<Axis<16, 1, PAD_ROWS>, Axis<16, PAD_RUN>>;

/// The rows of a [`pad_rows_k_major`] block's tile.
pub const PAD_TILE_ROWS: usize = 16 * PAD_ROWS;

/// The columns of a [`pad_rows_k_major`] block's tile.
pub const PAD_TILE_COLS: usize = 16 * PAD_RUN;

/// `out` (`rows × ld`, row-major) = `src` (`rows × cols`, row-major) with
/// each row padded with zeros to `ld` (`ld >= cols`): rows made a multiple
/// of 16 bytes for the tensor-core GEMMs. 16-bit elements: each thread
/// writes 16-byte runs of `out` (one vector store each where `out` starts
/// 16-byte aligned and `ld` is a multiple of 8), read from `src` at any
/// offset ([`read_runs_unaligned`]: the one or two aligned 16-byte loads
/// that cover each run, a thread's four runs in flight together). The run
/// that holds a row's last column, and the runs near `src`'s ends, are read
/// element by element.
///
/// Launch with blocks of [`PAD_THREADS`] threads and a grid of
/// `(ld.div_ceil(PAD_TILE_COLS), Y, Z)` with `Y Z >=
/// rows.div_ceil(PAD_TILE_ROWS)` (tile row `y + Y z`), which covers `out`;
/// `src` shorter than `rows × cols` fails the launch at the read past it.
///
/// [`read_runs_unaligned`]: gpu_device::vector::read_runs_unaligned
#[kernel(bf16, f16, block = PAD_THREADS)]
pub fn pad_rows_k_major<T: DeviceCopy + VectorElement + Default>(
    src: &[T],
    cols: usize,
    mut out: DisjointMatrix<T, PadTiles>,
) {
    const {
        assert!(
            core::mem::size_of::<[T; PAD_RUN]>() == 16,
            "pad_rows_k_major moves 16-bit elements"
        )
    };
    let tile = TileItems::<PadTiles>::mine();
    let rows = out.rows();
    // This thread's column (the same in each of its rows), and its runs'
    // starts in `src` where they are whole runs of a row (`usize::MAX`, no
    // run, otherwise: the reader's `None`).
    let c = tile.col(0).unwrap_or(usize::MAX);
    let mut starts = [usize::MAX; PAD_ROWS];
    unroll!(for i in 0..PAD_ROWS {
        if let Some(r) = tile.row(i).filter(|&r| r < rows) {
            if c < cols && cols - c >= PAD_RUN {
                starts[i] = r * cols + c;
            }
        }
    });
    // Every run's loads in flight together, then every store.
    let runs = read_runs_unaligned::<T, PAD_RUN, PAD_ROWS>(src, starts);
    unroll!(for i in 0..PAD_ROWS {
        let run = match runs[i] {
            Some(run) => run,
            None => ragged_run(src, cols, tile.row(i).filter(|&r| r < rows), c),
        };
        out.set_run(&tile, i, 0, run);
    });
}

/// Columns `c .. c + PAD_RUN` of row `r` of `src` (`cols` columns), zeros
/// at columns `cols` and past, element by element: the run that holds a
/// row's last column, or a run past `src`'s end (an index past it panics).
/// Zeros for no row.
#[inline(always)]
fn ragged_run<T: VectorElement + Default>(
    src: &[T],
    cols: usize,
    r: Option<usize>,
    c: usize,
) -> [T; PAD_RUN] {
    let mut run = [T::default(); PAD_RUN];
    if let Some(r) = r {
        let at = r * cols + c;
        gpu_device::unroll::full::<PAD_RUN>(|i| {
            if c < cols && i < cols - c {
                run[i] = src[at + i];
            }
        });
    }
    run
}

/// The side of the square tiles [`transpose_k_major`] moves.
pub const TRANSPOSE_TILE: usize = 32;

/// The rows of threads of a [`transpose_k_major`] block: each thread moves
/// `TRANSPOSE_TILE / TRANSPOSE_ROWS` rows of a tile.
pub const TRANSPOSE_ROWS: usize = 8;

/// `out` (`n × ld`, row-major) = the transpose of `src` (`k × n`,
/// row-major), its columns `k..ld` zero: a matrix B made K-major (Bᵀ, each
/// row a column of B) for the tensor-core GEMMs. Through a shared tile, so
/// that a warp reads a row run of `src` and writes a row run of `out`; the
/// transposing form of [`pack_k_major`] reads `src` a column at a time, a
/// 32-byte sector for each element.
///
/// Launch with blocks of `(TRANSPOSE_TILE, TRANSPOSE_ROWS)` threads (the
/// only shape it runs in) and a grid of `(ld.div_ceil(TRANSPOSE_TILE),
/// n.div_ceil(TRANSPOSE_TILE))`, which covers `out`; `src` shorter than `k
/// × n` fails the launch at the read past it.
#[kernel(bf16, f16, f32, block = (TRANSPOSE_TILE, TRANSPOSE_ROWS))]
pub fn transpose_k_major<T: DeviceCopy + Default>(
    src: &[T],
    k: usize,
    mut out: DisjointSlice2d<T, 4>,
    block: Block,
) {
    const S: usize = TRANSPOSE_TILE;
    let block = block.require_shape(S as u32, TRANSPOSE_ROWS as u32, 1);
    let tile = shared_array!(T; TRANSPOSE_TILE, TRANSPOSE_TILE, padding = 1);
    let n = out.rows();
    let [bx, by, _] = block_idx().as_usize();
    let [tx, ty, _] = thread_idx().as_usize();
    // This block's tile of `out`: rows `j0..j0 + 32` (columns of B), columns
    // `c0..c0 + 32` (rows of B).
    let (j0, c0) = (by * S, bx * S);
    let mut wp = block;
    // tile[r][c] = B[c0 + r][j0 + c]: each warp reads a row run of B.
    tile.fill(&mut wp, |r, c| {
        let (row, col) = (c0 + r, j0 + c);
        if row < k && col < n {
            src[row * n + col]
        } else {
            T::default()
        }
    });
    let rd = wp.sync();
    // out[j0 + 4 ty + i][c0 + tx] = B[c0 + tx][j0 + 4 ty + i] = tile[tx][4 ty + i].
    let at = thread_index_2d();
    let mut i = 0;
    while i < S / TRANSPOSE_ROWS {
        out.set_at(at, i, tile.get(&rd, tx, (S / TRANSPOSE_ROWS) * ty + i));
        i += 1;
    }
}

// `transpose_k_major`'s output rows a thread: its parameter's `R`.
const _: () = assert!(TRANSPOSE_TILE / TRANSPOSE_ROWS == 4);

/// The kernels [`matmul`] runs; [`matmul_path`] says which one for an
/// element type on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// [`gemm_wgmma`]'s Hopper GEMMs (`wgmma`, sm_90a: compute capability
    /// 9.0 exactly), for `bf16` and `f16`.
    Wgmma,
    /// [`gemm_tc`]'s `mma.sync` GEMMs (sm_80 and later), for `bf16` and
    /// `f16`.
    MmaSync,
    /// [`sgemm`]'s register-tiled FP32 SGEMM (every device), for `f32`.
    Sgemm,
}

impl MatmulPath {
    /// The tensor-core path of a device of compute capability `(major,
    /// minor)`: `wgmma` on 9.0 (sm_90a code runs there only), `mma.sync`
    /// on the other devices of sm_80 and later, `None` before sm_80.
    pub fn tensor_cores(compute_capability: (u32, u32)) -> Option<MatmulPath> {
        match compute_capability {
            (9, 0) => Some(MatmulPath::Wgmma),
            cc if cc >= (8, 0) => Some(MatmulPath::MmaSync),
            _ => None,
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{matmul, matmul_on, matmul_path, MatmulElement};
