//! Register tiles ([`Tiles`]): each thread owns a `TM x TN` tile of a
//! matrix, placed by a thread map along each axis ([`Axis`]) the way
//! CUTLASS's thread maps place them, so that a warp's stores coalesce.

use super::matrix::DisjointMatrix;
use super::{sealed, Map, MatrixMap, NotSend, SharedMap};
use crate::race_check;
use crate::thread_owner::Owner;
use crate::vector::VectorElement;
use core::marker::PhantomData;

/// One axis of a tile map: `THREADS` threads along the axis, each owning
/// `RUNS` runs of `RUN` consecutive indices, the runs `THREADS * RUN`
/// apart. The thread at position `p < THREADS` owns indices `(q THREADS +
/// p) RUN + c` for `q < RUNS`, `c < RUN`; together the threads own `SPAN =
/// THREADS * RUN * RUNS` indices, each once.
///
/// `Axis<16, 4>`: 16 threads, 4 consecutive indices each (a 64-wide tile,
/// thread `p` at `4 p ..`); `Axis<16, 4, 2>`: the same twice, 64 apart (a
/// 128-wide tile, thread `p` at `4 p ..` and `64 + 4 p ..`: a warp's
/// 16-byte stores are 16 consecutive vectors); `Axis<32, 1>`: one index per
/// thread.
pub enum Axis<const THREADS: usize, const RUN: usize = 1, const RUNS: usize = 1> {}

/// An [`Axis`]'s numbers. Sealed.
pub trait AxisMap: sealed::Sealed + 'static {
    /// Threads along the axis.
    const THREADS: usize;
    /// Consecutive indices per run.
    const RUN: usize;
    /// Runs per thread.
    const RUNS: usize;
    /// Indices per thread: `RUN * RUNS`.
    const PER_THREAD: usize = Self::RUN * Self::RUNS;
    /// Indices of the block's tile along the axis: `THREADS * RUN * RUNS`.
    const SPAN: usize = Self::THREADS * Self::RUN * Self::RUNS;
}

impl<const THREADS: usize, const RUN: usize, const RUNS: usize> sealed::Sealed
    for Axis<THREADS, RUN, RUNS>
{
}
impl<const THREADS: usize, const RUN: usize, const RUNS: usize> AxisMap
    for Axis<THREADS, RUN, RUNS>
{
    const THREADS: usize = THREADS;
    const RUN: usize = RUN;
    const RUNS: usize = RUNS;
}

/// Which axis a thread's rank walks first: [`ColsFirst`] (thread `t` at
/// column position `t % C::THREADS`, row position `t / C::THREADS`) or
/// [`RowsFirst`]. Sealed.
pub trait ThreadOrder: sealed::Sealed + 'static {
    /// Whether consecutive ranks are consecutive row positions.
    const ROWS_FIRST: bool;
}

/// Consecutive ranks take consecutive column positions (the usual order:
/// a warp spans columns).
pub enum ColsFirst {}

/// Consecutive ranks take consecutive row positions (a tile stored
/// transposed, as SGEMM's `As[k][m]`).
pub enum RowsFirst {}

impl sealed::Sealed for ColsFirst {}
impl sealed::Sealed for RowsFirst {}
impl ThreadOrder for ColsFirst {
    const ROWS_FIRST: bool = false;
}
impl ThreadOrder for RowsFirst {
    const ROWS_FIRST: bool = true;
}

