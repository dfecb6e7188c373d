//! [`Neighbourhood`]: the witness that an element of a read-only matrix view
//! is in its interior, so that its eight neighbours can be read with no
//! bounds check.
//!
//! A stencil kernel (a Jacobi step, a blur) reads an element's neighbours.
//! Indexing each one checks both axes; CUDA C checks none, and a test
//! `1 <= x < w - 1 && 1 <= y < h - 1` (which a stencil makes anyway, to
//! treat the border apart) proves all of them in bounds. Here that test
//! makes the proof a value: [`Slice2d::interior`](crate::Slice2d::interior)
//! and [`Slice2dU32::interior`](crate::Slice2dU32::interior) return a
//! `Neighbourhood` only for an element with a row above and below it and a
//! column on each side, and its reads are plain loads: the element's
//! address and those of the elements above and below it are computed once,
//! and the left and right neighbours are one element from them.
//!
//! Soundness: a `Neighbourhood` is made only by those two methods, after
//! the test, from a pointer to the element inside the view's slice; the
//! element at `(row + dr, col + dc)` for `dr, dc` in `-1..=1` is then inside
//! the matrix, so inside the slice, and the reads stay there. It borrows
//! the slice for its lifetime `'a` (a shared borrow: nothing writes it), and
//! offers no other offsets.

use core::marker::PhantomData;

/// The 3 x 3 neighbourhood of an interior element of a read-only matrix
/// view: the element and its eight neighbours, read with no bounds check.
///
/// Made by [`Slice2d::interior`](crate::Slice2d::interior) or
/// [`Slice2dU32::interior`](crate::Slice2dU32::interior); see [the module
/// documentation](self).
///
/// ```
/// use gpu_device::Slice2d;
///
/// let data: Vec<f32> = (0..12).map(|v| v as f32).collect();
/// let grid = Slice2d::new(&data, 3, 4);
/// let n = grid.interior(1, 1).unwrap();
/// assert_eq!(0.25 * ((n.up() + n.down()) + (n.left() + n.right())), 5.0);
/// assert_eq!((*n.up_left(), *n.down_right()), (0.0, 10.0));
/// ```
pub struct Neighbourhood<'a, T> {
    /// The element in the row above, the element, and the element in the row
    /// below: `rows[1 + dr]` is `(row + dr, col)`, and each of the three
    /// has its left and right neighbours in the same slice.
    rows: [*const T; 3],
    _data: PhantomData<&'a [T]>,
}

impl<T> Clone for Neighbourhood<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Neighbourhood<'_, T> {}

impl<'a, T> Neighbourhood<'a, T> {
    /// The neighbourhood whose column of elements in the rows above, at and
    /// below the element are `up`, `centre` and `down`. (Each view computes
    /// them its own way: the 32-bit view as 32-bit offsets from the slice's
    /// start, widened once each, as CUDA C's `int` indices are.)
    ///
    /// # Safety
    /// The three pointers point into one slice borrowed for `'a`, and the
    /// elements one before and one after each are in that slice too.
    #[inline(always)]
    pub(crate) unsafe fn new(up: *const T, centre: *const T, down: *const T) -> Self {
        Neighbourhood {
            rows: [up, centre, down],
            _data: PhantomData,
        }
    }

    /// The element `(row + dr, col + dc)`, for `dr` and `dc` in `-1..=1`
    /// (`DR` and `DC` are `dr + 1` and `dc + 1`).
    #[inline(always)]
    fn at<const DR: usize, const DC: usize>(&self) -> &'a T {
        const { assert!(DR < 3 && DC < 3) };
        let row = self.rows[DR];
        // SAFETY: `DC` is in `0..=2`, so the element `DC - 1` away from a
        // row's pointer is in the slice (the constructor's contract), which
        // is borrowed for `'a`.
        unsafe { &*row.offset(DC as isize - 1) }
    }

    /// The element itself.
    #[inline(always)]
    pub fn centre(&self) -> &'a T {
        self.at::<1, 1>()
    }

    /// The element above: `(row - 1, col)`.
    #[inline(always)]
    pub fn up(&self) -> &'a T {
        self.at::<0, 1>()
    }

    /// The element below: `(row + 1, col)`.
    #[inline(always)]
    pub fn down(&self) -> &'a T {
        self.at::<2, 1>()
    }

    /// The element to the left: `(row, col - 1)`.
    #[inline(always)]
    pub fn left(&self) -> &'a T {
        self.at::<1, 0>()
    }

    /// The element to the right: `(row, col + 1)`.
    #[inline(always)]
    pub fn right(&self) -> &'a T {
        self.at::<1, 2>()
    }

    /// `(row - 1, col - 1)`.
    #[inline(always)]
    pub fn up_left(&self) -> &'a T {
        self.at::<0, 0>()
    }

    /// `(row - 1, col + 1)`.
    #[inline(always)]
    pub fn up_right(&self) -> &'a T {
        self.at::<0, 2>()
    }

    /// `(row + 1, col - 1)`.
    #[inline(always)]
    pub fn down_left(&self) -> &'a T {
        self.at::<2, 0>()
    }

    /// `(row + 1, col + 1)`.
    #[inline(always)]
    pub fn down_right(&self) -> &'a T {
        self.at::<2, 2>()
    }
}
