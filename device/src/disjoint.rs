//! Output slices that make racing writes impossible in safe code.
//!
//! Every thread of a launch runs the same kernel body with the same arguments,
//! so a `&mut [T]` argument would hand the same mutable slice to thousands of
//! threads at once. Instead a kernel takes a [`DisjointSlice<T>`]: safe code may
//! touch only the element at the thread's own [`ThreadIndex`], a value that no
//! other thread of the launch holds, so no two threads ever write one element.

use core::marker::PhantomData;

/// A thread's proof of a unique index: no other thread of the same launch can
/// hold a `ThreadIndex` of the same value.
///
/// It cannot be built from a number; it comes from
/// [`thread_index`](crate::thread::thread_index) on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex {
    index: usize,
}

impl ThreadIndex {
    /// Callers guarantee that no other thread of the launch gets the same value.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(crate) fn new_unique(index: usize) -> Self {
        ThreadIndex { index }
    }

    /// The index as a number, for reading inputs and for bounds checks.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.index
    }
}

/// A kernel's output slice: each thread may read and write only the element at
/// its own [`ThreadIndex`].
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
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice<'a, T> {
    /// Wraps device memory as an output slice.
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and valid for reads and writes of `len`
    /// elements of `T` for `'a` (for `len == 0`, any non-null aligned pointer);
    /// that memory must be written by nothing else during the launch except
    /// through this slice, and every thread of the launch must get a slice over
    /// the same memory (so that writes at distinct [`ThreadIndex`]es are
    /// disjoint).
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

    /// This thread's element, or `None` when the index is past the end.
    #[inline(always)]
    pub fn get_mut(&mut self, index: ThreadIndex) -> Option<&mut T> {
        if index.index < self.len {
            // SAFETY: in bounds; no other thread holds `index`, so no other
            // thread can reach this element, and `&mut self` stops this thread
            // from holding two references to it.
            Some(unsafe { &mut *self.ptr.add(index.index) })
        } else {
            None
        }
    }

    /// Reads this thread's element, or `None` when the index is past the end.
    #[inline(always)]
    pub fn get(&self, index: ThreadIndex) -> Option<&T> {
        if index.index < self.len {
            // SAFETY: as in `get_mut`: only this thread touches this element.
            Some(unsafe { &*self.ptr.add(index.index) })
        } else {
            None
        }
    }

    /// Writes `value` at this thread's index; returns `false` (and drops the
    /// value) when the index is past the end.
    #[inline(always)]
    pub fn set(&mut self, index: ThreadIndex, value: T) -> bool {
        if index.index < self.len {
            // SAFETY: in bounds, and only this thread holds `index` (see `get_mut`).
            unsafe { self.ptr.add(index.index).write(value) };
            true
        } else {
            false
        }
    }

    /// Any element, by plain index: the escape hatch for write patterns the
    /// witness cannot express (grid-stride loops, tiles).
    ///
    /// # Safety
    /// `index < self.len()`, and no other thread of the launch may read or
    /// write element `index` at the same time.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: the caller upholds bounds and exclusivity.
        unsafe { &mut *self.ptr.add(index) }
    }

    /// The raw device pointer to the first element.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
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
