//! Matrices with at most `u32::MAX` elements, indexed in 32 bits.
//!
//! [`DisjointSlice2d`](crate::DisjointSlice2d) and [`Slice2d`](crate::Slice2d)
//! take `usize` extents and indices, so that any matrix a buffer can hold is
//! a matrix. On a GPU that costs: every compare of a `usize` is two
//! instructions, every offset a 64-bit multiply-add and a carry pair, where
//! CUDA C's `int` indices take one (nvcc may, because the host checked that
//! the sizes fit). The types here are the same views with `u32` extents and
//! indices, for matrices whose element count fits in a `u32`:
//!
//! | type | is | made from |
//! |---|---|---|
//! | [`Shape2dU32`] | `rows x cols`, `rows * cols <= u32::MAX` | [`Shape2dU32::new`], or an output's [`shape`](DisjointSlice2dU32::shape) |
//! | [`DisjointSlice2dU32<T, R>`] | a kernel's output matrix, as [`DisjointSlice2d<T, R>`](crate::DisjointSlice2d) | the launcher: a `buffer.view_2d_mut(rows, cols)?`, whose element count it checks |
//! | [`Slice2dU32<T>`] | a read-only matrix view of an input slice, as [`Slice2d<T>`](crate::Slice2d) | [`Slice2dU32::with_shape`] (one length compare) or [`Slice2dU32::new`] |
//!
//! # Why nothing wraps
//!
//! Every offset these types compute is `row * cols + col` with `row < rows`
//! and `col < cols` checked first (per axis, as the `usize` views do), so it
//! is at most `rows * cols - 1`, which a [`Shape2dU32`] guarantees is below
//! `u32::MAX`; it is then widened to `usize` for the address (CUDA's
//! `mul.wide`). Where the `rows * cols <= u32::MAX` guarantee comes from:
//!
//! - a [`Shape2dU32`] is made only by [`Shape2dU32::new`] (a checked
//!   multiply) or from an output's extents;
//! - an output's extents come from its launcher, which refuses a matrix of
//!   more than `u32::MAX` elements before queueing anything (an
//!   `InvalidLaunch` error naming the kernel and the parameter, never a
//!   truncation); a kernel whose matrices may be larger takes a
//!   [`DisjointSlice2d`](crate::DisjointSlice2d);
//! - [`DisjointSlice2dU32::from_raw_parts`] is `unsafe` and makes the
//!   product a precondition.
//!
//! The thread's coordinates are `u32` as well where the kernel's `__2d`
//! entry runs them (launches whose z extents are 1 and that have at most
//! 2^32 threads along x: see [`entry`](crate::entry)): comparing them with
//! these extents then compiles to 32-bit compares.

mod input;
mod output;

pub use input::Slice2dU32;
pub use output::DisjointSlice2dU32;

use crate::slice2d::Shape2d;

/// The extents of a row-major matrix, `rows x cols`, whose element count
/// `rows * cols` is at most `u32::MAX`: offsets `row * cols + col` of its
/// elements never wrap a `u32`.
///
/// ```
/// use gpu_device::Shape2dU32;
///
/// let shape = Shape2dU32::new(480, 640).unwrap();
/// assert_eq!(shape.len(), 307_200);
/// assert!(Shape2dU32::new(65_536, 65_536).is_none()); // 2^32 elements
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape2dU32 {
    rows: u32,
    cols: u32,
    /// `rows * cols`, computed once (an output's comes from the host).
    len: u32,
}

impl Shape2dU32 {
    /// `rows x cols`, or `None` if `rows * cols` is above `u32::MAX`.
    #[inline(always)]
    pub fn new(rows: u32, cols: u32) -> Option<Shape2dU32> {
        let len = rows.checked_mul(cols)?;
        Some(Shape2dU32 { rows, cols, len })
    }

    /// A shape whose element count the caller knows.
    ///
    /// # Safety
    /// `len == rows * cols` (with no overflow).
    #[inline(always)]
    pub(crate) unsafe fn with_len(rows: u32, cols: u32, len: u32) -> Shape2dU32 {
        Shape2dU32 { rows, cols, len }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(self) -> u32 {
        self.rows
    }

    /// The number of columns.
    #[inline(always)]
    pub fn cols(self) -> u32 {
        self.cols
    }

    /// The number of elements, `rows * cols`.
    #[inline(always)]
    pub fn len(self) -> u32 {
        self.len
    }

    /// Whether the matrix has no elements.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// `cols x rows`: the shape of the transpose (the same element count).
    #[inline(always)]
    pub fn transposed(self) -> Shape2dU32 {
        Shape2dU32 {
            rows: self.cols,
            cols: self.rows,
            len: self.len,
        }
    }

    /// Whether `(row, col)` is an element: `row < rows` and `col < cols`.
    ///
    /// Both compares are made (`&`, not `&&`: neither has a side effect), so
    /// that a kernel's `if shape.contains(r, c) { load } else { default }`
    /// is one branch, which `ptxas` turns into a predicated load, rather than
    /// two nested ones around it.
    #[inline(always)]
    pub fn contains(self, row: u32, col: u32) -> bool {
        (row < self.rows) & (col < self.cols)
    }

    /// The offset `row * cols + col` of element `(row, col)`, which the
    /// caller has checked is inside ([`contains`](Self::contains)).
    ///
    /// # Safety
    /// `row < rows` and `col < cols`.
    #[inline(always)]
    pub(crate) unsafe fn offset_unchecked(self, row: u32, col: u32) -> usize {
        // `row * cols + col <= (rows - 1) * cols + cols - 1 = len - 1`,
        // which fits in a `u32`: neither operation wraps.
        (row * self.cols + col) as usize
    }
}

impl From<Shape2dU32> for Shape2d {
    /// The same extents as `usize`, for the `usize` views.
    #[inline(always)]
    fn from(shape: Shape2dU32) -> Shape2d {
        // SAFETY: `len == rows * cols` in `u32`, so also in `usize`.
        unsafe { Shape2d::with_len(shape.rows as usize, shape.cols as usize, shape.len as usize) }
    }
}
