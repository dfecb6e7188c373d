//! [`Slice2dU32`]: a read-only row-major matrix view of an input slice, with
//! `u32` extents and indices.

use super::Shape2dU32;
use crate::neighbourhood::Neighbourhood;
use core::ops::Index;

#[cold]
#[inline(never)]
#[track_caller]
fn too_short(rows: u32, cols: u32, len: usize) -> ! {
    panic!("a {rows} x {cols} matrix needs more elements than the slice's {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_large(rows: u32, cols: u32) -> ! {
    panic!("a {rows} x {cols} matrix has more than u32::MAX elements: use Slice2d")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(row: u32, col: u32, rows: u32, cols: u32) -> ! {
    panic!(
        "matrix index out of bounds: the shape is {rows} x {cols} but the index is ({row}, {col})"
    )
}

/// The first `rows * cols` elements of a slice as a row-major `rows x cols`
/// matrix of at most `u32::MAX` elements, indexed in 32 bits: `m[(row,
/// col)]` is element `row * cols + col`, computed in `u32` and widened once.
///
/// As [`Slice2d`](crate::Slice2d), its extents are checked against the
/// slice once, when it is made, and each index per axis, so a kernel that
/// has tested `row < rows && col < cols` pays for no further check. See
/// [the module documentation](crate::matrix_u32) for why no offset wraps.
///
/// ```
/// use gpu_device::Slice2dU32;
///
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let m = Slice2dU32::new(&data, 2, 3);
/// assert_eq!(m[(1, 0)], 4.0);
/// assert_eq!(m.row(0), &[1.0, 2.0, 3.0]);
/// ```
#[derive(Debug)]
pub struct Slice2dU32<'a, T> {
    /// At least `shape.len()` elements.
    data: &'a [T],
    shape: Shape2dU32,
}

impl<T> Clone for Slice2dU32<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slice2dU32<'_, T> {}

impl<'a, T> Slice2dU32<'a, T> {
    /// `data` as a `rows x cols` matrix. Panics if `rows * cols` is larger
    /// than `data.len()` or than `u32::MAX`.
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: u32, cols: u32) -> Self {
        match Shape2dU32::new(rows, cols) {
            Some(shape) => Slice2dU32::with_shape(data, shape),
            None => too_large(rows, cols),
        }
    }

    /// `data` as a matrix of shape `shape`. Panics if `shape.len()` is
    /// larger than `data.len()`.
    ///
    /// An input shaped like a kernel's output is `Slice2dU32::with_shape(input,
    /// out.shape())` (or `out.shape().transposed()`): one compare of two
    /// lengths.
    #[inline(always)]
    #[track_caller]
    pub fn with_shape(data: &'a [T], shape: Shape2dU32) -> Self {
        if shape.len() as usize > data.len() {
            too_short(shape.rows(), shape.cols(), data.len())
        }
        Slice2dU32 { data, shape }
    }

    /// `data` as a `rows x cols` matrix, or `None` if it is too short (or
    /// `rows * cols` is above `u32::MAX`).
    #[inline(always)]
    pub fn try_new(data: &'a [T], rows: u32, cols: u32) -> Option<Self> {
        Slice2dU32::try_with_shape(data, Shape2dU32::new(rows, cols)?)
    }

    /// `data` as a matrix of shape `shape`, or `None` if it is too short.
    #[inline(always)]
    pub fn try_with_shape(data: &'a [T], shape: Shape2dU32) -> Option<Self> {
        (shape.len() as usize <= data.len()).then_some(Slice2dU32 { data, shape })
    }

    /// The shape `rows x cols`.
    #[inline(always)]
    pub fn shape(&self) -> Shape2dU32 {
        self.shape
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

    /// Element `(row, col)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, row: u32, col: u32) -> Option<&'a T> {
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
    pub fn row(&self, row: u32) -> &'a [T] {
        if row >= self.rows() {
            out_of_bounds(row, 0, self.rows(), self.cols())
        }
        let (start, cols) = (row as usize * self.cols() as usize, self.cols() as usize);
        // SAFETY: `row < rows`, so `start + cols <= rows * cols <=
        // data.len()`.
        unsafe { self.data.get_unchecked(start..start + cols) }
    }

    /// The 3 x 3 neighbourhood of element `(row, col)` when all eight of its
    /// neighbours are elements too (`1 <= row < rows - 1` and `1 <= col <
    /// cols - 1`), `None` otherwise (the element is on the border, or
    /// outside). The neighbours' reads then need no bounds check.
    ///
    /// ```
    /// use gpu_device::Slice2dU32;
    ///
    /// let data: Vec<u32> = (0..12).collect();
    /// let m = Slice2dU32::new(&data, 3, 4);
    /// let n = m.interior(1, 2).unwrap();
    /// assert_eq!((*n.up(), *n.left(), *n.centre(), *n.right(), *n.down()), (2, 5, 6, 7, 10));
    /// assert!(m.interior(0, 2).is_none() && m.interior(1, 3).is_none());
    /// ```
    #[inline(always)]
    pub fn interior(&self, row: u32, col: u32) -> Option<Neighbourhood<'a, T>> {
        let (rows, cols) = (self.rows(), self.cols());
        // `rows.saturating_sub(1)`: a matrix of fewer than 3 rows has no
        // interior row (for `rows` of 0 or 1 the bound is 0).
        if (row >= 1) & (col >= 1) & (row < rows.saturating_sub(1)) & (col < cols.saturating_sub(1))
        {
            // SAFETY: `1 <= row <= rows - 2` and `1 <= col <= cols - 2`:
            // the element and its eight neighbours are inside the matrix,
            // whose `rows * cols` elements the slice holds. The element's
            // offset `i` is in bounds (`offset_unchecked`), and so are
            // `i - cols` and `i + cols`, the offsets of `(row - 1, col)` and
            // `(row + 1, col)` (neither subtraction nor addition wraps: both
            // are offsets of elements), each with one element on each side.
            Some(unsafe {
                let (start, i) = (self.data.as_ptr(), self.shape.offset_unchecked(row, col));
                let (i, cols) = (i as u32, cols);
                Neighbourhood::new(
                    start.add((i - cols) as usize),
                    start.add(i as usize),
                    start.add((i + cols) as usize),
                )
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
    /// When the run is whole (`col + N <= min(limit, cols)`) it is read as
    /// 16-byte vectors where its address is 16-byte aligned (`N` elements a
    /// multiple of 16 bytes): the test is on the slice's address, the row
    /// length and `col`, of which the first two are the same for every
    /// call of a loop (the compiler hoists them), so a loop's test is one
    /// bit test of `col`. Otherwise element by element, in 32-bit indices.
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
    pub fn read_run_or<const N: usize>(&self, row: u32, col: u32, limit: u32, fill: T) -> [T; N]
    where
        T: crate::vector::VectorElement,
    {
        if row >= self.rows() {
            return [fill; N];
        }
        let end = limit.min(self.cols());
        // SAFETY (of the offsets below): `row < rows` and every column read
        // is below `end <= cols`, so each offset is that of an element of
        // the matrix (`offset_unchecked`), below `shape.len() <=
        // data.len()`.
        if col < end && end - col >= N as u32 {
            let size = core::mem::size_of::<T>();
            let aligned = (size * N).is_multiple_of(16)
                && ((self.data.as_ptr() as usize)
                    | (self.cols() as usize * size)
                    | (col as usize * size))
                    .is_multiple_of(16);
            // SAFETY: `(row, col)` and `(row, col + N - 1)` are elements
            // (`col + N <= end <= cols`): the run is inside the matrix.
            let start = unsafe { self.shape.offset_unchecked(row, col) };
            if aligned {
                // SAFETY: the run's `N` elements are inside the slice (above)
                // and its first element's address is a multiple of 16 (the
                // slice's address, the row length in bytes and `col` in
                // bytes are); `N` elements are whole 16-byte vectors.
                return unsafe { crate::vector::load_vectors(self.data.as_ptr().add(start)) };
            }
            // SAFETY: the run is inside the slice (above), read-only.
            return unsafe { crate::vector::load_elements(self.data.as_ptr().add(start)) };
        }
        // Part of the run, element by element.
        let mut run = [fill; N];
        crate::unroll::full::<N>(|i| {
            let c = col.wrapping_add(i as u32);
            if c >= col && c < end {
                // SAFETY: `row < rows` and `c < end <= cols` (no wrap).
                run[i] = unsafe { *self.data.get_unchecked(self.shape.offset_unchecked(row, c)) };
            }
        });
        run
    }

    /// The underlying slice (all of it, also past `rows * cols`).
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

impl<T> Index<(u32, u32)> for Slice2dU32<'_, T> {
    type Output = T;

    /// Element `(row, col)`. Panics outside the matrix (each axis checked).
    #[inline(always)]
    #[track_caller]
    fn index(&self, (row, col): (u32, u32)) -> &T {
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
