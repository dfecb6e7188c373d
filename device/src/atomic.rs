//! Atomic cells in device memory.
//!
//! A kernel takes `&[DeviceAtomic<T>]` where many threads update the same
//! elements (histograms, counters, reductions). The host passes a
//! `&mut DeviceBuffer<T>`: the kernel writes it, so no other argument of the
//! launch may alias it.
//!
//! Cells in shared memory come from `shared_array!(DeviceAtomic<u32>; 256)`
//! (see [`shared`](crate::shared)): every thread of the block may update any
//! of them between two phase barriers.
//!
//! All operations are relaxed and atomic with respect to every thread of the
//! device (integer operations in shared memory compile to `atom.shared.*`,
//! in global memory to `atom.global.*`).

use core::cell::UnsafeCell;

/// An element of device memory updated with atomic instructions.
#[repr(transparent)]
pub struct DeviceAtomic<T> {
    value: UnsafeCell<T>,
}

// SAFETY: every access to the cell goes through an atomic instruction.
unsafe impl<T: Send> Sync for DeviceAtomic<T> {}

mod sealed {
    pub trait Sealed {}
}

/// The element types with atomic instructions: `i32`, `u32`, `u64`, `f32`, `f64`.
pub trait AtomicElement: sealed::Sealed + BitEq + Copy {
    /// Zero of the type.
    const ZERO: Self;
    /// One of the type.
    const ONE: Self;

    /// Atomically adds `v`; returns the old value.
    ///
    /// # Safety
    /// `ptr` is valid, aligned memory accessed only atomically.
    unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self;
    /// Atomically stores the minimum of the old value and `v`; returns the old value.
    ///
    /// # Safety
    /// As [`AtomicElement::atomic_add`].
    unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self;
    /// Atomically stores the maximum of the old value and `v`; returns the old value.
    ///
    /// # Safety
    /// As [`AtomicElement::atomic_add`].
    unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self;
    /// Atomically replaces the value with `v`; returns the old value.
    ///
    /// # Safety
    /// As [`AtomicElement::atomic_add`].
    unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self;
    /// Atomically replaces the value with `new` if it equals `current` (bit for
    /// bit); returns the old value.
    ///
    /// # Safety
    /// As [`AtomicElement::atomic_add`].
    unsafe fn atomic_compare_and_swap(ptr: *mut Self, current: Self, new: Self) -> Self;
    /// Atomically reads the value.
    ///
    /// # Safety
    /// As [`AtomicElement::atomic_add`].
    unsafe fn atomic_load(ptr: *mut Self) -> Self;
}

impl<T: AtomicElement> DeviceAtomic<T> {
    /// The cell, for an atomic instruction (which the race detector sees).
    #[inline(always)]
    fn ptr(&self) -> *mut T {
        let ptr = self.value.get();
        crate::race_check::atomic(ptr);
        ptr
    }

    /// Adds `v`; returns the previous value.
    #[inline(always)]
    pub fn fetch_add(&self, v: T) -> T {
        // SAFETY: the cell is valid device memory accessed only atomically.
        unsafe { T::atomic_add(self.ptr(), v) }
    }

    /// Stores the minimum of the current value and `v`; returns the previous value.
    #[inline(always)]
    pub fn fetch_min(&self, v: T) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::atomic_min(self.ptr(), v) }
    }

    /// Stores the maximum of the current value and `v`; returns the previous value.
    #[inline(always)]
    pub fn fetch_max(&self, v: T) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::atomic_max(self.ptr(), v) }
    }

    /// Replaces the value with `v`; returns the previous value.
    #[inline(always)]
    pub fn swap(&self, v: T) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::atomic_exchange(self.ptr(), v) }
    }

    /// Stores `new` if the value is bitwise equal to `current`. Returns
    /// `Ok(previous)` when it stored, `Err(previous)` when it did not.
    #[inline(always)]
    pub fn compare_exchange(&self, current: T, new: T) -> Result<T, T> {
        // SAFETY: as in `fetch_add`.
        let old = unsafe { T::atomic_compare_and_swap(self.ptr(), current, new) };
        if old.bit_eq(current) {
            Ok(old)
        } else {
            Err(old)
        }
    }

    /// Reads the value atomically.
    #[inline(always)]
    pub fn load(&self) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::atomic_load(self.ptr()) }
    }
}

