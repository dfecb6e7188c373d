//! [`DisjointMatrix<T, M>`]: a row-major output matrix divided among the
//! threads by a map, and the map of one row per block ([`RowPerBlock`]).
//! (The register-tile map, [`Tiles`](super::Tiles), is in `tiles.rs`.)

use super::{sealed, Map, MatrixMap, NotSend};
use crate::matrix::Shape2dU32;
use crate::race_check;
use crate::thread_owner::Owner;
use crate::vector::{store_vectors, write_run, VectorElement};
use core::marker::PhantomData;

/// A kernel's row-major `rows x cols` output matrix whose elements are
/// divided among the threads by the map `M`: [`RowPerBlock`] (each block a
/// row, its threads the row's columns by block stride, in runs) or
/// [`Tiles`](super::Tiles) (each thread a register tile). Each thread writes
/// only through its map's token ([`RowItems`], [`TileItems`](super::TileItems)).
///
/// Its extents are `u32`, as CUDA C's `int` indices: a matrix of at most
/// `u32::MAX` elements (the launcher refuses a larger one, naming the
/// parameter), whose column compares and offsets within a row are 32-bit.
///
/// On the host, a launcher takes a `DeviceView2dMut<T>`
/// (`buffer.view_2d_mut(rows, cols)?`) for it, as for a
/// [`DisjointSlice2dU32`](crate::DisjointSlice2dU32).
///
/// ```no_run
/// use gpu_device::ownership::{DisjointMatrix, RowItems, RowPerBlock};
///
/// // With `#[kernel]`: each block doubles its row, 4 columns per run.
/// pub fn double_rows(x: &[f32], mut out: DisjointMatrix<f32, RowPerBlock<4>>) {
///     let mine = RowItems::<4>::mine();
///     let cols = out.cols();
///     let mut j = 0;
///     while let Some(col) = mine.column(j).filter(|&c| c < cols) {
///         let at = mine.row() * cols + col;
///         let v: [f32; 4] = gpu_device::vector::read_run_or(x, at, 0.0);
///         out.set_run(&mine, j, v.map(|e| 2.0 * e));
///         j += 1;
///     }
/// }
/// ```
pub struct DisjointMatrix<'a, T, M: MatrixMap> {
    pub(crate) ptr: *mut T,
    rows: u32,
    cols: u32,
    /// `rows * cols`.
    len: u32,
    _borrow: PhantomData<(&'a mut [T], M)>,
}

impl<'a, T, M: MatrixMap> DisjointMatrix<'a, T, M> {
    /// A kernel's matrix parameter: `len == rows * cols` elements from `ptr`.
    ///
    /// # Safety
    /// As [`DisjointSlice2d::from_kernel_param`](crate::DisjointSlice2d):
    /// `ptr` is valid for reads and writes of `len == rows * cols` elements
    /// (the product computed without overflow) for `'a`, written by nothing
    /// else during the launch, and every thread of the launch gets a matrix
    /// over the same memory, with the same extents and the same map.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(ptr: *mut T, len: u32, rows: u32, cols: u32) -> Self {
        DisjointMatrix {
            ptr,
            rows,
            cols,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// The number of columns (elements per row). (A `usize` widened from
    /// the `u32` extent: compared with another widened `u32`, such as a
    /// [`RowItems::column`], the compare is 32-bit.)
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// The shape `rows x cols`, for an input view of the same shape.
    #[inline(always)]
    pub fn shape(&self) -> Shape2dU32 {
        // SAFETY: `len == rows * cols` (`from_kernel_param`).
        unsafe { Shape2dU32::with_len(self.rows, self.cols, self.len) }
    }

    /// The offset of `(row, col)` when inside the matrix.
    #[inline(always)]
    pub(crate) fn offset(&self, row: usize, col: usize) -> Option<usize> {
        // `row < rows`: `row * cols + col < len <= u32::MAX`, no overflow.
        (row < self.rows() && col < self.cols()).then(|| row * self.cols() + col)
    }

    /// Whether every run of `N` columns starting at a multiple of `N` is
    /// 16-byte aligned: the matrix starts aligned and its rows are a
    /// multiple of `N` elements (and of 16 bytes) long. The same in every
    /// thread, so the compiler tests it once.
    #[inline(always)]
    fn runs_aligned<const N: usize>(&self) -> bool {
        core::mem::size_of::<[T; N]>().is_multiple_of(16)
            && (self.ptr as usize).is_multiple_of(16)
            && self.cols().is_multiple_of(N)
    }

    /// Writes `values` at `(row, col ..)`, the elements left of `limit` and
    /// of the last column: 16-byte vector stores where the run is whole
    /// and aligned ([`runs_aligned`](Self::runs_aligned), `col` a multiple
    /// of `N`).
    ///
    /// # Safety
    /// The calling thread owns `(row, col + c)` for `c < N` under `M`.
    #[inline(always)]
    pub(crate) unsafe fn write_run_at<const N: usize>(
        &mut self,
        row: usize,
        col: usize,
        limit: usize,
        values: [T; N],
    ) where
        T: VectorElement,
    {
        let end = limit.min(self.cols());
        let Some(at) = self.offset(row, col) else {
            return;
        };
        if self.runs_aligned::<N>() && col.is_multiple_of(N) && end - col >= N {
            // SAFETY: `col + N <= end <= cols` in row `row < rows`: inside
            // the matrix, and the caller's; aligned: the matrix starts
            // aligned, rows and `col` are multiples of `N` elements, `N`
            // elements a multiple of 16 bytes.
            let first = unsafe { self.ptr.add(at) };
            race_check::write_range(first, N);
            // SAFETY: as above.
            unsafe { store_vectors(first, values) };
        } else {
            // SAFETY: `row < rows`, so the row's elements below `end <=
            // cols` are inside the matrix: `write_run` writes `col + c <
            // end`, which the caller owns.
            unsafe { write_run(self.ptr, at, at - col + end, values) };
        }
    }
}

/// Block `b` ([`block_rank`](crate::leader::block_rank)) owns row `b`; its
/// thread `t` (of `B`) owns the runs of `RUN` consecutive columns `(t + j
/// B) RUN ..`, `j = 0, 1, ...`: one block per row on a grid of any shape
/// (a 1-D grid holds 2^31 - 1 rows), rows of any width (wider than the
/// block: several runs per thread). `RUN = 1` is the block-stride loop
/// over the row's columns; `RUN = 4` its `float4` form; one run per thread
/// (`B RUN` columns) is CUB's blocked arrangement within the row.
///
/// Disjoint: distinct blocks own distinct rows; in a row, run `q` of
/// columns `q RUN ..` is owned by thread `q mod B` alone.
pub enum RowPerBlock<const RUN: usize = 1> {}

impl<const RUN: usize> sealed::Sealed for RowPerBlock<RUN> {}
impl<const RUN: usize> Map for RowPerBlock<RUN> {}
impl<const RUN: usize> MatrixMap for RowPerBlock<RUN> {}

/// This thread's row and runs under [`RowPerBlock<RUN>`]: from
/// [`RowItems::mine`], neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct RowItems<const RUN: usize> {
    row: usize,
    rank: u32,
    threads: u32,
    owner: Owner,
    _thread: NotSend,
}

