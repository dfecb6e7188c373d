//! `ldmatrix`: the 16-bit fragments loaded from shared memory by the whole
//! warp, from the block's dynamic shared memory ([`FragmentA::load_shared`],
//! [`FragmentB::load_shared`], and with `.trans` from the other layout:
//! [`FragmentA::load_shared_cols`], [`FragmentB::load_shared_rows`]) and from a `cp.async` ring's landed stage
//! ([`FragmentA::load_stage`], [`FragmentB::load_stage_pair`]).

use super::{check_stride, require_converged, Accumulator, FragmentA, FragmentB, SixteenBit};
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
        load_shared_checked::<T, Self, Rows>(shared, block, offset, row_stride)
    }

    /// The 16 × 16 tile whose element `(row, col)` is at slot `offset +
    /// col * col_stride + row` of the block's dynamic shared memory (A
    /// column-major: `Aᵀ` row-major, 16 rows of 16), with one
    /// `ldmatrix.x4.trans`; as [`load_shared`](Self::load_shared) (`col_stride`
    /// at least 16, a multiple of 8).
    #[track_caller]
    #[inline(always)]
    pub fn load_shared_cols(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        col_stride: usize,
    ) -> FragmentA<T> {
        load_shared_checked::<T, Self, Transposed>(shared, block, offset, col_stride)
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
        load_shared_checked::<T, Self, Rows>(shared, block, offset, col_stride)
    }

    /// [`load_rows`](Self::load_rows) from the block's dynamic shared
    /// memory (B row-major: 16 rows of 8, `row_stride` apart, as `C = A B`
    /// reads it), starting at slot `offset`, with one `ldmatrix.x2.trans`;
    /// as [`FragmentA::load_shared`] (`row_stride` at least 8, a multiple
    /// of 8).
    #[track_caller]
    #[inline(always)]
    pub fn load_shared_rows(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        row_stride: usize,
    ) -> FragmentB<T> {
        load_shared_checked::<T, Self, Transposed>(shared, block, offset, row_stride)
    }
}

/// `ldmatrix` without `.trans`: each 8 × 8 matrix's rows are the tile's
/// rows as stored.
enum Rows {}
/// `ldmatrix.trans`: each 8 × 8 matrix is stored transposed (its rows are
/// the fragment's columns).
enum Transposed {}

/// What one `ldmatrix` loads from the block's dynamic shared memory, as
/// stored in the layout `L` ([`Rows`] or [`Transposed`]): a fragment whose
/// tile is stored as `ROWS` rows of `ROW_LEN` elements, `stride` apart,
/// each lane giving the address of 8 elements of one stored row. The
/// check-then-load body, [`load_shared_checked`], is written once over it.
trait SharedTile<T: SixteenBit, L>: Sized {
    /// The stored rows.
    const ROWS: usize;
    /// The elements of a stored row (16, or 8 for one matrix across).
    const ROW_LEN: usize;
    /// The name in reports.
    const WHAT: &'static str;
    /// The slot (from the tile's start) of the 8 elements `lane`
    /// addresses, inside the tile.
    #[cfg(target_arch = "nvptx64")]
    fn lane_slot(lane: usize, stride: usize) -> usize;
    /// The `ldmatrix` of the fragment, every lane giving its row.
    ///
    /// # Safety
    /// As [`arch::mma::ldmatrix_x4`]: this lane's row, `offset` bytes past
    /// `base`, in shared memory, 16-byte aligned, 8 readable elements; the
    /// warp converged.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldmatrix(base: *const u16, offset: usize) -> Self;
    /// The simulator's load of the same elements.
    #[cfg(not(target_arch = "nvptx64"))]
    fn load(tile: &[T::Element], stride: usize) -> Self;
}