impl<T> DeviceAtomic<T> {
    /// The cell's address, for this crate's atomic protocols on cell types
    /// of their own (`crate::lookback`'s status words).
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *mut T {
        self.value.get()
    }

    /// A cell holding `value` (for a slot of shared memory, written in the
    /// `Writing` phase: `*tile.own_mut(&mut block, 0) = DeviceAtomic::new(0)`).
    #[inline(always)]
    pub const fn new(value: T) -> Self {
        DeviceAtomic {
            value: UnsafeCell::new(value),
        }
    }

    /// The value, through an exclusive borrow: no atomic instruction needed.
    #[inline(always)]
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// The value, consuming the cell.
    #[inline(always)]
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

/// Bitwise equality, as `compare_exchange` compares (so `NaN` equals itself).
pub trait BitEq: Copy {
    /// Whether the two values have the same bits.
    fn bit_eq(self, other: Self) -> bool;
}

macro_rules! bit_eq_int {
    ($($t:ty),*) => {$(
        impl BitEq for $t {
            #[inline(always)]
            fn bit_eq(self, other: Self) -> bool { self == other }
        }
    )*};
}
bit_eq_int!(i32, u32, u64);
impl BitEq for f32 {
    #[inline(always)]
    fn bit_eq(self, other: Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}
impl BitEq for f64 {
    #[inline(always)]
    fn bit_eq(self, other: Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl sealed::Sealed for i32 {}
impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}

/// Tells the CPU simulator whether an atomic operation just changed memory
/// (`crate::arch::after_atomic`): a thread spinning on an atomic then lets the
/// other threads of its block run, and one that changes nothing for long is
/// reported as making no progress. Nothing on the device.
#[inline(always)]
fn after_atomic(changed: bool) {
    #[cfg(not(target_arch = "nvptx64"))]
    crate::arch::after_atomic(changed);
    #[cfg(target_arch = "nvptx64")]
    let _ = changed;
}

/// Integer atomics: `core::sync::atomic`, relaxed, on the host and on the
/// device alike. On the device they are LLVM `atomicrmw`/`cmpxchg`
/// instructions, which LLVM places in the state space of the address: a
/// cell in shared memory gets `atom.shared.*`, one in a kernel's buffer
/// `atom.global.*` (relaxed, GPU scope, as CUDA's `atomicAdd`).
mod integer {
    use super::{after_atomic, AtomicElement};
    use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

    macro_rules! integer_atomics {
        ($ty:ty, $atomic:ty) => {
            impl AtomicElement for $ty {
                const ZERO: Self = 0;
                const ONE: Self = 1;
                #[inline(always)]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_add(v, Relaxed);
                    after_atomic(v != 0);
                    old
                }
                #[inline(always)]
                unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_min(v, Relaxed);
                    after_atomic(v < old);
                    old
                }
                #[inline(always)]
                unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_max(v, Relaxed);
                    after_atomic(v > old);
                    old
                }
                #[inline(always)]
                unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.swap(v, Relaxed);
                    after_atomic(v != old);
                    old
                }
                #[inline(always)]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let old = match unsafe { <$atomic>::from_ptr(ptr) }
                        .compare_exchange(current, new, Relaxed, Relaxed)
                    {
                        Ok(v) | Err(v) => v,
                    };
                    after_atomic(old == current && new != current);
                    old
                }
                #[inline(always)]
                unsafe fn atomic_load(ptr: *mut Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory
                    // accessed only atomically, which `from_ptr` requires.
                    let value = unsafe { <$atomic>::from_ptr(ptr) }.load(Relaxed);
                    after_atomic(false);
                    value
                }
            }
        };
    }
    integer_atomics!(i32, AtomicI32);
    integer_atomics!(u32, AtomicU32);
    integer_atomics!(u64, AtomicU64);
}