impl<const RUN: usize> RowItems<RUN> {
    /// This thread's: its block's row, its rank and the block's size.
    #[inline(always)]
    pub fn mine() -> Self {
        const { assert!(RUN >= 1 && RUN <= 1 << 16, "a run has 1 to 65536 columns") };
        RowItems {
            row: crate::leader::block_rank(),
            // A rank and a block size fit in 32 bits (at most 1024 threads).
            rank: crate::thread::thread_rank() as u32,
            threads: crate::thread::block_size() as u32,
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// The row this block owns.
    #[inline(always)]
    pub fn row(&self) -> usize {
        self.row
    }

    /// The first column of this thread's `j`-th run, `(t + j B) RUN`, or
    /// `None` past `u32::MAX` (no matrix has such a column). Computed in
    /// 32 bits, as CUDA's `int` indices: compared with a matrix's
    /// [`cols`](DisjointMatrix::cols), the compare is 32-bit.
    #[inline(always)]
    pub fn column(&self, j: usize) -> Option<usize> {
        let run = u32::try_from(j)
            .ok()?
            .checked_mul(self.threads)?
            .checked_add(self.rank)?;
        Some(run.checked_mul(RUN as u32)? as usize)
    }
}

impl<'a, T, const RUN: usize> DisjointMatrix<'a, T, RowPerBlock<RUN>> {
    /// Writes `value` at column `c` of this thread's `j`-th run (`c <
    /// RUN`); returns `false` outside the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, items: &RowItems<RUN>, j: usize, c: usize, value: T) -> bool {
        items.owner.check("a RowItems token");
        let at = items
            .column(j)
            .filter(|_| c < RUN)
            .and_then(|col| self.offset(items.row, col + c));
        match at {
            Some(at) => {
                // SAFETY: inside the matrix; `(row, col + c)` is this
                // thread's under `RowPerBlock<RUN>`, every thread's map.
                let element = unsafe { self.ptr.add(at) };
                race_check::write(element);
                // SAFETY: as above.
                unsafe { element.write(value) };
                true
            }
            None => false,
        }
    }

    /// Writes this thread's `j`-th run, its columns inside the matrix:
    /// 16-byte vector stores where the run is whole and aligned.
    #[inline(always)]
    #[track_caller]
    pub fn set_run(&mut self, items: &RowItems<RUN>, j: usize, values: [T; RUN])
    where
        T: VectorElement,
    {
        items.owner.check("a RowItems token");
        if let Some(col) = items.column(j) {
            // SAFETY: the run's columns are this thread's (see `set`).
            unsafe { self.write_run_at(items.row, col, usize::MAX, values) };
        }
    }
}
