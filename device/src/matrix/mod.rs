//! Row-major matrices: their extents ([`Shape2d`]), read-only views of an
//! input slice ([`Slice2d`]) and a kernel's output matrices
//! ([`DisjointSlice2d`]), each written once for both index types
//! ([`MatrixIndex`]): `usize`, so that any matrix a buffer can hold is a
//! matrix, and `u32`, for matrices of at most `u32::MAX` elements.
//!
//! On a GPU the `usize` forms cost: every compare of a `usize` is two
//! instructions, every offset a 64-bit multiply-add and a carry pair, where
//! CUDA C's `int` indices take one (nvcc may, because the host checked that
//! the sizes fit). The `U32` forms are the same types with `u32` extents and
//! indices:
//!
//! | `usize` | `u32` | is | made from |
//! |---|---|---|---|
//! | [`Shape2d`] | [`Shape2dU32`] | `rows x cols`, `rows * cols` fits the index type | [`Shape2dOf::new`], or an output's [`shape`](DisjointSlice2dOf::shape) |
//! | [`DisjointSlice2d<T, R>`] | [`DisjointSlice2dU32<T, R>`] | a kernel's output matrix | the launcher: a `buffer.view_2d_mut(rows, cols)?`, whose element count it checks |
//! | [`Slice2d<T>`] | [`Slice2dU32<T>`] | a read-only matrix view of an input slice | [`Slice2dOf::with_shape`] (one length compare) or [`Slice2dOf::new`] |
//!
//! # Why nothing wraps
//!
//! Every offset these types compute is `row * cols + col` with `row < rows`
//! and `col < cols` checked first (per axis), so it is at most
//! `rows * cols - 1`, which a shape guarantees fits the index type; it is
//! then widened to `usize` for the address (for `u32`, CUDA's `mul.wide`).
//! Where the guarantee comes from:
//!
//! - a shape is made only by [`Shape2dOf::new`] (a checked multiply) or from
//!   an output's extents;
//! - an output's extents come from its launcher, which refuses a matrix of
//!   more than `u32::MAX` elements for a `U32` form before queueing anything
//!   (an `InvalidLaunch` error naming the kernel and the parameter, never a
//!   truncation); a kernel whose matrices may be larger takes a
//!   [`DisjointSlice2d`];
//! - [`DisjointSlice2dOf::from_raw_parts`] is `unsafe` and makes the product
//!   a precondition.
//!
//! The thread's coordinates are `u32` as well where the kernel's `__2d`
//! entry runs them (launches whose z extents are 1 and that have at most
//! 2^32 threads along x: see [`entry`](crate::entry)): comparing them with
//! `u32` extents then compiles to 32-bit compares.

mod input;
mod output;

pub use input::{Slice2d, Slice2dOf, Slice2dU32};
pub use output::{DisjointSlice2d, DisjointSlice2dOf, DisjointSlice2dU32};

use core::fmt::{Debug, Display};
use core::ops::{Add, Mul, Sub};

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for u32 {}
}

/// The index type of a matrix's extents and offsets: `usize` or `u32`
/// (sealed: the types of this module rely on what these two do).
pub trait MatrixIndex:
    sealed::Sealed
    + Copy
    + Ord
    + Debug
    + Display
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;

    /// `rows * cols`, or `None` where the product does not fit.
    fn checked_len(rows: Self, cols: Self) -> Option<Self>;

    /// The value as a `usize` (widened; never truncated).
    fn to_usize(self) -> usize;

    /// `value` as this type, its high bits dropped: for values the caller
    /// knows fit (those compared with the index type's extents).
    fn from_usize_truncating(value: usize) -> Self;

    /// `self - other`, or zero below zero.
    fn saturating_sub(self, other: Self) -> Self;

    /// `self + other`, wrapping.
    fn wrapping_add(self, other: Self) -> Self;

    /// `self * other`, wrapping.
    fn wrapping_mul(self, other: Self) -> Self;

    /// Panics for a `rows x cols` view of a slice of `len` elements whose
    /// element count does not fit the index type.
    #[track_caller]
    fn too_large(rows: Self, cols: Self, len: usize) -> !;

    /// The addresses of the elements at offsets `i - cols`, `i` and
    /// `i + cols` from `start`: an element and those above and below it,
    /// the offsets computed in this type (for `u32`, 32-bit arithmetic,
    /// widened once each).
    ///
    /// # Safety
    /// `i - cols` and `i + cols` are offsets of elements of one slice that
    /// starts at `start` (neither wraps).
    unsafe fn column_neighbours<T>(
        start: *const T,
        i: Self,
        cols: Self,
    ) -> (*const T, *const T, *const T);
}

impl MatrixIndex for usize {
    const ZERO: usize = 0;
    const ONE: usize = 1;

    #[inline(always)]
    fn checked_len(rows: usize, cols: usize) -> Option<usize> {
        // Both below 2^32 with a 64-bit usize: the product fits, and the
        // test is cheaper on the GPU than `checked_mul` (a dozen instructions).
        let fits = (usize::BITS >= 64 && (rows | cols) as u64 >> 32 == 0)
            || rows.checked_mul(cols).is_some();
        fits.then_some(rows.wrapping_mul(cols))
    }

