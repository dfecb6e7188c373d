//! `ldmatrix`: the 16-bit fragments loaded from shared memory by the whole
//! warp, from the block's dynamic shared memory ([`FragmentA::load_shared`],
//! [`FragmentB::load_shared`]) and from a `cp.async` ring's landed stage
//! ([`FragmentA::load_stage`], [`FragmentB::load_stage_pair`]).

use super::{check_stride, require_converged, FragmentA, FragmentB, SixteenBit};
#[cfg(target_arch = "nvptx64")]
use crate::arch;
use crate::cp_async::{Ready, CHUNKS_PER_ROW};

impl<T: SixteenBit> FragmentA<T> {
    /// [`load`](Self::load) from the block's dynamic shared memory, the
    /// tile starting at slot `offset`, with one `ldmatrix.x4` (every lane
    /// gives a row's address; 16-byte rows): the whole warp calls it
    /// together, as [`mma`](super::mma). Panics (before any lane reads) when the tile
    /// does not fit the array, when its rows are not 16-byte aligned (as
    /// `ldmatrix` reads them: `offset` and `row_stride` multiples of 8
    /// elements, in an aligned array), when `row_stride < 16`, or when the
    /// warp is not converged.
    #[track_caller]
    #[inline(always)]
    pub fn load_shared(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        row_stride: usize,
    ) -> FragmentA<T> {
        let tile = shared_tile(
            shared,
            block,
            offset,
            row_stride,
            16,
            "FragmentA::load_shared",
        );
        require_converged();
        #[cfg(target_arch = "nvptx64")]
        {
            let lane = arch::lane_id() as usize;
            let (matrix, row) = (lane / 8, lane % 8);
            let at = (row + 8 * (matrix & 1)) * row_stride + 8 * (matrix >> 1);
            // SAFETY: `at + 8 <= tile.len()` (15 rows of `row_stride` and
            // 16 elements fit: `shared_tile`), in shared memory, 16-byte
            // aligned (the tile's start is, and `row_stride` is a multiple
            // of 8 two-byte elements: `shared_tile` checked both); the warp
            // is converged (checked above).
            let regs = unsafe { arch::mma::ldmatrix_x4(tile.as_ptr().add(at).cast()) };
            FragmentA::from_registers(regs)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        FragmentA::load(tile, row_stride)
    }
}

impl<T: SixteenBit> FragmentB<T> {
    /// [`load`](Self::load) from the block's dynamic shared memory (`Bᵀ`
    /// row-major: 8 rows of 16, `col_stride` apart), starting at slot
    /// `offset`, with one `ldmatrix.x2`; as [`FragmentA::load_shared`].
    #[track_caller]
    #[inline(always)]
    pub fn load_shared(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        col_stride: usize,
    ) -> FragmentB<T> {
        let tile = shared_tile(
            shared,
            block,
            offset,
            col_stride,
            8,
            "FragmentB::load_shared",
        );
        require_converged();
        #[cfg(target_arch = "nvptx64")]
        {
            let lane = arch::lane_id() as usize % 16;
            let (matrix, row) = (lane / 8, lane % 8);
            let at = row * col_stride + 8 * matrix;
            // SAFETY: as in `FragmentA::load_shared`: 7 rows of `col_stride`
            // and 16 elements fit the tile.
            let regs = unsafe { arch::mma::ldmatrix_x2(tile.as_ptr().add(at).cast()) };
            FragmentB::from_registers(regs)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        FragmentB::load(tile, col_stride)
    }
}

/// The `rows` × 16 tile of `shared` at `offset`, `stride` apart, checked
/// for `ldmatrix`: in bounds, rows not overlapping, 16-byte rows.
#[track_caller]
#[inline(always)]
fn shared_tile<'r, E: crate::shared::SharedElement>(
    shared: &crate::shared::DynamicShared<E>,
    block: &'r crate::shared::Block<crate::shared::Reading>,
    offset: usize,
    stride: usize,
    rows: usize,
    what: &str,
) -> &'r [E] {
    check_stride(what, stride, 16);
    let all = shared.as_slice(block);
    let end = offset + (rows - 1) * stride + 16;
    if end > all.len() {
        tile_past_the_end(what, end, all.len())
    }
    let tile = &all[offset..end];
    // 2-byte elements: a stride of 8 keeps every row 16-byte aligned.
    if !(tile.as_ptr() as usize).is_multiple_of(16) || !stride.is_multiple_of(8) {
        misaligned(what, offset, stride)
    }
    tile
}

