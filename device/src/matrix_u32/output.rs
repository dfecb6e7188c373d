//! [`DisjointSlice2dU32`]: a kernel's output matrix with `u32` extents, each
//! thread writing only the elements its 2-D witness names.

use super::Shape2dU32;
use crate::race_check;
use crate::witness::ThreadIndex2d;
use core::marker::PhantomData;

/// A kernel's row-major `rows x cols` output matrix of at most `u32::MAX`
/// elements: [`DisjointSlice2d<T, R>`](crate::DisjointSlice2d) with `u32`
/// extents and offsets.
///
/// Each thread may read and write only the elements its [`ThreadIndex2d`]
/// names, with the same mapping as `DisjointSlice2d<T, R>`: thread `(x, y)`
/// owns rows `y * R .. y * R + R` of column `x` (`R = 1`, the default: the
/// one element `(y, x)`). Bounds are checked per axis.
///
/// On the host, a launcher takes a `DeviceView2dMut<T>`
/// (`buffer.view_2d_mut(rows, cols)?`) for it, as for a `DisjointSlice2d`,
/// and refuses a matrix of more than `u32::MAX` elements (an error naming
/// the kernel and the parameter). See [the module
/// documentation](crate::matrix_u32).
///
/// ```no_run
/// use gpu_device::{thread_index_2d, DisjointSlice2dU32};
///
/// // With `#[kernel]`: `out[y][x] = x + y`, launched with 2-D grid and block.
/// pub fn sum_of_coordinates(mut out: DisjointSlice2dU32<u32>) {
///     let i = thread_index_2d();
///     if let Some((row, col)) = out.position(i) {
///         out.set(i, row + col);
///     }
/// }
/// ```
pub struct DisjointSlice2dU32<'a, T, const R: usize = 1> {
    ptr: *mut T,
    shape: Shape2dU32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const R: usize> DisjointSlice2dU32<'a, T, R> {
    /// Wraps device memory as a `rows x cols` output matrix.
    ///
    /// # Safety
    /// As [`DisjointSlice2d::from_raw_parts`](crate::DisjointSlice2d::from_raw_parts)
    /// for `rows * cols` elements, and `rows * cols <= u32::MAX`.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, rows: u32, cols: u32) -> Self {
        DisjointSlice2dU32 {
            ptr,
            // SAFETY: the caller's guarantee: the product fits.
            shape: unsafe { Shape2dU32::with_len(rows, cols, rows.wrapping_mul(cols)) },
            _borrow: PhantomData,
        }
    }

    /// A kernel's matrix parameter, with its element count `len` computed
    /// (and checked to fit in a `u32`) by the launcher.
    ///
    /// # Safety
    /// As [`from_raw_parts`](Self::from_raw_parts), and `len == rows * cols`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(ptr: *mut T, len: u32, rows: u32, cols: u32) -> Self {
        DisjointSlice2dU32 {
            ptr,
            // SAFETY: the caller's guarantee.
            shape: unsafe { Shape2dU32::with_len(rows, cols, len) },
            _borrow: PhantomData,
        }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(&self) -> u32 {
        self.shape.rows()
    }

    /// The number of columns (elements per row).
    #[inline(always)]
    pub fn cols(&self) -> u32 {
        self.shape.cols()
    }

    /// The shape `rows x cols`, for an input view of the same shape
    /// ([`Slice2dU32::with_shape`](crate::Slice2dU32::with_shape)).
    #[inline(always)]
    pub fn shape(&self) -> Shape2dU32 {
        self.shape
    }

    /// `(row, col)` of this thread's element in its `j`-th row (`y * R + j`,
    /// column `x`), or `None` outside the matrix or for `j >= R`.
    #[inline(always)]
    pub fn position_at(&self, index: ThreadIndex2d, j: usize) -> Option<(u32, u32)> {
        if j >= R {
            return None;
        }
        // Checked in `usize`, so a huge `y` or `x` cannot wrap onto a small
        // row or column (for R = 1 the multiply and add fold away; where the
        // witness's coordinates are 32-bit values, the compares are 32-bit).
        let row = index.y().checked_mul(R)?.checked_add(j)?;
        let (rows, cols) = (self.rows() as usize, self.cols() as usize);
        (row < rows && index.x() < cols).then_some((row as u32, index.x() as u32))
    }

    /// `(row, col)` of this thread's element (for `R > 1`, in its first
    /// row), or `None` outside the matrix: the coordinates as `u32`, for
    /// reading inputs of the same shape.
    #[inline(always)]
    pub fn position(&self, index: ThreadIndex2d) -> Option<(u32, u32)> {
        self.position_at(index, 0)
    }

    /// The offset of this thread's element in its `j`-th row, when inside
    /// (the witness checked to be the running thread's, on the simulator).
    #[inline(always)]
    #[track_caller]
    fn offset(&self, index: ThreadIndex2d, j: usize) -> Option<usize> {
        index.owned();
        let (row, col) = self.position_at(index, j)?;
        // SAFETY: `position_at` checked `row < rows` and `col < cols`.
        Some(unsafe { self.shape.offset_unchecked(row, col) })
    }

    /// This thread's element (for `R > 1`, the first of its rows), or `None`
    /// outside the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, index: ThreadIndex2d) -> Option<&mut T> {
        self.get_mut_at(index, 0)
    }

    /// This thread's element in its `j`-th row (`y * R + j`), or `None`
    /// outside the matrix or for `j >= R`.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut_at(&mut self, index: ThreadIndex2d, j: usize) -> Option<&mut T> {
        let offset = self.offset(index, j)?;
        // SAFETY: in bounds (`offset` < `rows * cols`, the elements the
        // launcher passed); the elements at `index` belong to this thread
        // alone (see the `witness` module: the mapping is the one of
        // `DisjointSlice2d<T, R>`, fixed by the type), and `&mut self` stops
        // this thread from holding two references to one.
        let element = unsafe { self.ptr.add(offset) };
        race_check::write(element);
        // SAFETY: as above.
        Some(unsafe { &mut *element })
    }

    /// Writes `value` at this thread's element (for `R > 1`, in its first
    /// row); returns `false` (dropping the value) outside the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, index: ThreadIndex2d, value: T) -> bool {
        self.set_at(index, 0, value)
    }

    /// Writes `value` at this thread's element in its `j`-th row; returns
    /// `false` outside the matrix or for `j >= R`.
    #[inline(always)]
    #[track_caller]
    pub fn set_at(&mut self, index: ThreadIndex2d, j: usize, value: T) -> bool {
        // Not through `get_mut_at`: an `Option<&mut T>` keeps a null test of
        // the pointer in the PTX.
        match self.offset(index, j) {
            Some(offset) => {
                // SAFETY: as in `get_mut_at`.
                let element = unsafe { self.ptr.add(offset) };
                race_check::write(element);
                // SAFETY: as above.
                unsafe { *element = value };
                true
            }
            None => false,
        }
    }
}
