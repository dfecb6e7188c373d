//! Witnesses: values that prove a thread is the only one of its launch to
//! hold an index.
//!
//! # The design
//!
//! Every thread of a launch runs the same kernel body with the same
//! arguments, so an output cannot be a `&mut [T]`: thousands of threads would
//! hold the same mutable slice. An output is instead a
//! [`DisjointSlice`](crate::DisjointSlice) (or its two- and three-dimensional
//! forms), and safe code may touch only the element named by a witness:
//!
//! | witness | from | unique when | output | element |
//! |---|---|---|---|---|
//! | [`ThreadIndex`] | [`thread_index`](crate::thread_index) | grid and block are `(n, 1, 1)` | [`DisjointSlice<T>`](crate::DisjointSlice) | `grid_1d()` |
//! | [`ThreadIndex2d`] | [`thread_index_2d`](crate::thread_index_2d) | grid and block have `z = 1` | [`DisjointSlice2d<T, R>`](crate::DisjointSlice2d) | rows `y * R .. y * R + R`, column `x` |
//! | [`ThreadIndex3d`] | [`thread_index_3d`](crate::thread_index_3d) | always | [`DisjointSlice3d<T>`](crate::DisjointSlice3d) | `(z, y, x)` |
//!
//! # Why it is sound
//!
//! 1. *A witness is built only from the thread's own coordinates.* Its
//!    constructors are private to this crate; the functions above compute it
//!    from `threadIdx`, `blockIdx`, `blockDim` and `gridDim`, and refuse (a
//!    panic, a trap on the GPU) the launch shapes in which two threads would
//!    get the same value: a one-dimensional witness in a launch with a `y` or
//!    `z` extent, a two-dimensional one in a launch with a `z` extent. Global
//!    positions `(x, y, z)` are distinct per thread, and the runtime refuses
//!    launches of 2^64 threads or more, so no computation wraps. The one form
//!    without a test, a `#[kernel]`'s `thread_index()` in its entry point for
//!    one-dimensional launches, needs that entry point's shape token, which
//!    only the entry point can make (`unsafe`): neither the unchecked witness
//!    nor the body's one-dimensional instance can be called from safe code.
//! 2. *A witness never leaves its thread.* The types are `!Send` and `!Sync`
//!    (they hold a `PhantomData<*mut ()>`), so no safe channel carries one to
//!    another thread: not a `static` behind a lock (a `static` must be `Sync`,
//!    and a lock is `Sync` only for `Send` contents), not an atomic, not shared
//!    memory (whose element types must be `Send`, see
//!    [`SharedElement`](crate::shared::SharedElement)). They are `Copy`, which
//!    only duplicates the value within the thread that holds it.
//! 3. *One output, one mapping.* Each output type accepts exactly one witness
//!    type and maps it to elements in exactly one way, fixed by the output's
//!    type (for [`DisjointSlice2d`](crate::DisjointSlice2d), the const
//!    parameter `R`, rows per thread). There is no second way (a transposed or
//!    coarsened mapping) for the same output, so two threads cannot reach one
//!    element through two schemes. Distinct outputs are distinct buffers: the
//!    launcher borrows each output mutably.
//! 4. The output checks bounds per axis (`x < cols` and `y < rows`, not only
//!    `y * cols + x < len`), so a thread outside the matrix never wraps onto
//!    another thread's element.
//! 5. *No slice outlives its launch.* A kernel's slices borrow a local of
//!    its entry point, so a kernel declaring `&'static [T]` (to keep it in a
//!    static for a later launch, after the buffer is freed) does not compile.
//! 6. *On the simulator, a witness is checked at each use.* Host-only code (a
//!    `thread_local!`) could carry one between the simulator's threads, which
//!    share OS threads; so a witness records the simulated thread that made
//!    it, and an output refuses it in any other (a report naming both; see
//!    [`thread_owner`](crate::thread_owner)). On the GPU this costs nothing.

use crate::thread_owner::Owner;
use core::fmt;
use core::marker::PhantomData;

/// Makes the witnesses `!Send` and `!Sync`.
type NotSend = PhantomData<*mut ()>;

/// A thread's proof of a unique one-dimensional index: no other thread of the
/// same launch holds a `ThreadIndex` of the same value.
///
/// It cannot be built from a number; it comes from
/// [`thread_index`](crate::thread_index) on the device, and cannot leave the
/// thread (it is neither `Send` nor `Sync`). See the [module
/// documentation](self).
#[derive(Clone, Copy)]
pub struct ThreadIndex {
    index: usize,
    owner: Owner,
    _thread: NotSend,
}

