//! Output slices that make racing writes impossible in safe code.
//!
//! Every thread of a launch runs the same kernel body with the same arguments,
//! so a `&mut [T]` argument would hand the same mutable slice to thousands of
//! threads at once. Instead a kernel takes a [`DisjointSlice<T>`]: safe code may
//! touch only the element at the thread's own [`ThreadIndex`], a value that no
//! other thread of the launch holds, so no two threads ever write one element.
//! [`DisjointSlice2d`](crate::DisjointSlice2d) (in [`matrix`](crate::matrix)) and
//! [`DisjointSlice3d`] are the row-major matrix and
//! 3-D grid forms, written at the thread's [`ThreadIndex2d`] and
//! [`ThreadIndex3d`]. The [`witness`](crate::witness) module explains why
//! this is sound.

use crate::ownership::{ByThread, SliceMap};
use crate::race_check;
use crate::witness::{ThreadIndex, ThreadIndex3d};
use core::marker::PhantomData;

/// A kernel's output slice: each thread may read and write only the element at
/// its own [`ThreadIndex`], or, with another ownership map `M`, the elements
/// `M` gives it (see [`ownership`](crate::ownership): per block, per warp,
/// grid-stride, blocked, striped).
///
/// On the host, a launcher passes a `&mut DeviceBuffer<T>` (or a mutable view of
/// one) where the kernel takes a `DisjointSlice<T>`; the borrow makes it
/// impossible to pass the same buffer as an input of the same launch.
///
/// ```no_run
/// use gpu_device::{thread_index, DisjointSlice};
///
/// // With `#[kernel]` on it, this is a kernel launched as
/// // `launch!(scale[blocks, threads, stream](&x, 2.0, &mut out))`.
/// pub fn scale(x: &[f32], factor: f32, mut out: DisjointSlice<f32>) {
///     let i = thread_index();
///     if let (Some(o), Some(v)) = (out.get_mut(i), x.get(i.get())) {
///         *o = v * factor;
///     }
/// }
/// ```
pub struct DisjointSlice<'a, T, M: SliceMap = ByThread> {
    pub(crate) ptr: *mut T,
    pub(crate) len: usize,
    _borrow: PhantomData<(&'a mut [T], M)>,
}

impl<'a, T, M: SliceMap> DisjointSlice<'a, T, M> {
    /// Wraps device memory as an output slice.
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and valid for reads and writes of `len`
    /// elements of `T` for `'a` (for `len == 0`, any non-null aligned pointer);
    /// that memory must be written by nothing else during the launch except
    /// through this slice, and every thread of the launch must get a slice over
    /// the same memory with the same map `M` (so that the elements the threads
    /// own are disjoint).
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        DisjointSlice {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of elements of the whole slice.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Any element, by plain index: the escape hatch for write patterns no
    /// map expresses.
    ///
    /// # Safety
    /// `index < self.len()`, and no other thread of the launch may read or
    /// write element `index` at the same time.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: the caller upholds bounds and exclusivity.
        let element = unsafe { self.ptr.add(index) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { &mut *element }
    }

    /// The raw device pointer to the first element.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
}

impl<'a, T> DisjointSlice<'a, T, ByThread> {
    /// This thread's element, or `None` when the index is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, index: ThreadIndex) -> Option<&mut T> {
        let index = index.owned();
        if index < self.len {
            // SAFETY: in bounds; no other thread holds `index`, so no other
            // thread can reach this element, and `&mut self` stops this thread
            // from holding two references to it.
            let element = unsafe { self.ptr.add(index) };
            race_check::write(element);
            // SAFETY: as above.
            Some(unsafe { &mut *element })
        } else {
            None
        }
    }

    /// Reads this thread's element, or `None` when the index is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, index: ThreadIndex) -> Option<&T> {
        let index = index.owned();
        if index < self.len {
            // SAFETY: as in `get_mut`: only this thread touches this element.
            let element = unsafe { self.ptr.add(index) };
            race_check::read(element);
            // SAFETY: as above.
            Some(unsafe { &*element })
        } else {
            None
        }
    }

    /// Writes `value` at this thread's index; returns `false` (and drops the
    /// value) when the index is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, index: ThreadIndex, value: T) -> bool {
        let index = index.owned();
        if index < self.len {
            // SAFETY: in bounds, and only this thread holds `index` (see `get_mut`).
            let element = unsafe { self.ptr.add(index) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(value) };
            true
        } else {
            false
        }
    }
}

/// A kernel's `depth x rows x cols` output grid, row-major (x fastest, z
/// slowest): each thread may read and write only element `(z, y, x)` of its
/// [`ThreadIndex3d`].
///
/// On the host, a launcher takes a `DeviceView3dMut<T>`
/// (`buffer.view_3d_mut(depth, rows, cols)?`) for it.
pub struct DisjointSlice3d<'a, T> {
    ptr: *mut T,
    depth: usize,
    rows: usize,
    cols: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice3d<'a, T> {
    /// Wraps device memory as a `depth x rows x cols` output grid.
    ///
    /// # Safety
    /// As [`DisjointSlice2d::from_raw_parts`](crate::matrix::DisjointSlice2dOf::from_raw_parts) for `depth * rows * cols`
    /// elements.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, depth: usize, rows: usize, cols: usize) -> Self {
        DisjointSlice3d {
            ptr,
            depth,
            rows,
            cols,
            _borrow: PhantomData,
        }
    }

    /// The extents `(depth, rows, cols)`.
    #[inline(always)]
    pub fn extents(&self) -> (usize, usize, usize) {
        (self.depth, self.rows, self.cols)
    }

    /// This thread's element, or `None` outside the grid.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, index: ThreadIndex3d) -> Option<&mut T> {
        let (x, y, z) = index.owned();
        if x < self.cols && y < self.rows && z < self.depth {
            let offset = (z * self.rows + y) * self.cols + x;
            // SAFETY: in bounds; element `(z, y, x)` belongs to this thread
            // alone, and `&mut self` prevents a second reference to it.
            let element = unsafe { self.ptr.add(offset) };
            race_check::write(element);
            // SAFETY: as above.
            Some(unsafe { &mut *element })
        } else {
            None
        }
    }

    /// Writes `value` at this thread's element; returns `false` outside the grid.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, index: ThreadIndex3d, value: T) -> bool {
        let (x, y, z) = index.owned();
        if x < self.cols && y < self.rows && z < self.depth {
            // SAFETY: as in `get_mut`.
            let element = unsafe { self.ptr.add((z * self.rows + y) * self.cols + x) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { *element = value };
            true
        } else {
            false
        }
    }
}

/// Builds a kernel's `&[T]` parameter from the pointer and length the host passed.
///
/// # Safety
/// `ptr` must be non-null, aligned and valid for reads of `len` elements for
/// `'a` (for `len == 0`, any non-null aligned pointer: the launcher passes
/// `align_of::<T>()`), and nothing may write that memory during the launch.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn slice_from_kernel_param<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    // SAFETY: upheld by the caller.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}