/// Float atomics: exchange, compare-and-swap and load on the bits (as
/// integer atomics); min and max by compare-and-swap (`atom.min.f32` needs
/// sm_90); add with PTX's `atom.add.f32`/`.f64` on the device (a generic
/// address: Rust has no float `atomicrmw`) and by compare-and-swap on the host.
mod float {
    use super::{after_atomic, AtomicElement};
    use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

    macro_rules! float_atomics {
        ($ty:ty, $atomic:ty, $add:literal, $class:ident) => {
            impl AtomicElement for $ty {
                const ZERO: Self = 0.0;
                const ONE: Self = 1.0;
                #[inline(always)]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    #[cfg(target_arch = "nvptx64")]
                    {
                        let old: $ty;
                        // SAFETY: the caller guarantees `ptr` is valid, aligned
                        // device memory accessed only atomically.
                        unsafe {
                            core::arch::asm!(concat!($add, " {old}, [{ptr}], {v};"),
                                old = out($class) old, ptr = in(reg64) ptr, v = in($class) v,
                                options(nostack));
                        }
                        old
                    }
                    // SAFETY: forwarded from the caller (valid, aligned memory
                    // accessed only atomically).
                    #[cfg(not(target_arch = "nvptx64"))]
                    unsafe {
                        super::cas_loop(ptr, |old| old + v)
                    }
                }
                #[inline(always)]
                unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: forwarded from the caller.
                    unsafe { super::cas_loop(ptr, |old| if v < old { v } else { old }) }
                }
                #[inline(always)]
                unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: forwarded from the caller.
                    unsafe { super::cas_loop(ptr, |old| if v > old { v } else { old }) }
                }
                #[inline(always)]
                unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory accessed
                    // only atomically; the float has the size and alignment of its bits.
                    let old = unsafe { <$atomic>::from_ptr(ptr.cast()) }.swap(v.to_bits(), Relaxed);
                    after_atomic(old != v.to_bits());
                    <$ty>::from_bits(old)
                }
                #[inline(always)]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory accessed
                    // only atomically; the float has the size and alignment of its bits.
                    let cell = unsafe { <$atomic>::from_ptr(ptr.cast()) };
                    let (current, new) = (current.to_bits(), new.to_bits());
                    let old = match cell.compare_exchange(current, new, Relaxed, Relaxed) {
                        Ok(v) | Err(v) => v,
                    };
                    after_atomic(old == current && new != current);
                    <$ty>::from_bits(old)
                }
                #[inline(always)]
                unsafe fn atomic_load(ptr: *mut Self) -> Self {
                    // SAFETY: the caller guarantees `ptr` is valid, aligned memory accessed
                    // only atomically; the float has the size and alignment of its bits.
                    let bits = unsafe { <$atomic>::from_ptr(ptr.cast()) }.load(Relaxed);
                    after_atomic(false);
                    <$ty>::from_bits(bits)
                }
            }
        };
    }
    float_atomics!(f32, AtomicU32, "atom.add.f32", reg32);
    float_atomics!(f64, AtomicU64, "atom.add.f64", reg64);
}

/// Applies `update` atomically by retrying compare-and-swap; returns the old value.
///
/// # Safety
/// `ptr` is valid, aligned memory accessed only atomically.
#[inline(always)]
unsafe fn cas_loop<T: AtomicElement>(ptr: *mut T, update: impl Fn(T) -> T) -> T {
    // SAFETY: the caller guarantees `ptr` is valid memory accessed only atomically.
    let mut old = unsafe { T::atomic_load(ptr) };
    loop {
        let new = update(old);
        if new.bit_eq(old) {
            return old;
        }
        // SAFETY: as above.
        let seen = unsafe { T::atomic_compare_and_swap(ptr, old, new) };
        if seen.bit_eq(old) {
            return old;
        }
        old = seen;
    }
}