    #[inline(always)]
    fn to_usize(self) -> usize {
        self
    }

    #[inline(always)]
    fn from_usize_truncating(value: usize) -> usize {
        value
    }

    #[inline(always)]
    fn saturating_sub(self, other: usize) -> usize {
        usize::saturating_sub(self, other)
    }

    #[inline(always)]
    fn wrapping_add(self, other: usize) -> usize {
        usize::wrapping_add(self, other)
    }

    #[inline(always)]
    fn wrapping_mul(self, other: usize) -> usize {
        usize::wrapping_mul(self, other)
    }

    #[inline(always)]
    #[track_caller]
    fn too_large(rows: usize, cols: usize, len: usize) -> ! {
        // No slice holds more than `usize::MAX` elements.
        input::too_short(rows, cols, len)
    }

    #[inline(always)]
    unsafe fn column_neighbours<T>(
        start: *const T,
        i: usize,
        cols: usize,
    ) -> (*const T, *const T, *const T) {
        // SAFETY: the caller's guarantee: all three are in the slice.
        unsafe {
            let centre = start.add(i);
            (centre.sub(cols), centre, centre.add(cols))
        }
    }
}

impl MatrixIndex for u32 {
    const ZERO: u32 = 0;
    const ONE: u32 = 1;

    #[inline(always)]
    fn checked_len(rows: u32, cols: u32) -> Option<u32> {
        rows.checked_mul(cols)
    }

    #[inline(always)]
    fn to_usize(self) -> usize {
        self as usize
    }

    #[inline(always)]
    fn from_usize_truncating(value: usize) -> u32 {
        value as u32
    }

    #[inline(always)]
    fn saturating_sub(self, other: u32) -> u32 {
        u32::saturating_sub(self, other)
    }

    #[inline(always)]
    fn wrapping_add(self, other: u32) -> u32 {
        u32::wrapping_add(self, other)
    }

    #[inline(always)]
    fn wrapping_mul(self, other: u32) -> u32 {
        u32::wrapping_mul(self, other)
    }

    #[inline(always)]
    #[track_caller]
    fn too_large(rows: u32, cols: u32, _len: usize) -> ! {
        input::too_large_for_u32(rows, cols)
    }

    #[inline(always)]
    unsafe fn column_neighbours<T>(
        start: *const T,
        i: u32,
        cols: u32,
    ) -> (*const T, *const T, *const T) {
        // SAFETY: the caller's guarantee: all three are in the slice, and
        // neither `i - cols` nor `i + cols` wraps.
        unsafe {
            (
                start.add((i - cols) as usize),
                start.add(i as usize),
                start.add((i + cols) as usize),
            )
        }
    }
}

/// The extents of a row-major matrix, `rows x cols`, whose element count
/// `rows * cols` fits the index type `I`: offsets `row * cols + col` of its
/// elements never wrap. Named [`Shape2d`] (`usize`) and [`Shape2dU32`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape2dOf<I> {
    rows: I,
    cols: I,
    /// `rows * cols`, computed once (an output's comes from the host).
    len: I,
}

/// The extents of a row-major matrix, `rows x cols`, whose element count
/// `rows * cols` fits in a `usize` (so [`len`](Shape2dOf::len) never
/// overflows).
pub type Shape2d = Shape2dOf<usize>;

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
pub type Shape2dU32 = Shape2dOf<u32>;

impl<I: MatrixIndex> Shape2dOf<I> {
    /// `rows x cols`, or `None` if `rows * cols` does not fit in `I`.
    #[inline(always)]
    pub fn new(rows: I, cols: I) -> Option<Self> {
        let len = I::checked_len(rows, cols)?;
        Some(Shape2dOf { rows, cols, len })
    }

    /// A shape whose element count the caller knows.
    ///
    /// # Safety
    /// `len == rows * cols` (with no overflow).
    #[inline(always)]
    pub(crate) unsafe fn with_len(rows: I, cols: I, len: I) -> Self {
        Shape2dOf { rows, cols, len }
    }

    /// The number of rows.
    #[inline(always)]
    pub fn rows(self) -> I {
        self.rows
    }

    /// The number of columns.
    #[inline(always)]
    pub fn cols(self) -> I {
        self.cols
    }

    /// The number of elements, `rows * cols`.
    #[inline(always)]
    pub fn len(self) -> I {
        self.len
    }

    /// Whether the matrix has no elements.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len == I::ZERO
    }

    /// `cols x rows`: the shape of the transpose (the same element count).
    #[inline(always)]
    pub fn transposed(self) -> Self {
        Shape2dOf {
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
    pub fn contains(self, row: I, col: I) -> bool {
        (row < self.rows) & (col < self.cols)
    }

    /// The offset `row * cols + col` of element `(row, col)`, which the
    /// caller has checked is inside ([`contains`](Self::contains)).
    ///
    /// # Safety
    /// `row < rows` and `col < cols`.
    #[inline(always)]
    pub(crate) unsafe fn offset_unchecked(self, row: I, col: I) -> usize {
        // `row * cols + col <= (rows - 1) * cols + cols - 1 = len - 1`,
        // which fits in `I`: neither operation wraps.
        (row * self.cols + col).to_usize()
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