#[track_caller]
#[inline(never)]
#[cold]
fn misaligned(what: &str, offset: usize, stride: usize) -> ! {
    panic!("{what}: the tile at slot {offset} with a stride of {stride} elements has rows that are not 16-byte aligned, as ldmatrix reads them (a stride and an offset of multiples of 8 elements, in a 16-byte aligned array)")
}

#[track_caller]
#[inline(never)]
#[cold]
fn tile_past_the_end(what: &str, end: usize, len: usize) -> ! {
    panic!("{what}: the tile ends at slot {end}, past the shared array's {len}")
}

impl<T: SixteenBit> FragmentA<T> {
    /// The 16 × 16 tile of a landed ring stage at rows `row ..= row + 15`,
    /// chunks `chunk` and `chunk + 1` (columns `8 chunk ..= 8 chunk + 15`),
    /// with one `ldmatrix.x4` (the rows' swizzle undone): the whole warp
    /// calls it together, as [`mma`](super::mma). Panics (before any lane
    /// reads) when the tile is not inside the stage or the warp is not
    /// converged.
    #[track_caller]
    #[inline(always)]
    pub fn load_stage<const STAGES: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> FragmentA<T> {
        check_stage_tile(stage.rows(), row, chunk, "FragmentA::load_stage");
        require_converged();
        load_a_unchecked(stage, row, chunk)
    }
}

impl<T: SixteenBit> FragmentB<T> {
    /// Two B fragments from a landed ring stage holding `Bᵀ` (a row per
    /// column of B, K along the row): the first of rows `row ..= row + 7`,
    /// the second of rows `row + 8 ..= row + 15`, both of chunks `chunk`
    /// and `chunk + 1` (K = `8 chunk ..= 8 chunk + 15`), with one
    /// `ldmatrix.x4`. As [`FragmentA::load_stage`].
    #[track_caller]
    #[inline(always)]
    pub fn load_stage_pair<const STAGES: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> [FragmentB<T>; 2] {
        check_stage_tile(stage.rows(), row, chunk, "FragmentB::load_stage_pair");
        require_converged();
        load_b_pair_unchecked(stage, row, chunk)
    }
}

impl<T: SixteenBit> FragmentA<T> {
    /// `N` A fragments of a landed stage, tile `i` at rows `row + 16 i ..`,
    /// chunks `chunk` and `chunk + 1`: [`load_stage`](Self::load_stage)
    /// `N` times with one convergence check.
    #[track_caller]
    #[inline(always)]
    pub fn load_stage_column<const STAGES: usize, const N: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> [FragmentA<T>; N] {
        let what = "FragmentA::load_stage_column";
        check_stage_tile(
            stage.rows(),
            row.saturating_add(16 * N.saturating_sub(1)),
            chunk,
            what,
        );
        check_stage_tile(stage.rows(), row, chunk, what);
        require_converged();
        let mut out = [FragmentA::from_registers([0; 4]); N];
        crate::unroll::full::<N>(|i| out[i] = load_a_unchecked(stage, row + 16 * i, chunk));
        out
    }
}

