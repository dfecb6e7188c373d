//! A read-only row-major matrix view of an input slice, bounds checked per
//! axis: the input counterpart of [`DisjointSlice2d`](crate::DisjointSlice2d).

use crate::neighbourhood::Neighbourhood;
use core::ops::Index;

/// The extents of a row-major matrix, `rows x cols`, whose element count
/// `rows * cols` fits in a `usize` (so [`len`](Self::len) never overflows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape2d {
    rows: usize,
    cols: usize,
    /// `rows * cols`, computed once (an output's comes from the host).
    len: usize,
}

impl Shape2d {
    /// `rows x cols`, or `None` if `rows * cols` overflows a `usize`.
    #[inline(always)]
    pub fn new(rows: usize, cols: usize) -> Option<Shape2d> {
        // Both below 2^32 with a 64-bit usize: the product fits, and the
        // test is cheaper on the GPU than `checked_mul` (a dozen instructions).
        let fits = (usize::BITS >= 64 && (rows | cols) as u64 >> 32 == 0)
            || rows.checked_mul(cols).is_some();
        fits.then_some(Shape2d {
            rows,
            cols,
            len: rows.wrapping_mul(cols),
        })
    }

    /// A shape whose element count the caller knows.
    ///
    /// # Safety
    /// `len == rows * cols` (with no overflow).
    #[inline(always)]
    pub(crate) unsafe fn with_len(rows: usize, cols: usize, len: usize) -> Shape2d {
        Shape2d { rows, cols, len }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(self) -> usize {
        self.rows
    }

    /// The number of columns.
    #[inline(always)]
    pub fn cols(self) -> usize {
        self.cols
    }

    /// The number of elements, `rows * cols`.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the matrix has no elements.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// `cols x rows`: the shape of the transpose (the same element count).
    #[inline(always)]
    pub fn transposed(self) -> Shape2d {
        Shape2d {
            rows: self.cols,
            cols: self.rows,
            len: self.len,
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_short(rows: usize, cols: usize, len: usize) -> ! {
    panic!("a {rows} x {cols} matrix needs more elements than the slice's {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(row: usize, col: usize, rows: usize, cols: usize) -> ! {
    panic!(
        "matrix index out of bounds: the shape is {rows} x {cols} but the index is ({row}, {col})"
    )
}

/// The first `rows * cols` elements of a slice as a row-major `rows x cols`
/// matrix: `m[(row, col)]` is element `row * cols + col`.
///
/// Its extents are checked against the slice once, when it is made, and an
/// index is checked per axis (`row < rows`, `col < cols`), never as the
/// product `row * cols + col` against the length: a kernel that has already
/// tested `row < rows && col < cols` (as most do, to stay inside the
/// matrix) pays for no further check, where `slice[row * cols + col]` keeps
/// one in every access.
///
/// ```
/// use gpu_device::Slice2d;
///
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let m = Slice2d::new(&data, 2, 3);
/// assert_eq!(m[(1, 0)], 4.0);
/// assert_eq!(m.row(0), &[1.0, 2.0, 3.0]);
/// ```
#[derive(Debug)]
pub struct Slice2d<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
}

impl<T> Clone for Slice2d<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slice2d<'_, T> {}

impl<'a, T> Slice2d<'a, T> {
    /// `data` as a `rows x cols` matrix. Panics if `rows * cols` is larger
    /// than `data.len()` (or than `usize::MAX`).
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Self {
        match Shape2d::new(rows, cols) {
            Some(shape) => Slice2d::with_shape(data, shape),
            None => too_short(rows, cols, data.len()),
        }
    }

    /// `data` as a matrix of shape `shape`. Panics if `shape.len()` is
    /// larger than `data.len()`.
    ///
    /// The shape of an output, [`DisjointSlice2d::shape`], costs no overflow
    /// check: an input of the output's shape (or of its transpose, with
    /// [`Shape2d::transposed`]) is `Slice2d::with_shape(input, out.shape())`.
    ///
    /// [`DisjointSlice2d::shape`]: crate::DisjointSlice2d::shape
    #[inline(always)]
    #[track_caller]
    pub fn with_shape(data: &'a [T], shape: Shape2d) -> Self {
        // Not through `try_with_shape`: matching its `Option<Slice2d>` tests
        // the slice's pointer for null (the option's niche). An output's
        // shape carries its element count from the host: no multiply here.
        if shape.len() > data.len() {
            too_short(shape.rows, shape.cols, data.len())
        }
        Slice2d {
            data,
            rows: shape.rows,
            cols: shape.cols,
        }
    }

    /// `data` as a `rows x cols` matrix, or `None` if it is too short (or
    /// `rows * cols` overflows).
    #[inline(always)]
    pub fn try_new(data: &'a [T], rows: usize, cols: usize) -> Option<Self> {
        Slice2d::try_with_shape(data, Shape2d::new(rows, cols)?)
    }

    /// `data` as a matrix of shape `shape`, or `None` if it is too short.
    #[inline(always)]
    pub fn try_with_shape(data: &'a [T], shape: Shape2d) -> Option<Self> {
        (shape.len() <= data.len()).then_some(Slice2d {
            data,
            rows: shape.rows,
            cols: shape.cols,
        })
    }

    /// The shape `rows x cols`.
    #[inline(always)]
    pub fn shape(&self) -> Shape2d {
        Shape2d {
            rows: self.rows,
            cols: self.cols,
            len: self.rows.wrapping_mul(self.cols),
        }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns (elements per row).
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Element `(row, col)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, row: usize, col: usize) -> Option<&'a T> {
        if row < self.rows && col < self.cols {
            // SAFETY: `row * cols + col <= (rows - 1) * cols + cols - 1 <
            // rows * cols <= data.len()` (a `Shape2d`'s product does not
            // overflow; its length was compared when the view was made).
            Some(unsafe { self.data.get_unchecked(row * self.cols + col) })
        } else {
            None
        }
    }

    /// Row `row`, as a slice of `cols` elements. Panics if `row >= rows`.
    #[inline(always)]
    #[track_caller]
    pub fn row(&self, row: usize) -> &'a [T] {
        if row >= self.rows {
            out_of_bounds(row, 0, self.rows, self.cols)
        }
        // SAFETY: `row < rows`, so `row * cols + cols <= rows * cols <=
        // data.len()` (see `get`).
        unsafe {
            self.data
                .get_unchecked(row * self.cols..row * self.cols + self.cols)
        }
    }

    /// The 3 x 3 neighbourhood of element `(row, col)` when all eight of its
    /// neighbours are elements too (`1 <= row < rows - 1` and `1 <= col <
    /// cols - 1`), `None` otherwise (the element is on the border, or
    /// outside). The neighbours' reads then need no bounds check (see
    /// [`Neighbourhood`]).
    ///
    /// ```
    /// use gpu_device::Slice2d;
    ///
    /// let data: Vec<u32> = (0..12).collect();
    /// let m = Slice2d::new(&data, 3, 4);
    /// let n = m.interior(1, 2).unwrap();
    /// assert_eq!((*n.up(), *n.left(), *n.centre(), *n.right(), *n.down()), (2, 5, 6, 7, 10));
    /// assert!(m.interior(0, 2).is_none() && m.interior(1, 3).is_none());
    /// ```
    #[inline(always)]
    pub fn interior(&self, row: usize, col: usize) -> Option<Neighbourhood<'a, T>> {
        let (rows, cols) = (self.rows, self.cols);
        // `saturating_sub`: a matrix of fewer than 3 rows has no interior
        // row (for `rows` of 0 or 1 the bound is 0).
        if row >= 1 && col >= 1 && row < rows.saturating_sub(1) && col < cols.saturating_sub(1) {
            // SAFETY: `1 <= row <= rows - 2` and `1 <= col <= cols - 2`:
            // the element and its eight neighbours are inside the matrix,
            // whose `rows * cols` elements the slice holds (see `get`); the
            // rows above and below are `cols` elements away.
            Some(unsafe {
                let centre = self.data.as_ptr().add(row * cols + col);
                Neighbourhood::new(centre.sub(cols), centre, centre.add(cols))
            })
        } else {
            None
        }
    }

    /// The underlying slice (all of it, also past `rows * cols`).
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

impl<T> Index<(usize, usize)> for Slice2d<'_, T> {
    type Output = T;

    /// Element `(row, col)`. Panics outside the matrix (each axis checked).
    #[inline(always)]
    #[track_caller]
    fn index(&self, (row, col): (usize, usize)) -> &T {
        if row >= self.rows || col >= self.cols {
            out_of_bounds(row, col, self.rows, self.cols)
        }
        // SAFETY: in bounds on each axis (see `get`).
        unsafe { self.data.get_unchecked(row * self.cols + col) }
    }
}
