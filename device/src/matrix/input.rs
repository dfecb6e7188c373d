//! [`Slice2dOf`]: a read-only row-major matrix view of an input slice,
//! bounds checked per axis; [`Slice2d`] with `usize` extents and indices,
//! [`Slice2dU32`] with `u32` ones.

use super::{MatrixIndex, Shape2dOf};
use crate::neighbourhood::Neighbourhood;
use core::fmt::Display;
use core::ops::Index;

#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn too_short<I: Display>(rows: I, cols: I, len: usize) -> ! {
    panic!("a {rows} x {cols} matrix needs more elements than the slice's {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn too_large_for_u32(rows: u32, cols: u32) -> ! {
    panic!("a {rows} x {cols} matrix has more than u32::MAX elements: use Slice2d")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds<I: Display>(row: I, col: I, rows: I, cols: I) -> ! {
    panic!(
        "matrix index out of bounds: the shape is {rows} x {cols} but the index is ({row}, {col})"
    )
}

/// The first `rows * cols` elements of a slice as a row-major `rows x cols`
/// matrix whose element count fits the index type `I`: `m[(row, col)]` is
/// element `row * cols + col`, computed in `I` and widened once. Named
/// [`Slice2d`] (`usize`) and [`Slice2dU32`] (`u32`).
///
/// Its extents are checked against the slice once, when it is made, and an
/// index is checked per axis (`row < rows`, `col < cols`), never as the
/// product `row * cols + col` against the length: a kernel that has already
/// tested `row < rows && col < cols` (as most do, to stay inside the
/// matrix) pays for no further check, where `slice[row * cols + col]` keeps
/// one in every access. See [the module documentation](crate::matrix) for
/// why no offset wraps.
#[derive(Debug)]
pub struct Slice2dOf<'a, T, I> {
    /// At least `shape.len()` elements.
    data: &'a [T],
    shape: Shape2dOf<I>,
}

/// A read-only row-major matrix view of an input slice, with `usize`
/// extents and indices: the input counterpart of
/// [`DisjointSlice2d`](crate::DisjointSlice2d).
///
/// ```
/// use gpu_device::Slice2d;
///
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let m = Slice2d::new(&data, 2, 3);
/// assert_eq!(m[(1, 0)], 4.0);
/// assert_eq!(m.row(0), &[1.0, 2.0, 3.0]);
/// ```
pub type Slice2d<'a, T> = Slice2dOf<'a, T, usize>;

/// A read-only row-major matrix view of an input slice of at most
/// `u32::MAX` elements, indexed in 32 bits: [`Slice2d`] with `u32` extents
/// and indices.
///
/// ```
/// use gpu_device::Slice2dU32;
///
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let m = Slice2dU32::new(&data, 2, 3);
/// assert_eq!(m[(1, 0)], 4.0);
/// assert_eq!(m.row(0), &[1.0, 2.0, 3.0]);
/// ```
pub type Slice2dU32<'a, T> = Slice2dOf<'a, T, u32>;

impl<T, I: Copy> Clone for Slice2dOf<'_, T, I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, I: Copy> Copy for Slice2dOf<'_, T, I> {}