impl<T: SixteenBit> SharedTile<T, Rows> for FragmentA<T> {
    const ROWS: usize = 16;
    const ROW_LEN: usize = 16;
    const WHAT: &'static str = "FragmentA::load_shared";
    #[cfg(target_arch = "nvptx64")]
    fn lane_slot(lane: usize, stride: usize) -> usize {
        // Matrices 0-3 (registers 0-3): rows 0-7 and 8-15 of columns 0-7,
        // then of 8-15.
        let (matrix, row) = (lane / 8, lane % 8);
        (row + 8 * (matrix & 1)) * stride + 8 * (matrix >> 1)
    }
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldmatrix(base: *const u16, offset: usize) -> Self {
        // SAFETY: the caller's contract.
        FragmentA::from_registers(unsafe { arch::mma::ldmatrix_x4(base, offset) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn load(tile: &[T::Element], stride: usize) -> Self {
        FragmentA::load(tile, stride)
    }
}

impl<T: SixteenBit> SharedTile<T, Transposed> for FragmentA<T> {
    const ROWS: usize = 16;
    const ROW_LEN: usize = 16;
    const WHAT: &'static str = "FragmentA::load_shared_cols";
    #[cfg(target_arch = "nvptx64")]
    fn lane_slot(lane: usize, stride: usize) -> usize {
        // Stored rows are A's columns: matrix j (register j) holds A's rows
        // 8 (j & 1) .., columns 8 (j >> 1) ..: stored rows 8 (j >> 1) ..,
        // elements 8 (j & 1) ..
        let (matrix, row) = (lane / 8, lane % 8);
        (row + 8 * (matrix >> 1)) * stride + 8 * (matrix & 1)
    }
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldmatrix(base: *const u16, offset: usize) -> Self {
        // SAFETY: the caller's contract.
        FragmentA::from_registers(unsafe { arch::mma::ldmatrix_x4_trans(base, offset) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn load(tile: &[T::Element], stride: usize) -> Self {
        FragmentA::gather(|row, col| tile[col * stride + row])
    }
}

impl<T: SixteenBit> SharedTile<T, Rows> for FragmentB<T> {
    const ROWS: usize = 8;
    const ROW_LEN: usize = 16;
    const WHAT: &'static str = "FragmentB::load_shared";
    #[cfg(target_arch = "nvptx64")]
    fn lane_slot(lane: usize, stride: usize) -> usize {
        // Lanes 0-15 address (the others' addresses are not read): matrix
        // 0, elements 0-7 of the stored rows; matrix 1, elements 8-15.
        let (matrix, row) = (lane % 16 / 8, lane % 8);
        row * stride + 8 * matrix
    }
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldmatrix(base: *const u16, offset: usize) -> Self {
        // SAFETY: the caller's contract (lanes 0-15's rows are read).
        FragmentB::from_registers(unsafe { arch::mma::ldmatrix_x2(base, offset) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn load(tile: &[T::Element], stride: usize) -> Self {
        FragmentB::load(tile, stride)
    }
}

impl<T: SixteenBit> SharedTile<T, Transposed> for FragmentB<T> {
    const ROWS: usize = 16;
    const ROW_LEN: usize = 8;
    const WHAT: &'static str = "FragmentB::load_shared_rows";
    #[cfg(target_arch = "nvptx64")]
    fn lane_slot(lane: usize, stride: usize) -> usize {
        // Lanes 0-15 address B's rows (K) 0-15: matrix 0 (register 0) K
        // 0-7, matrix 1 K 8-15; the others' addresses are not read.
        (lane % 16) * stride
    }
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldmatrix(base: *const u16, offset: usize) -> Self {
        // SAFETY: the caller's contract (lanes 0-15's rows are read).
        FragmentB::from_registers(unsafe { arch::mma::ldmatrix_x2_trans(base, offset) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn load(tile: &[T::Element], stride: usize) -> Self {
        FragmentB::load_rows(tile, stride)
    }
}

/// The shared-memory loads' one body: the tile checked ([`shared_tile`]),
/// the warp converged, then one `ldmatrix`.
#[track_caller]
#[inline(always)]
fn load_shared_checked<T: SixteenBit, F: SharedTile<T, L>, L>(
    shared: &crate::shared::DynamicShared<T::Element>,
    block: &crate::shared::Block<crate::shared::Reading>,
    offset: usize,
    stride: usize,
) -> F {
    let tile = shared_tile(
        shared,
        block,
        offset,
        stride,
        (F::ROWS, F::ROW_LEN),
        F::WHAT,
    );
    require_converged();
    #[cfg(target_arch = "nvptx64")]
    {
        let at = F::lane_slot(arch::lane_id() as usize, stride);
        // SAFETY: `at + 8 <= tile.len()` (a lane addresses 8 elements of
        // one of the tile's `ROWS` stored rows, within its `ROW_LEN`:
        // `shared_tile` checked they fit), in shared memory, 16-byte
        // aligned (the tile's start is, `stride` is a multiple of 8
        // two-byte elements: `shared_tile` checked both, and lanes
        // address multiples of 8 elements within a row); the warp is
        // converged (checked above).
        unsafe {
            F::ldmatrix(
                tile.as_ptr().cast(),
                at * core::mem::size_of::<T::Element>(),
            )
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    F::load(tile, stride)
}

/// The tile of `rows` rows of `row_len` elements of `shared` at `offset`,
/// `stride` apart, checked for `ldmatrix`: in bounds, rows not
/// overlapping, 16-byte aligned rows.
#[track_caller]
#[inline(always)]
fn shared_tile<'r, E: crate::shared::SharedElement>(
    shared: &'r crate::shared::DynamicShared<E>,
    block: &'r crate::shared::Block<crate::shared::Reading>,
    offset: usize,
    stride: usize,
    (rows, row_len): (usize, usize),
    what: &str,
) -> &'r [E] {
    check_stride(what, stride, row_len);
    let all = shared.as_slice(block);
    let end = (rows - 1)
        .saturating_mul(stride)
        .saturating_add(offset)
        .saturating_add(row_len);
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
        let [fragment] =
            load_stage_checked::<T, Self, STAGES, 1>(stage, row, chunk, "FragmentA::load_stage");
        fragment
    }

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
        load_stage_checked::<T, Self, STAGES, N>(stage, row, chunk, "FragmentA::load_stage_column")
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
        let [pair] = load_stage_checked::<T, [Self; 2], STAGES, 1>(
            stage,
            row,
            chunk,
            "FragmentB::load_stage_pair",
        );
        pair
    }

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
        load_stage_checked::<T, [Self; 2], STAGES, N>(
            stage,
            row,
            chunk,
            "FragmentB::load_stage_column",
        )
    }
}

/// What one `ldmatrix.x4` loads from a landed ring stage: a 16 × 16 tile
/// (rows `row ..`, chunks `chunk` and `chunk + 1`) as an A fragment or a
/// pair of B fragments. The check-then-load body, [`load_stage_checked`],
/// is written once over it.
trait StageTile<T: SixteenBit>: Sized + Copy {
    /// The fragment of the four matrices' registers.
    fn from_x4(regs: [u32; 4]) -> Self;
    /// The `(row, chunk)` (from the tile's) whose 8 elements `lane`
    /// addresses.
    #[cfg(target_arch = "nvptx64")]
    fn lane_at(lane: usize) -> (usize, usize);
    /// The simulator's load of the tile.
    #[cfg(not(target_arch = "nvptx64"))]
    fn gather<const STAGES: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> Self;
}

impl<T: SixteenBit> StageTile<T> for FragmentA<T> {
    fn from_x4(regs: [u32; 4]) -> Self {
        FragmentA::from_registers(regs)
    }
    #[cfg(target_arch = "nvptx64")]
    fn lane_at(lane: usize) -> (usize, usize) {
        // Lanes 0-15: rows of chunk `chunk` (registers 0, 1: rows 0-7,
        // 8-15); lanes 16-31: of chunk `chunk + 1` (registers 2, 3).
        (lane % 16, lane / 16)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn gather<const STAGES: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> Self {
        FragmentA::gather(|r, c| stage.get(row + r, 8 * chunk + c))
    }
}

impl<T: SixteenBit> StageTile<T> for [FragmentB<T>; 2] {
    fn from_x4([r0, r1, r2, r3]: [u32; 4]) -> Self {
        [
            FragmentB::from_registers([r0, r1]),
            FragmentB::from_registers([r2, r3]),
        ]
    }
    #[cfg(target_arch = "nvptx64")]
    fn lane_at(lane: usize) -> (usize, usize) {
        // Lanes 0-7: rows 0-7, chunk 0 (register 0); 8-15: rows 0-7,
        // chunk 1 (register 1); 16-23 and 24-31: rows 8-15 (registers 2
        // and 3, the second fragment).
        (8 * (lane / 16) + lane % 8, (lane / 8) % 2)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    fn gather<const STAGES: usize>(
        stage: &Ready<'_, T::Element, STAGES>,
        row: usize,
        chunk: usize,
    ) -> Self {
        [0, 8].map(|n0| FragmentB::gather(|k, n| stage.get(row + n0 + n, 8 * chunk + k)))
    }
}

/// The stage loads' one body: `N` tiles, tile `i` at rows `row + 16 i ..`,
/// chunks `chunk` and `chunk + 1`, checked to be inside the stage (the
/// first and the last), the warp checked converged once, then one
/// `ldmatrix.x4` each.
#[track_caller]
#[inline(always)]
fn load_stage_checked<T: SixteenBit, F: StageTile<T>, const STAGES: usize, const N: usize>(
    stage: &Ready<'_, T::Element, STAGES>,
    row: usize,
    chunk: usize,
    what: &str,
) -> [F; N] {
    check_stage_tile(
        stage.rows(),
        row.saturating_add(16 * N.saturating_sub(1)),
        chunk,
        what,
    );
    check_stage_tile(stage.rows(), row, chunk, what);
    require_converged();
    let mut out = [F::from_x4([0; 4]); N];
    crate::unroll::full::<N>(|i| out[i] = load_stage_unchecked(stage, row + 16 * i, chunk));
    out
}

/// `acc[i][j] = A_i B_j + acc[i][j]` over `K_STEPS` steps of K = 16 of a
/// landed ring stage that holds A's rows and B's columns as rows (`Bᵀ`,
/// K along each row): at step `s`, with chunks `chunk + 2 s` and the next,
/// A fragment `i` is the tile at rows `a_row + 16 i ..` and B fragments
/// `2 p`, `2 p + 1` the pair at rows `b_row + 16 p ..`. The same as
/// [`FragmentA::load_stage_column`], [`FragmentB::load_stage_column`] and
/// [`mma_grid`](super::mma_grid) at each step, with one convergence check
/// for all of them: no branch between a step's products and the next
/// step's loads, so that the scheduler issues the next `ldmatrix`es under
/// this step's `mma`s (nvcc does the same with a k-block written out; with
/// a check each load and product, the loads waited for the products).
/// `J` is even. Panics (before any lane reads) when a tile is not inside
/// the stage or the warp is not converged.
#[track_caller]
#[inline(always)]
pub fn mma_stage_steps<
    T: SixteenBit,
    const K_STEPS: usize,
    const STAGES: usize,
    const I: usize,
    const J: usize,
>(
    stage: &Ready<'_, T::Element, STAGES>,
    a_row: usize,
    b_row: usize,
    chunk: usize,
    acc: &mut [[Accumulator; J]; I],
) {
    const {
        assert!(
            J.is_multiple_of(2),
            "mma_stage_steps: B fragments come in pairs, J is even"
        )
    };
    let last_chunk = chunk.saturating_add(2 * K_STEPS.saturating_sub(1));
    let what = "mma_stage_steps";
    let rows = stage.rows();
    // Rows and chunks grow with `i`, `p` and `s`: the first and last
    // tiles of each operand inside the stage put every tile inside it.
    check_stage_tile(rows, a_row, chunk, what);
    check_stage_tile(
        rows,
        a_row.saturating_add(16 * I.saturating_sub(1)),
        last_chunk,
        what,
    );
    check_stage_tile(rows, b_row, chunk, what);
    check_stage_tile(
        rows,
        b_row.saturating_add(16 * (J / 2).saturating_sub(1)),
        last_chunk,
        what,
    );
    require_converged();
    crate::unroll::full::<K_STEPS>(|s| {
        stage_step_unchecked::<T, STAGES, I, J>(stage, a_row, b_row, chunk + 2 * s, acc)
    });
}

/// One step of [`mma_stage_steps`], its tiles and the warp checked.
#[inline(always)]
fn stage_step_unchecked<T: SixteenBit, const STAGES: usize, const I: usize, const J: usize>(
    stage: &Ready<'_, T::Element, STAGES>,
    a_row: usize,
    b_row: usize,
    chunk: usize,
    acc: &mut [[Accumulator; J]; I],
) {
    let mut a = [FragmentA::<T>::from_registers([0; 4]); I];
    crate::unroll::full::<I>(|i| {
        a[i] = load_stage_unchecked::<T, FragmentA<T>, STAGES>(stage, a_row + 16 * i, chunk)
    });
    let mut b = [FragmentB::<T>::from_registers([0; 2]); J];
    crate::unroll::full::<J>(|j| {
        if j.is_multiple_of(2) {
            let [b0, b1] =
                load_stage_unchecked::<T, [FragmentB<T>; 2], STAGES>(stage, b_row + 8 * j, chunk);
            b[j] = b0;
            b[j + 1] = b1;
        }
    });
    crate::unroll::full::<I>(|i| {
        crate::unroll::full::<J>(|j| {
            acc[i][j].values = T::mma(a[i].regs, b[j].regs, acc[i][j].values);
        })
    });
}

/// One tile of [`load_stage_checked`], once it and the warp are checked.
#[inline(always)]
fn load_stage_unchecked<T: SixteenBit, F: StageTile<T>, const STAGES: usize>(
    stage: &Ready<'_, T::Element, STAGES>,
    row: usize,
    chunk: usize,
) -> F {
    #[cfg(target_arch = "nvptx64")]
    {
        let (r, c) = F::lane_at(arch::lane_id() as usize);
        let at = Ready::<T::Element, STAGES>::chunk_offset(row + r, chunk + c);
        // SAFETY: the caller checked rows `row + 15 < rows` and chunks
        // `chunk + 1 < 8` (`r < 16`, `c < 2`): 8 elements (16 bytes) of
        // the stage, in shared memory, 16-byte aligned (chunks are);
        // landed, and written by nobody while `stage` lives (`cp_async`);
        // the warp converged.
        F::from_x4(unsafe { arch::mma::ldmatrix_x4(stage.base().cast(), at) })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    F::gather(stage, row, chunk)
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
