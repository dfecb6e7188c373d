//! Shared memory: one array per block, visible to all of the block's threads.
//!
//! Static arrays come from [`shared_array!`](crate::shared_array) (for
//! example `let tile = shared_array!(f32; 256);`); the
//! dynamic array, sized by the launch (`launch!(k[grid, block, stream, bytes](..))`),
//! from [`dynamic`].
//!
//! Threads of a block read and write the same array, so element access is
//! `unsafe`: the caller orders conflicting accesses with
//! [`sync_threads`](crate::sync_threads).

use core::marker::PhantomData;

/// An array in the block's shared memory.
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    ptr: *mut T,
    len: usize,
    _element: PhantomData<T>,
}

impl<T: Copy> SharedArray<T> {
    /// Wraps `len` elements of shared memory at the generic address `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of at least `len` elements of `T` in shared memory.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        SharedArray {
            ptr,
            len,
            _element: PhantomData,
        }
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads element `index`, or `None` past the end.
    ///
    /// # Safety
    /// No other thread writes element `index` between the last barrier and the next one.
    #[inline(always)]
    pub unsafe fn read(&self, index: usize) -> Option<T> {
        // SAFETY: in bounds; the caller excludes concurrent writes.
        (index < self.len).then(|| unsafe { self.ptr.add(index).read() })
    }

    /// Writes `value` at `index`; returns `false` past the end.
    ///
    /// # Safety
    /// No other thread reads or writes element `index` between the last barrier
    /// and the next one.
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: T) -> bool {
        if index < self.len {
            // SAFETY: in bounds; the caller excludes concurrent access.
            unsafe { self.ptr.add(index).write(value) };
            true
        } else {
            false
        }
    }

    /// The generic address of the first element.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// The block's dynamic shared memory as an array of `T`: as many whole elements
/// as the launch's shared-memory size holds.
#[inline(always)]
pub fn dynamic<T: Copy>() -> SharedArray<T> {
    let (ptr, bytes) = crate::arch::dynamic_shared();
    let len = bytes.checked_div(core::mem::size_of::<T>()).unwrap_or(0);
    // SAFETY: the dynamic array holds `bytes` bytes at a 16-byte alignment,
    // enough for any `T` of alignment up to 16.
    unsafe { SharedArray::from_raw_parts(ptr.cast(), len) }
}

#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __shared_array_named {
    ($ty:ty; $len:expr; $sym:literal) => {{
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!(".shared .align {align} .b8 ", $sym, "[{bytes}];"),
            align = const ::core::mem::align_of::<$ty>(),
            bytes = const ::core::mem::size_of::<$ty>() * ($len),
        );
        #[cfg(target_arch = "nvptx64")]
        let ptr: *mut $ty = {
            let ptr: *mut $ty;
            // SAFETY: takes the generic address of the array declared just above.
            unsafe {
                ::core::arch::asm!(concat!("cvta.shared.u64 {p}, ", $sym, ";"),
                    p = out(reg64) ptr, options(pure, nomem, nostack));
            }
            ptr
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let ptr: *mut $ty = $crate::__private::static_shared::<$ty>($sym, $len);
        #[allow(unreachable_code)]
        // SAFETY: `ptr` addresses `len` elements of `$ty` in shared memory.
        unsafe { $crate::shared::SharedArray::<$ty>::from_raw_parts(ptr, $len) }
    }};
}