impl<'a, T, I: MatrixIndex> Slice2dOf<'a, T, I> {
    /// `data` as a `rows x cols` matrix. Panics if `rows * cols` is larger
    /// than `data.len()` or does not fit in `I`.
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: I, cols: I) -> Self {
        match Shape2dOf::new(rows, cols) {
            Some(shape) => Slice2dOf::with_shape(data, shape),
            None => I::too_large(rows, cols, data.len()),
        }
    }

    /// `data` as a matrix of shape `shape`. Panics if `shape.len()` is
    /// larger than `data.len()`.
    ///
    /// An input shaped like a kernel's output is `Slice2d::with_shape(input,
    /// out.shape())` (or `out.shape().transposed()`): one compare of two
    /// lengths, as an output's shape carries its element count from the
    /// host (no multiply).
    #[inline(always)]
    #[track_caller]
    pub fn with_shape(data: &'a [T], shape: Shape2dOf<I>) -> Self {
        // Not through `try_with_shape`: matching its `Option<Slice2d>` tests
        // the slice's pointer for null (the option's niche).
        if shape.len().to_usize() > data.len() {
            too_short(shape.rows(), shape.cols(), data.len())
        }
        Slice2dOf { data, shape }
    }

    /// `data` as a `rows x cols` matrix, or `None` if it is too short (or
    /// `rows * cols` does not fit in `I`).
    #[inline(always)]
    pub fn try_new(data: &'a [T], rows: I, cols: I) -> Option<Self> {
        Slice2dOf::try_with_shape(data, Shape2dOf::new(rows, cols)?)
    }

    /// `data` as a matrix of shape `shape`, or `None` if it is too short.
    #[inline(always)]
    pub fn try_with_shape(data: &'a [T], shape: Shape2dOf<I>) -> Option<Self> {
        (shape.len().to_usize() <= data.len()).then_some(Slice2dOf { data, shape })
    }

    /// The shape `rows x cols`.
    #[inline(always)]
    pub fn shape(&self) -> Shape2dOf<I> {
        self.shape
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

    /// Element `(row, col)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, row: I, col: I) -> Option<&'a T> {
        if self.shape.contains(row, col) {
            // SAFETY: in bounds on each axis, so the offset is below
            // `shape.len() <= data.len()` (checked when the view was made).
            Some(unsafe {
                self.data
                    .get_unchecked(self.shape.offset_unchecked(row, col))
            })
        } else {
            None
        }
    }

    /// Row `row`, as a slice of `cols` elements. Panics if `row >= rows`.
    #[inline(always)]
    #[track_caller]
    pub fn row(&self, row: I) -> &'a [T] {
        if row >= self.rows() {
            out_of_bounds(row, I::ZERO, self.rows(), self.cols())
        }
        let (start, cols) = (
            row.to_usize() * self.cols().to_usize(),
            self.cols().to_usize(),
        );
        // SAFETY: `row < rows`, so `start + cols <= rows * cols <=
        // data.len()`.
        unsafe { self.data.get_unchecked(start..start + cols) }
    }

    /// The 3 x 3 neighbourhood of element `(row, col)` when all eight of its
    /// neighbours are elements too (`1 <= row < rows - 1` and `1 <= col <
    /// cols - 1`), `None` otherwise (the element is on the border, or
    /// outside). The neighbours' reads then need no bounds check (see
    /// [`Neighbourhood`]).
    ///
    /// ```
    /// use gpu_device::{Slice2d, Slice2dU32};
    ///
    /// let data: Vec<u32> = (0..12).collect();
    /// let m = Slice2d::new(&data, 3, 4);
    /// let n = m.interior(1, 2).unwrap();
    /// assert_eq!((*n.up(), *n.left(), *n.centre(), *n.right(), *n.down()), (2, 5, 6, 7, 10));
    /// assert!(m.interior(0, 2).is_none() && m.interior(1, 3).is_none());
    /// let m = Slice2dU32::new(&data, 3, 4);
    /// assert_eq!(*m.interior(1, 2).unwrap().down(), 10);
    /// ```
    #[inline(always)]
    pub fn interior(&self, row: I, col: I) -> Option<Neighbourhood<'a, T>> {
        let (rows, cols) = (self.rows(), self.cols());
        // `rows.saturating_sub(1)`: a matrix of fewer than 3 rows has no
        // interior row (for `rows` of 0 or 1 the bound is 0).
        if (row >= I::ONE)
            & (col >= I::ONE)
            & (row < rows.saturating_sub(I::ONE))
            & (col < cols.saturating_sub(I::ONE))
        {
            // SAFETY: `1 <= row <= rows - 2` and `1 <= col <= cols - 2`:
            // the element and its eight neighbours are inside the matrix,
            // whose `rows * cols` elements the slice holds. The element's
            // offset `i` is in bounds (`offset_unchecked`), and so are
            // `i - cols` and `i + cols`, the offsets of `(row - 1, col)` and
            // `(row + 1, col)` (neither subtraction nor addition wraps: both
            // are offsets of elements), each with one element on each side.
            Some(unsafe {
                let i = I::from_usize_truncating(self.shape.offset_unchecked(row, col));
                let (up, centre, down) = I::column_neighbours(self.data.as_ptr(), i, cols);
                Neighbourhood::new(up, centre, down)
            })
        } else {
            None
        }
    }

    /// The `N` elements `(row, col .. col + N)`, those at or right of
    /// column `limit` (and outside the matrix) replaced by `fill`: CUDA's
    /// guarded `float4` load, for a matrix whose rows are padded past its
    /// logical width `limit` (a leading dimension), the padding never read.
    ///
    /// When the run is whole (`row < rows`, `col + N <= min(limit, cols)`)
    /// and its address 16-byte aligned (`N` elements a multiple of 16
    /// bytes) it is read as 16-byte vectors: the alignment test is on the
    /// slice's address, the row length and `col`, of which the first two
    /// are the same for every call of a loop (the compiler hoists them), so
    /// a loop's test is one bit test of `col`. Anything else (a partial
    /// run, a row outside the matrix, a misaligned run) is read element by
    /// element, in `I`, on a path of its own that a loop over aligned runs
    /// does not issue.
    ///
    /// ```
    /// use gpu_device::Slice2dU32;
    ///
    /// let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
    /// let m = Slice2dU32::new(&data, 2, 6); // rows of 6, of which 5 are the matrix
    /// assert_eq!(m.read_run_or::<4>(1, 0, 5, 0.0), [6.0, 7.0, 8.0, 9.0]);
    /// assert_eq!(m.read_run_or::<4>(1, 3, 5, 0.0), [9.0, 10.0, 0.0, 0.0]);
    /// assert_eq!(m.read_run_or::<4>(2, 0, 5, 0.0), [0.0; 4]);
    /// ```
    #[inline(always)]
    pub fn read_run_or<const N: usize>(&self, row: I, col: I, limit: I, fill: T) -> [T; N]
    where
        T: crate::vector::VectorElement,
    {
        let end = limit.min(self.cols());
        let size = core::mem::size_of::<T>();
        // One test for the common case, as the twin's `load4_guarded`: the
        // whole run inside the matrix and 16-byte aligned. The slice's
        // address and the row length are the same for every call of a loop
        // (the compiler hoists their part), so a loop's test is the row,
        // the column's bounds and one bit test of `col`. Every other case,
        // a misaligned whole run included, takes the element path below,
        // a branch of its own: where the misaligned whole run had a load
        // path of its own, ptxas predicated its element loads beside the
        // vector load, four issued (and unused) instructions a call.
        let whole = row < self.rows() && col < end && end - col >= I::from_usize_truncating(N);
        let aligned = (size * N).is_multiple_of(16)
            && ((self.data.as_ptr() as usize)
                | (self.cols().to_usize() * size)
                | (col.to_usize() * size))
                .is_multiple_of(16);
        if whole && aligned {
            // SAFETY: `row < rows` and `(row, col)`, `(row, col + N - 1)`
            // are elements (`col + N <= end <= cols`): the run is inside
            // the matrix, whose `rows * cols` elements the slice holds
            // (`offset_unchecked`), and its first element's address is a
            // multiple of 16 (the slice's address, the row length in bytes
            // and `col` in bytes are); `N` elements are whole 16-byte
            // vectors.
            return unsafe {
                let start = self.shape.offset_unchecked(row, col);
                crate::vector::load_vectors(self.data.as_ptr().add(start))
            };
        }
        // Part of the run, or a misaligned one, element by element.
        let mut run = [fill; N];
        if row < self.rows() {
            crate::unroll::full::<N>(|i| {
                let c = col.wrapping_add(I::from_usize_truncating(i));
                if c >= col && c < end {
                    // SAFETY: `row < rows` and `c < end <= cols` (no wrap).
                    run[i] =
                        unsafe { *self.data.get_unchecked(self.shape.offset_unchecked(row, c)) };
                }
            });
        }
        run
    }

    /// The underlying slice (all of it, also past `rows * cols`).
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

impl<T, I: MatrixIndex> Index<(I, I)> for Slice2dOf<'_, T, I> {
    type Output = T;

    /// Element `(row, col)`. Panics outside the matrix (each axis checked).
    #[inline(always)]
    #[track_caller]
    fn index(&self, (row, col): (I, I)) -> &T {
        // Not through `get`: matching its `Option<&T>` may keep a null test.
        if !self.shape.contains(row, col) {
            out_of_bounds(row, col, self.rows(), self.cols())
        }
        // SAFETY: in bounds on each axis (see `get`).
        unsafe {
            self.data
                .get_unchecked(self.shape.offset_unchecked(row, col))
        }
    }
}
