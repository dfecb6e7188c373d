//! Constant memory: values every thread of a launch reads through the
//! constant cache, set from the host between launches (CUDA's
//! `__constant__` with `cudaMemcpyToSymbolAsync`, Numba's
//! `cuda.const.array_like`).
//!
//! A kernel crate declares each with [`constant!`](crate::constant!), at
//! any module level:
//!
//! ```ignore
//! gpu_device::constant! {
//!     /// The filter's taps.
//!     pub static TAPS: [f32; 9];
//! }
//!
//! #[kernel]
//! pub fn filter(x: &[f32], mut out: DisjointSlice<f32>) {
//!     let taps = TAPS.get(); // &[f32; 9], read with `ld.const`
//!     // ...
//! }
//! ```
//!
//! and the host sets it on a stream before the launches that read it
//! (`gpu_runtime::SetConstant`: `TAPS.set(taps, &stream)?`). The value starts
//! zeroed. Kernels read it through [`Constant::get`], a shared reference:
//! a kernel cannot write it (a `DeviceCopy` value has no interior
//! mutability). The runtime orders a `set` after every launch of the crate's
//! kernels on other streams that may still read the old value, and every
//! such launch after the last `set`, as it orders buffers across streams
//! (a `set` on one stream while a kernel on another reads the constant
//! waits for that kernel).
//!
//! On the device the storage is a `static` named `__gpu_const_<crate>_<name>`
//! that `gpu-builder` moves into PTX's `.const` space; on the simulator, the
//! module's global of that name on the launch's device. Two constants of
//! one name in one crate are a compile error on both (their symbols clash).
//! GPUs give a module 64 KiB of constant memory.

use crate::DeviceCopy;
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

/// A value of type `T` in constant memory, declared with
/// [`constant!`](crate::constant!): see the [module documentation](self).
pub struct Constant<T: DeviceCopy> {
    symbol: &'static str,
    #[cfg(target_arch = "nvptx64")]
    storage: &'static ConstantStorage<T>,
    /// The kernel crate's `KERNEL_MODULE` (a `gpu_runtime::EmbeddedModule`),
    /// where the runtime finds the global.
    #[cfg(not(target_arch = "nvptx64"))]
    module: &'static (dyn core::any::Any + Sync),
    #[cfg(not(target_arch = "nvptx64"))]
    _value: core::marker::PhantomData<T>,
}

/// The storage of a [`Constant`] on the device: the static `gpu-builder`
/// moves into the `.const` space (its symbol starts with `__gpu_const_`).
/// A cell, so that the compiler never takes the initial zeros for the value.
#[doc(hidden)]
#[repr(transparent)]
pub struct ConstantStorage<T>(UnsafeCell<MaybeUninit<T>>);

// SAFETY: device code only reads it (through `Constant::get`), and the host
// writes it only between the launches that read it (the runtime's tracking
// of `set`).
unsafe impl<T> Sync for ConstantStorage<T> {}

impl<T> ConstantStorage<T> {
    /// Zeroed storage (a `DeviceCopy` value's all-zero bytes are valid).
    pub const fn zeroed() -> Self {
        ConstantStorage(UnsafeCell::new(MaybeUninit::zeroed()))
    }
}

impl<T: DeviceCopy> Constant<T> {
    /// The constant of a kernel's device code.
    ///
    /// # Safety
    /// Made only by `constant!`: `storage` is the static named `symbol`,
    /// which holds a `T`.
    #[cfg(target_arch = "nvptx64")]
    #[doc(hidden)]
    pub const unsafe fn on_device(
        symbol: &'static str,
        storage: &'static ConstantStorage<T>,
    ) -> Self {
        Constant { symbol, storage }
    }

    /// The constant as the host (and the simulator) sees it.
    ///
    /// # Safety
    /// Made only by `constant!`: `module` is the `KERNEL_MODULE` of the
    /// crate whose device code declares the global `symbol` holding a `T`
    /// (the runtime writes `size_of::<T>()` bytes of a `T` there).
    #[cfg(not(target_arch = "nvptx64"))]
    #[doc(hidden)]
    pub const unsafe fn on_host(
        symbol: &'static str,
        module: &'static (dyn core::any::Any + Sync),
    ) -> Self {
        Constant {
            symbol,
            module,
            _value: core::marker::PhantomData,
        }
    }

    /// The value, as the host last set it before this launch (zeros if it
    /// never did). Inside a kernel only (on the host outside a kernel it
    /// panics, naming itself).
    #[inline(always)]
    pub fn get(&self) -> &T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the storage holds a `T`: zeros (valid for `DeviceCopy`)
            // or a `T` the host wrote; nothing writes it while a kernel
            // runs (see `ConstantStorage`'s `Sync`).
            unsafe { (*self.storage.0.get()).assume_init_ref() }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let global = crate::arch::module_global(
                "constant::Constant::get",
                self.symbol,
                core::mem::size_of::<T>(),
            );
            // SAFETY: the simulator's global of this launch's module,
            // `size_of::<T>()` bytes, 256-aligned (at least `T`'s alignment,
            // `DeviceCopy`), zeroed or holding a `T` the runtime wrote
            // between launches, alive as long as the module.
            unsafe { &*global.cast::<T>() }
        }
    }

    /// The global's symbol (`__gpu_const_<crate>_<name>`).
    pub fn symbol(&self) -> &'static str {
        self.symbol
    }

    /// The crate's `KERNEL_MODULE`, for the runtime.
    #[cfg(not(target_arch = "nvptx64"))]
    #[doc(hidden)]
    pub fn module(&self) -> &'static (dyn core::any::Any + Sync) {
        self.module
    }
}