/// Register tiles: a block of `R::THREADS * C::THREADS` threads covers an
/// `R::SPAN x C::SPAN` tile of the matrix, each thread the `R::PER_THREAD x
/// C::PER_THREAD` elements its two axes give it ([`Axis`]); the thread's
/// position along each axis comes from its rank in the order `O`.
///
/// In a [`DisjointMatrix`], block `(x, y, z)` covers the tile at tile row
/// `y + Y z`, tile column `x`; in a shared array (`shared_array!(T; ROWS,
/// COLS, map = Tiles<R, C>)` with `ROWS = R::SPAN` and `COLS = C::SPAN`),
/// the whole array.
///
/// ```text
/// SGEMM 4 x 4 (256 threads, 64 x 64 tile):        Tiles<Axis<16, 4>, Axis<16, 4>>
/// SGEMM 8 x 8 (256 threads, 128 x 128, quarters): Tiles<Axis<16, 4, 2>, Axis<16, 4, 2>>
/// 4 rows of one column (a 32 x 8 block, 32 x 32):  Tiles<Axis<8, 4>, Axis<32>>
/// ```
///
/// Disjoint: along an axis, `(p, q, c) -> (q THREADS + p) RUN + c` names
/// each index of the span once; the rank names each pair of positions once
/// when the block has exactly `R::THREADS * C::THREADS` threads, which the
/// launcher checks (and each token checks again); distinct blocks have
/// distinct tiles (`(y, z) -> y + Y z` is one to one).
pub enum Tiles<R: AxisMap, C: AxisMap, O: ThreadOrder = ColsFirst> {
    #[doc(hidden)]
    _Never(core::convert::Infallible, PhantomData<(R, C, O)>),
}

impl<R: AxisMap, C: AxisMap, O: ThreadOrder> sealed::Sealed for Tiles<R, C, O> {}
impl<R: AxisMap, C: AxisMap, O: ThreadOrder> Map for Tiles<R, C, O> {
    const BLOCK_THREADS: u32 = {
        assert!(
            R::THREADS >= 1 && C::THREADS >= 1 && R::THREADS * C::THREADS <= 1024,
            "a tile map needs 1 to 1024 threads"
        );
        assert!(
            R::RUN >= 1 && R::RUNS >= 1 && C::RUN >= 1 && C::RUNS >= 1,
            "a tile map's runs are at least 1 long and 1 many"
        );
        assert!(
            R::SPAN <= 1 << 16 && C::SPAN <= 1 << 16,
            "a tile spans at most 65536 rows and columns"
        );
        (R::THREADS * C::THREADS) as u32
    };
}
impl<R: AxisMap, C: AxisMap, O: ThreadOrder> MatrixMap for Tiles<R, C, O> {}
impl<R: AxisMap, C: AxisMap, O: ThreadOrder> SharedMap for Tiles<R, C, O> {}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn wrong_block_size(wanted: u32, got: usize) -> ! {
    panic!("these register tiles are made for blocks of {wanted} threads; this block has {got}")
}

/// The positions `(row, col)` of a thread of rank `rank` along the two axes
/// of `Tiles<R, C, O>`, in a block of `size` threads (panics unless `size`
/// is the map's).
#[inline(always)]
#[track_caller]
pub(crate) fn positions<R: AxisMap, C: AxisMap, O: ThreadOrder>(
    rank: usize,
    size: usize,
) -> (usize, usize) {
    let threads = <Tiles<R, C, O> as Map>::BLOCK_THREADS;
    if size != threads as usize {
        wrong_block_size(threads, size);
    }
    // SAFETY: a rank is below its block's size, checked equal to the
    // map's thread count just above.
    unsafe { crate::arch::assume(rank < threads as usize) };
    if O::ROWS_FIRST {
        (rank % R::THREADS, rank / R::THREADS)
    } else {
        (rank / C::THREADS, rank % C::THREADS)
    }
}

/// The offset within a span of a thread at position `p` of its `i`-th
/// index along axis `A`, or `None` for `i >= A::PER_THREAD`.
#[inline(always)]
pub(crate) fn along<A: AxisMap>(p: usize, i: usize) -> Option<usize> {
    (i < A::PER_THREAD).then(|| (i / A::RUN * A::THREADS + p) * A::RUN + i % A::RUN)
}

/// This thread's register tile under [`Tiles<R, C, O>`]: the first row and
/// column it owns in the matrix. From [`TileItems::mine`]; neither `Send`
/// nor `Sync`.
pub struct TileItems<M> {
    row0: usize,
    col0: usize,
    owner: Owner,
    _map: PhantomData<fn() -> M>,
    _thread: NotSend,
}

impl<M> Clone for TileItems<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for TileItems<M> {}