impl<T: SixteenBit> FragmentB<T> {
    /// `2 N` B fragments of a landed stage, fragment `j` of rows `row + 8 j
    /// ..`: [`load_stage_pair`](Self::load_stage_pair) `N` times with one
    /// convergence check.
    #[track_caller]
    #[inline(always)]
    pub fn load_stage_column<const STAGES: usize, const N: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> [[FragmentB<T>; 2]; N] {
        let what = "FragmentB::load_stage_column";
        check_stage_tile(
            stage.rows(),
            row.saturating_add(16 * N.saturating_sub(1)),
            chunk,
            what,
        );
        check_stage_tile(stage.rows(), row, chunk, what);
        require_converged();
        let mut out = [[FragmentB::from_registers([0; 2]); 2]; N];
        crate::unroll::full::<N>(|p| out[p] = load_b_pair_unchecked(stage, row + 16 * p, chunk));
        out
    }
}

/// [`FragmentA::load_stage`] once its tile and the warp are checked.
#[inline(always)]
fn load_a_unchecked<T: SixteenBit, const STAGES: usize>(
    stage: &Ready<'_, T::Element, STAGES>,
    row: usize,
    chunk: usize,
) -> FragmentA<T> {
    #[cfg(target_arch = "nvptx64")]
    {
        // Lanes 0-15: rows of chunk `chunk` (registers 0, 1: rows 0-7,
        // 8-15); lanes 16-31: of chunk `chunk + 1` (registers 2, 3).
        let lane = arch::lane_id() as usize;
        let at = stage.chunk_ptr(row + lane % 16, chunk + lane / 16);
        // SAFETY: the caller checked rows `row + 15 < rows` and chunks
        // `chunk + 1 < 8`: 8 elements (16 bytes) of the stage, in shared
        // memory, 16-byte aligned (chunks are); landed, and written by
        // nobody while `stage` lives (`cp_async`); the warp converged.
        let regs = unsafe { arch::mma::ldmatrix_x4(at.cast()) };
        FragmentA::from_registers(regs)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    FragmentA::gather(|r, c| stage.get(row + r, 8 * chunk + c))
}

/// [`FragmentB::load_stage_pair`] once its tile and the warp are checked.
#[inline(always)]
fn load_b_pair_unchecked<T: SixteenBit, const STAGES: usize>(
    stage: &Ready<'_, T::Element, STAGES>,
    row: usize,
    chunk: usize,
) -> [FragmentB<T>; 2] {
    #[cfg(target_arch = "nvptx64")]
    {
        // Lanes 0-7: rows 0-7, chunk 0 (register 0); 8-15: rows 0-7,
        // chunk 1 (register 1); 16-23 and 24-31: rows 8-15 (registers 2
        // and 3, the second fragment).
        let lane = arch::lane_id() as usize;
        let at = stage.chunk_ptr(row + 8 * (lane / 16) + lane % 8, chunk + (lane / 8) % 2);
        // SAFETY: as in `load_a_unchecked`.
        let [r0, r1, r2, r3] = unsafe { arch::mma::ldmatrix_x4(at.cast()) };
        [
            FragmentB::from_registers([r0, r1]),
            FragmentB::from_registers([r2, r3]),
        ]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    [0, 8].map(|n0| FragmentB::gather(|k, n| stage.get(row + n0 + n, 8 * chunk + k)))
}

/// Panics unless the 16 rows from `row`, 2 chunks from `chunk`, are in a
/// stage of `rows` rows.
#[track_caller]
#[inline(always)]
fn check_stage_tile(rows: usize, row: usize, chunk: usize, what: &str) {
    if row.checked_add(16).is_none_or(|end| end > rows) || chunk >= CHUNKS_PER_ROW - 1 {
        stage_tile_outside(what, row, chunk, rows)
    }
}

#[track_caller]
#[inline(never)]
#[cold]
fn stage_tile_outside(what: &str, row: usize, chunk: usize, rows: usize) -> ! {
    panic!("{what}: the 16 rows from {row}, chunks {chunk} and the next, are not inside the stage's {rows} rows of {CHUNKS_PER_ROW} chunks")
}
