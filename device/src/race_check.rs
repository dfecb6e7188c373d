//! What the CPU simulator's race detector sees: the memory accesses device
//! code makes through this crate's types.
//!
//! Output slices ([`DisjointSlice`](crate::DisjointSlice) and its matrix
//! forms, `get_unchecked_mut` included), shared arrays (the phase token's
//! accessors and the raw [`SharedArray`](crate::shared::SharedArray)'s
//! `read` and `write`) and atomics ([`DeviceAtomic`](crate::DeviceAtomic))
//! report each access here; on the simulator, while its race detector is on,
//! the executor checks it against the other threads' accesses. A reference
//! handed out (`get_mut`, `as_array`) counts as an access of its bytes when
//! it is made: while it lives, another thread's write of them is a race in
//! Rust's rules too.
//!
//! What cannot be seen: accesses through raw pointers (`as_mut_ptr`), and
//! reads of input slices (`&[T]`), which are plain Rust slices. Inputs
//! cannot race (nothing writes them during a launch, see the README's
//! parameter table); a raw pointer is the user's own `unsafe`.
//!
//! On the GPU every function here is nothing.

#[cfg(not(target_arch = "nvptx64"))]
use crate::arch::simulation::AccessKind;

/// A read of the `T` at `ptr` (or of a shared reference to it).
#[inline(always)]
pub(crate) fn read<T>(ptr: *const T) {
    read_range(ptr, 1)
}

/// A read of the `len` elements of `T` from `ptr`.
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn read_range<T>(ptr: *const T, len: usize) {
    #[cfg(not(target_arch = "nvptx64"))]
    crate::arch::record(ptr.cast(), size_of::<T>() * len, AccessKind::Read)
}

/// A write of the `T` at `ptr` (or a mutable reference to it).
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn write<T>(ptr: *const T) {
    #[cfg(not(target_arch = "nvptx64"))]
    crate::arch::record(ptr.cast(), size_of::<T>(), AccessKind::Write)
}

/// A write of the `len` elements of `T` from `ptr`.
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn write_range<T>(ptr: *const T, len: usize) {
    #[cfg(not(target_arch = "nvptx64"))]
    crate::arch::record(ptr.cast(), size_of::<T>() * len, AccessKind::Write)
}

/// An atomic operation on the `T` at `ptr`.
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn atomic<T>(ptr: *const T) {
    #[cfg(not(target_arch = "nvptx64"))]
    crate::arch::record(ptr.cast(), size_of::<T>(), AccessKind::Atomic)
}
