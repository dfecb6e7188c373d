//! Atomic cells in device memory.
//!
//! A kernel takes `&[DeviceAtomic<T>]` where many threads update the same
//! elements (histograms, counters, reductions). The host passes a
//! `&mut DeviceBuffer<T>`: the kernel writes it, so no other argument of the
//! launch may alias it.
//!
//! All operations are relaxed and have GPU scope (PTX `atom` without
//! qualifiers): they are atomic with respect to every thread of the device.

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
}

impl<T: AtomicElement> DeviceAtomic<T> {
    #[inline(always)]
    fn ptr(&self) -> *mut T {
        self.value.get()
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
        // SAFETY: as in `fetch_add`. A compare-and-swap of zero for zero
        // changes nothing and returns the value: an atomic read for all five types.
        unsafe { T::atomic_compare_and_swap(self.ptr(), T::ZERO, T::ZERO) }
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

#[cfg(target_arch = "nvptx64")]
mod ptx {
    use super::AtomicElement;
    use core::arch::asm;

    /// One `atom.<op>.<type>` instruction with one operand.
    macro_rules! atom1 {
        ($name:ident, $ty:ty, $instr:literal, $class:ident) => {
            #[inline(always)]
            unsafe fn $name(ptr: *mut $ty, v: $ty) -> $ty {
                let old: $ty;
                // SAFETY: the caller guarantees `ptr` is valid, aligned device memory.
                unsafe {
                    asm!(concat!($instr, " {old}, [{ptr}], {v};"),
                         old = out($class) old, ptr = in(reg64) ptr, v = in($class) v,
                         options(nostack));
                }
                old
            }
        };
    }

    /// `atom.cas.<bits>`.
    macro_rules! cas {
        ($name:ident, $ty:ty, $instr:literal, $class:ident) => {
            #[inline(always)]
            unsafe fn $name(ptr: *mut $ty, current: $ty, new: $ty) -> $ty {
                let old: $ty;
                // SAFETY: the caller guarantees `ptr` is valid, aligned device memory.
                unsafe {
                    asm!(concat!($instr, " {old}, [{ptr}], {cur}, {new};"),
                         old = out($class) old, ptr = in(reg64) ptr,
                         cur = in($class) current, new = in($class) new,
                         options(nostack));
                }
                old
            }
        };
    }

    macro_rules! integer_atomics {
        ($ty:ty, $class:ident, $add:literal, $min:literal, $max:literal, $exch:literal, $cas:literal) => {
            impl AtomicElement for $ty {
                const ZERO: Self = 0 as $ty;
                const ONE: Self = 1 as $ty;
                #[inline(always)]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    atom1!(f, $ty, $add, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
                }
                #[inline(always)]
                unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self {
                    atom1!(f, $ty, $min, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
                }
                #[inline(always)]
                unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self {
                    atom1!(f, $ty, $max, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
                }
                #[inline(always)]
                unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self {
                    atom1!(f, $ty, $exch, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
                }
                #[inline(always)]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    cas!(f, $ty, $cas, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, current, new) }
                }
            }
        };
    }

    integer_atomics!(
        i32,
        reg32,
        "atom.add.s32",
        "atom.min.s32",
        "atom.max.s32",
        "atom.exch.b32",
        "atom.cas.b32"
    );
    integer_atomics!(
        u32,
        reg32,
        "atom.add.u32",
        "atom.min.u32",
        "atom.max.u32",
        "atom.exch.b32",
        "atom.cas.b32"
    );
    integer_atomics!(
        u64,
        reg64,
        "atom.add.u64",
        "atom.min.u64",
        "atom.max.u64",
        "atom.exch.b64",
        "atom.cas.b64"
    );

    /// Float min/max by compare-and-swap on the bits: `atom.min.f32` needs sm_90.
    macro_rules! float_atomics {
        ($ty:ty, $bits:ty, $class:ident, $add:literal, $exch:literal, $cas:literal) => {
            impl AtomicElement for $ty {
                const ZERO: Self = 0 as $ty;
                const ONE: Self = 1 as $ty;
                #[inline(always)]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    atom1!(f, $ty, $add, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
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
                    atom1!(f, $ty, $exch, $class);
                    // SAFETY: forwarded from the caller.
                    unsafe { f(ptr, v) }
                }
                #[inline(always)]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    cas!(f, $bits, $cas, $class);
                    // SAFETY: forwarded from the caller; same size and alignment.
                    <$ty>::from_bits(unsafe { f(ptr.cast(), current.to_bits(), new.to_bits()) })
                }
            }
        };
    }

    float_atomics!(
        f32,
        u32,
        reg32,
        "atom.add.f32",
        "atom.exch.b32",
        "atom.cas.b32"
    );
    float_atomics!(
        f64,
        u64,
        reg64,
        "atom.add.f64",
        "atom.exch.b64",
        "atom.cas.b64"
    );
}

/// Applies `update` atomically by retrying compare-and-swap; returns the old value.
///
/// # Safety
/// `ptr` is valid, aligned memory accessed only atomically.
#[inline(always)]
unsafe fn cas_loop<T: AtomicElement>(ptr: *mut T, update: impl Fn(T) -> T) -> T {
    {
        // SAFETY: the caller guarantees `ptr` is valid memory accessed only
        // atomically. A compare-and-swap of zero for zero is an atomic read.
        let mut old = unsafe { T::atomic_compare_and_swap(ptr, T::ZERO, T::ZERO) };
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
}

/// Host atomics: the same operations with `core::sync::atomic`, relaxed as on
/// the device. Each one then tells the simulator whether it changed memory
/// ([`crate::arch::after_atomic`]): a thread spinning on an atomic lets the
/// other threads of its block run, and one that changes nothing for long is
/// reported as making no progress.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::AtomicElement;
    use crate::arch::after_atomic;
    use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

    macro_rules! integer_atomics {
        ($ty:ty, $atomic:ty) => {
            // SAFETY (all methods): the caller guarantees `ptr` is valid, aligned
            // memory accessed only atomically, which `from_ptr` requires.
            impl AtomicElement for $ty {
                const ZERO: Self = 0;
                const ONE: Self = 1;
                #[inline]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_add(v, Relaxed);
                    after_atomic(v != 0);
                    old
                }
                #[inline]
                unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self {
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_min(v, Relaxed);
                    after_atomic(v < old);
                    old
                }
                #[inline]
                unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self {
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.fetch_max(v, Relaxed);
                    after_atomic(v > old);
                    old
                }
                #[inline]
                unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self {
                    let old = unsafe { <$atomic>::from_ptr(ptr) }.swap(v, Relaxed);
                    after_atomic(v != old);
                    old
                }
                #[inline]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    let old = match unsafe { <$atomic>::from_ptr(ptr) }
                        .compare_exchange(current, new, Relaxed, Relaxed)
                    {
                        Ok(v) | Err(v) => v,
                    };
                    after_atomic(old == current && new != current);
                    old
                }
            }
        };
    }
    integer_atomics!(i32, AtomicI32);
    integer_atomics!(u32, AtomicU32);
    integer_atomics!(u64, AtomicU64);

    macro_rules! float_atomics {
        ($ty:ty, $atomic:ty) => {
            // SAFETY (all methods): as for integers; the float has the size and
            // alignment of its bits. Add, min and max are compare-and-swap
            // loops, whose compare-and-swaps tell the simulator what changed.
            impl AtomicElement for $ty {
                const ZERO: Self = 0.0;
                const ONE: Self = 1.0;
                #[inline]
                unsafe fn atomic_add(ptr: *mut Self, v: Self) -> Self {
                    unsafe { super::cas_loop(ptr, |old| old + v) }
                }
                #[inline]
                unsafe fn atomic_min(ptr: *mut Self, v: Self) -> Self {
                    unsafe { super::cas_loop(ptr, |old| if v < old { v } else { old }) }
                }
                #[inline]
                unsafe fn atomic_max(ptr: *mut Self, v: Self) -> Self {
                    unsafe { super::cas_loop(ptr, |old| if v > old { v } else { old }) }
                }
                #[inline]
                unsafe fn atomic_exchange(ptr: *mut Self, v: Self) -> Self {
                    let old = unsafe { <$atomic>::from_ptr(ptr.cast()) }.swap(v.to_bits(), Relaxed);
                    after_atomic(old != v.to_bits());
                    <$ty>::from_bits(old)
                }
                #[inline]
                unsafe fn atomic_compare_and_swap(
                    ptr: *mut Self,
                    current: Self,
                    new: Self,
                ) -> Self {
                    let cell = unsafe { <$atomic>::from_ptr(ptr.cast()) };
                    let (current, new) = (current.to_bits(), new.to_bits());
                    let old = match cell.compare_exchange(current, new, Relaxed, Relaxed) {
                        Ok(v) | Err(v) => v,
                    };
                    after_atomic(old == current && new != current);
                    <$ty>::from_bits(old)
                }
            }
        };
    }
    float_atomics!(f32, AtomicU32);
    float_atomics!(f64, AtomicU64);
}