impl ThreadIndex {
    /// Callers guarantee that no other thread of the launch gets the same value.
    #[inline(always)]
    pub(crate) fn new_unique(index: usize) -> Self {
        ThreadIndex {
            index,
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// The index, for the output that writes it: checked to belong to the
    /// running thread (on the simulator; see the [module documentation](self)).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn owned(self) -> usize {
        self.owner.check("a ThreadIndex");
        self.index
    }

    /// The index as a number, for reading inputs and for bounds checks.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.index
    }
}

/// A thread's proof of a unique global position `(x, y)`: no other thread of
/// the same launch holds a `ThreadIndex2d` of the same value.
///
/// From [`thread_index_2d`](crate::thread_index_2d); neither `Send` nor
/// `Sync`. A [`DisjointSlice2d`](crate::DisjointSlice2d) maps it to row `y`
/// (the matrix is row-major), column `x`.
#[derive(Clone, Copy)]
pub struct ThreadIndex2d {
    x: usize,
    y: usize,
    owner: Owner,
    _thread: NotSend,
}

impl ThreadIndex2d {
    /// Callers guarantee that no other thread of the launch gets the same pair.
    #[inline(always)]
    pub(crate) fn new_unique(x: usize, y: usize) -> Self {
        ThreadIndex2d {
            x,
            y,
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// `(x, y)`, for the output that writes there: checked to belong to the
    /// running thread (on the simulator).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn owned(self) -> (usize, usize) {
        self.owner.check("a ThreadIndex2d");
        (self.x, self.y)
    }

    /// The global x position (`blockIdx.x * blockDim.x + threadIdx.x`).
    #[inline(always)]
    pub fn x(self) -> usize {
        self.x
    }

    /// The global y position (`blockIdx.y * blockDim.y + threadIdx.y`).
    #[inline(always)]
    pub fn y(self) -> usize {
        self.y
    }

    /// The row this thread writes in a row-major output: `y`.
    #[inline(always)]
    pub fn row(self) -> usize {
        self.y
    }

    /// The column this thread writes in a row-major output: `x`.
    #[inline(always)]
    pub fn col(self) -> usize {
        self.x
    }
}

/// A thread's proof of a unique global position `(x, y, z)`: no other thread
/// of the same launch holds a `ThreadIndex3d` of the same value.
///
/// From [`thread_index_3d`](crate::thread_index_3d); neither `Send` nor
/// `Sync`. A [`DisjointSlice3d`](crate::DisjointSlice3d) maps it to element
/// `(z, y, x)` (z the slowest axis).
#[derive(Clone, Copy)]
pub struct ThreadIndex3d {
    x: usize,
    y: usize,
    z: usize,
    owner: Owner,
    _thread: NotSend,
}

impl ThreadIndex3d {
    /// Callers guarantee that no other thread of the launch gets the same triple.
    #[inline(always)]
    pub(crate) fn new_unique(x: usize, y: usize, z: usize) -> Self {
        ThreadIndex3d {
            x,
            y,
            z,
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// `(x, y, z)`, for the output that writes there: checked to belong to
    /// the running thread (on the simulator).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn owned(self) -> (usize, usize, usize) {
        self.owner.check("a ThreadIndex3d");
        (self.x, self.y, self.z)
    }

    /// The global x position.
    #[inline(always)]
    pub fn x(self) -> usize {
        self.x
    }

    /// The global y position.
    #[inline(always)]
    pub fn y(self) -> usize {
        self.y
    }

    /// The global z position.
    #[inline(always)]
    pub fn z(self) -> usize {
        self.z
    }

    /// The row within a slice of a row-major grid: `y`.
    #[inline(always)]
    pub fn row(self) -> usize {
        self.y
    }

    /// The column within a row: `x`.
    #[inline(always)]
    pub fn col(self) -> usize {
        self.x
    }
}

// Equality and formatting look at the position only: the maker the
// simulator records is no part of the value.

impl PartialEq for ThreadIndex {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl Eq for ThreadIndex {}
impl fmt::Debug for ThreadIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadIndex")
            .field("index", &self.index)
            .finish()
    }
}

impl PartialEq for ThreadIndex2d {
    fn eq(&self, other: &Self) -> bool {
        (self.x, self.y) == (other.x, other.y)
    }
}
impl Eq for ThreadIndex2d {}
impl fmt::Debug for ThreadIndex2d {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadIndex2d")
            .field("x", &self.x)
            .field("y", &self.y)
            .finish()
    }
}

impl PartialEq for ThreadIndex3d {
    fn eq(&self, other: &Self) -> bool {
        (self.x, self.y, self.z) == (other.x, other.y, other.z)
    }
}
impl Eq for ThreadIndex3d {}
impl fmt::Debug for ThreadIndex3d {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadIndex3d")
            .field("x", &self.x)
            .field("y", &self.y)
            .field("z", &self.z)
            .finish()
    }
}