impl<R: AxisMap, C: AxisMap, O: ThreadOrder> TileItems<Tiles<R, C, O>> {
    /// This thread's tile: its block's tile, its positions by rank. Panics
    /// (a trap on the GPU) unless the block has the map's thread count (the
    /// launcher refuses such launches first).
    #[inline(always)]
    #[track_caller]
    pub fn mine() -> Self {
        let (pr, pc) = positions::<R, C, O>(crate::thread_rank(), crate::block_size());
        let ([bx, by, bz], [_, gy, _]) = (crate::arch::block_idx(), crate::arch::grid_dim());
        // Tile rows `y + Y z < 2^48` and columns `x < 2^32`, times spans of
        // at most 2^16 (checked with the map): no overflow.
        let tile_row = by as usize + gy as usize * bz as usize;
        TileItems {
            row0: tile_row * R::SPAN + pr * R::RUN,
            col0: bx as usize * C::SPAN + pc * C::RUN,
            owner: Owner::current(),
            _map: PhantomData,
            _thread: PhantomData,
        }
    }

    /// The row of this thread's `i`-th tile row, or `None` for `i >=
    /// R::PER_THREAD`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> Option<usize> {
        (i < R::PER_THREAD).then(|| self.row0 + i / R::RUN * (R::THREADS * R::RUN) + i % R::RUN)
    }

    /// The column of this thread's `j`-th tile column, or `None` for `j >=
    /// C::PER_THREAD`.
    #[inline(always)]
    pub fn col(&self, j: usize) -> Option<usize> {
        (j < C::PER_THREAD).then(|| self.col0 + j / C::RUN * (C::THREADS * C::RUN) + j % C::RUN)
    }
}

impl<'a, T, R: AxisMap, C: AxisMap, O: ThreadOrder> DisjointMatrix<'a, T, Tiles<R, C, O>> {
    /// Writes `value` at this thread's tile element `(i, j)`; returns
    /// `false` outside the matrix or the tile.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, tile: &TileItems<Tiles<R, C, O>>, i: usize, j: usize, value: T) -> bool {
        tile.owner.check("a TileItems token");
        let at = tile
            .row(i)
            .zip(tile.col(j))
            .and_then(|(row, col)| self.offset(row, col));
        match at {
            Some(at) => {
                // SAFETY: inside the matrix; the element is this thread's
                // under `Tiles<R, C, O>`, every thread's map.
                let element = unsafe { self.ptr.add(at) };
                race_check::write(element);
                // SAFETY: as above.
                unsafe { element.write(value) };
                true
            }
            None => false,
        }
    }

    /// Writes run `r` of this thread's tile row `i` (`C::RUN` consecutive
    /// columns; `N` must be `C::RUN`), its columns inside the matrix:
    /// 16-byte vector stores where the run is whole and aligned.
    #[inline(always)]
    #[track_caller]
    pub fn set_run<const N: usize>(
        &mut self,
        tile: &TileItems<Tiles<R, C, O>>,
        i: usize,
        r: usize,
        values: [T; N],
    ) where
        T: VectorElement,
    {
        self.set_run_within(tile, i, r, values, usize::MAX)
    }

    /// [`set_run`](Self::set_run), writing only the columns left of
    /// `limit` (a matrix whose rows are padded past its logical width).
    #[inline(always)]
    #[track_caller]
    pub fn set_run_within<const N: usize>(
        &mut self,
        tile: &TileItems<Tiles<R, C, O>>,
        i: usize,
        r: usize,
        values: [T; N],
        limit: usize,
    ) where
        T: VectorElement,
    {
        const { assert!(N == C::RUN, "a run of a tile has C::RUN columns") };
        tile.owner.check("a TileItems token");
        if let (Some(row), Some(col)) = (tile.row(i), tile.col(r.saturating_mul(C::RUN))) {
            // SAFETY: columns `col .. col + RUN` of `row` are this thread's
            // (run `r` of tile row `i`).
            unsafe { self.write_run_at(row, col, limit, values) };
        }
    }
}
