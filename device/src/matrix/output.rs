//! [`DisjointSlice2dOf`]: a kernel's output matrix, each thread writing only
//! the elements its 2-D witness names; [`DisjointSlice2d`] with `usize`
//! extents, [`DisjointSlice2dU32`] with `u32` ones.

use super::{MatrixIndex, Shape2dOf};
use crate::race_check;
use crate::witness::ThreadIndex2d;
use core::marker::PhantomData;

/// A kernel's row-major `rows x cols` output matrix with extents and
/// offsets in `I`: each thread may read and write only the elements its
/// [`ThreadIndex2d`] names. Named [`DisjointSlice2d`] (`usize`) and
/// [`DisjointSlice2dU32`] (`u32`).
///
/// With `R = 1` (the default), thread `(x, y)` owns element `(row, col) =
/// (y, x)`. With `R > 1`, it owns the `R` elements `(y * R + j, x)` for
/// `j < R`: a kernel that moves several rows per thread (a transpose with
/// 32 x 8 blocks and 32 x 32 tiles, `R = 4`) says so in its parameter's type,
/// `DisjointSlice2d<f32, 4>`, so every thread of the launch uses the same
/// mapping. Bounds are checked per axis.
///
/// On the host, a launcher takes a `DeviceView2dMut<T>`
/// (`buffer.view_2d_mut(rows, cols)?`) for it; for the `u32` form it refuses
/// a matrix of more than `u32::MAX` elements (an error naming the kernel and
/// the parameter). See [the module documentation](crate::matrix).
pub struct DisjointSlice2dOf<'a, T, const R: usize, I> {
    ptr: *mut T,
    shape: Shape2dOf<I>,
    _borrow: PhantomData<&'a mut [T]>,
}

/// A kernel's row-major `rows x cols` output matrix: each thread may read and
/// write only the elements its [`ThreadIndex2d`] names (see
/// [`DisjointSlice2dOf`]).
///
/// ```no_run
/// use gpu_device::{thread_index_2d, DisjointSlice2d};
///
/// // With `#[kernel]`: `out[y][x] = x + y`, launched with 2-D grid and block.
/// pub fn sum_of_coordinates(mut out: DisjointSlice2d<u32>) {
///     let i = thread_index_2d();
///     out.set(i, (i.x() + i.y()) as u32);
/// }
/// ```
pub type DisjointSlice2d<'a, T, const R: usize = 1> = DisjointSlice2dOf<'a, T, R, usize>;

/// A kernel's row-major `rows x cols` output matrix of at most `u32::MAX`
/// elements: [`DisjointSlice2d<T, R>`] with `u32` extents and offsets.
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
pub type DisjointSlice2dU32<'a, T, const R: usize = 1> = DisjointSlice2dOf<'a, T, R, u32>;

impl<'a, T, const R: usize, I: MatrixIndex> DisjointSlice2dOf<'a, T, R, I> {
    /// Wraps device memory as a `rows x cols` output matrix.
    ///
    /// # Safety
    /// As [`DisjointSlice::from_raw_parts`](crate::DisjointSlice::from_raw_parts)
    /// for `rows * cols` elements (the product fits in `I`), and every thread
    /// of the launch gets a matrix over the same memory with the same
    /// extents.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, rows: I, cols: I) -> Self {
        DisjointSlice2dOf {
            ptr,
            // SAFETY: the caller's guarantee: the product fits.
            shape: unsafe { Shape2dOf::with_len(rows, cols, rows.wrapping_mul(cols)) },
            _borrow: PhantomData,
        }
    }

    /// A kernel's matrix parameter: as [`from_raw_parts`](Self::from_raw_parts),
    /// with its element count `len` computed (and, for `u32`, checked to
    /// fit) by the launcher, so that [`shape`](Self::shape) costs the device
    /// no multiply.
    ///
    /// # Safety
    /// As [`from_raw_parts`](Self::from_raw_parts), and `len == rows * cols`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(ptr: *mut T, len: I, rows: I, cols: I) -> Self {
        DisjointSlice2dOf {
            ptr,
            // SAFETY: the caller's guarantee.
            shape: unsafe { Shape2dOf::with_len(rows, cols, len) },
            _borrow: PhantomData,
        }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(&self) -> I {
        self.shape.rows()
    }

    /// The number of columns (elements per row).
    #[inline(always)]
    pub fn cols(&self) -> I {
        self.shape.cols()
    }

    /// The shape `rows x cols`, for an input view of the same shape
    /// ([`Slice2dOf::with_shape`](crate::matrix::Slice2dOf::with_shape)).
    #[inline(always)]
    pub fn shape(&self) -> Shape2dOf<I> {
        self.shape
    }

    /// `(row, col)` of this thread's element in its `j`-th row (`y * R + j`,
    /// column `x`), or `None` outside the matrix or for `j >= R`.
    #[inline(always)]
    pub fn position_at(&self, index: ThreadIndex2d, j: usize) -> Option<(I, I)> {
        if j >= R {
            return None;
        }
        // Checked in `usize`, so a huge `y` or `x` cannot wrap onto a small
        // row or column (for R = 1 the multiply and add fold away; where the
        // witness's coordinates are 32-bit values, the compares are 32-bit).
        let row = index.y().checked_mul(R)?.checked_add(j)?;
        let (rows, cols) = (self.rows().to_usize(), self.cols().to_usize());
        (row < rows && index.x() < cols).then_some((
            I::from_usize_truncating(row),
            I::from_usize_truncating(index.x()),
        ))
    }

    /// `(row, col)` of this thread's element (for `R > 1`, in its first
    /// row), or `None` outside the matrix: the coordinates as `I`, for
    /// reading inputs of the same shape.
    #[inline(always)]
    pub fn position(&self, index: ThreadIndex2d) -> Option<(I, I)> {
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
        // alone (see the `witness` module: the mapping is fixed by the
        // type), and `&mut self` stops this thread from holding two
        // references to one.
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
