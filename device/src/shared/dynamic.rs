//! The dynamic shared memory as a safe array ([`DynamicShared`]), sized by
//! the launch; written under the default ownership rule (slots `t + k B`).

use super::array::{for_each_own_slot, out_of_range, own_slot};
use super::phase::{Block, Reading, Writing};
use super::{SharedArray, SharedElement};
use crate::race_check;
use core::marker::PhantomData;

/// The block's dynamic shared memory as an array of `T`, sized by the launch
/// (`launch!(k[grid, block, stream, bytes](..))`): as many whole elements as
/// fit after aligning the start for `T`.
///
/// A kernel receives it by declaring a parameter of type `DynamicShared<T>`
/// (at most one): the `#[kernel]` macro builds it on the device and leaves it
/// out of the launcher's arguments. The element type is therefore the same in
/// every thread of a launch, which two handles of different types over the
/// same bytes would break. Accesses take the phase token, as for [`Shared`](super::Shared).
pub struct DynamicShared<T> {
    ptr: *mut T,
    len: usize,
    _element: PhantomData<T>,
}

impl<T: SharedElement> DynamicShared<T> {
    /// The dynamic array of a kernel's entry point.
    ///
    /// # Safety
    /// Called by the `#[kernel]` entry point, at most once per kernel, so
    /// that every thread of a launch views the dynamic shared memory with the
    /// same element type `T`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_kernel_entry() -> Self {
        let (ptr, len) = super::aligned_dynamic::<T>();
        super::opaque_contents(ptr);
        DynamicShared {
            ptr,
            len,
            _element: PhantomData,
        }
    }

    /// The number of slots.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no slots (the launch gave too few bytes for one).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes this thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_own(&self, block: &mut Block<Writing>, k: usize, value: T) {
        *self.own_mut(block, k) = value;
    }

    /// This thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own_mut<'w>(&'w self, block: &'w mut Block<Writing>, k: usize) -> &'w mut T {
        let slot = own_slot(block, k, self.len);
        // SAFETY: as in `Shared::own_mut`.
        unsafe { &mut *self.ptr.add(slot) }
    }

    /// Reads this thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own<'w>(&'w self, block: &'w Block<Writing>, k: usize) -> &'w T {
        let slot = own_slot(block, k, self.len);
        // SAFETY: as in `Shared::own`.
        unsafe { &*self.ptr.add(slot) }
    }

    /// Writes every slot this thread owns: slot `s` gets `f(s)`.
    #[inline(always)]
    #[track_caller]
    pub fn fill(&self, block: &mut Block<Writing>, f: impl FnMut(usize) -> T) {
        let ptr = self.ptr;
        for_each_own_slot(block, self.len, f, |slot, value| {
            // SAFETY: an own slot in bounds (see `Shared::own_mut`).
            let element = unsafe { ptr.add(slot) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { *element = value }
        });
    }

    /// The whole array, shared with the other readers.
    #[inline(always)]
    #[track_caller]
    pub fn as_slice<'r>(&'r self, block: &'r Block<Reading>) -> &'r [T] {
        block.check_owner();
        if !T::ATOMIC_CELL {
            race_check::read_range(self.ptr, self.len);
        }
        // SAFETY: `len` slots in bounds; read-only as in `Shared::as_array`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Slot `index`, shared with the other readers. Panics if out of range.
    #[inline(always)]
    #[track_caller]
    pub fn get_ref<'r>(&'r self, block: &'r Block<Reading>, index: usize) -> &'r T {
        block.check_owner();
        if index >= self.len {
            out_of_range(index, self.len)
        }
        // SAFETY: `index < len`; read-only as in `Shared::as_array`.
        let element = unsafe { self.ptr.add(index) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// The array's first slot and its length, the handle given up: what a
    /// `cp.async` ring takes over (it is then the array's only user).
    #[inline(always)]
    pub(crate) fn into_parts(self) -> (*mut T, usize) {
        (self.ptr, self.len)
    }

    /// The raw array: every access through it is `unsafe`.
    #[inline(always)]
    pub fn raw(&self) -> SharedArray<T> {
        // SAFETY: the same slots of shared memory.
        unsafe { SharedArray::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: SharedElement + Copy> DynamicShared<T> {
    /// Reads slot `index`. Panics if out of range.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, block: &Block<Reading>, index: usize) -> T {
        *self.get_ref(block, index)
    }
}
