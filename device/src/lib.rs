//! Device-side support for kernels written as ordinary Rust functions.
//!
//! A kernel crate depends on this crate on every target. Compiled for
//! `nvptx64-nvidia-cuda` it provides what a kernel body uses (on the host the
//! same items exist so that kernel bodies type-check; those that only mean
//! something inside a running kernel panic there, naming themselves):
//!
//! - [`thread`]: `thread_idx`, `block_idx`, `block_dim`, `grid_dim`, Numba's
//!   `grid(n)` and `gridsize(n)`, and the [`ThreadIndex`] witness;
//! - [`sync_threads`] and the other barriers in [`sync`];
//! - static ([`shared_array!`]) and dynamic ([`shared::dynamic`]) shared memory;
//! - warp shuffles in [`warp`];
//! - atomics on [`DeviceAtomic`] cells;
//! - float math in [`math`].
//!
//! On every target it provides the types that appear in kernel signatures:
//! [`DisjointSlice`] (an output slice each thread may write only at its own
//! index), [`DeviceAtomic`] and the [`DeviceCopy`] trait for values that may
//! cross between host and device.
//!
//! A panic inside a kernel executes `trap`: the launch fails and the host
//! runtime reports the kernel by name.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics)
)]
// `shared_array!` expands to inline PTX in the caller's crate; this lets it do so
// without that crate enabling `asm_experimental_arch` itself.
#![feature(allow_internal_unstable)]
#![allow(internal_features)]
#![deny(missing_docs)]

mod atomic;
mod copy;
mod disjoint;

pub use atomic::{AtomicElement, DeviceAtomic};
pub use copy::DeviceCopy;
pub use disjoint::{DisjointSlice, ThreadIndex};
pub use gpu_macros::{embed_kernels, kernel, shared_array, DeviceCopy};

pub(crate) mod arch;
pub mod math;
#[cfg(target_arch = "nvptx64")]
mod panic;
pub mod shared;
pub mod sync;
pub mod thread;
pub mod warp;

pub use sync::sync_threads;
pub use thread::{
    block_dim, block_idx, grid_1d, grid_2d, grid_3d, grid_dim, gridsize_1d, gridsize_2d,
    gridsize_3d, thread_idx, thread_index, Dim3,
};

/// Everything a kernel body usually needs, in one import.
pub mod prelude {
    pub use crate::{kernel, DeviceAtomic, DeviceCopy, DisjointSlice, ThreadIndex};

    pub use crate::{
        block_dim, block_idx, grid_1d, grid_2d, grid_3d, grid_dim, gridsize_1d, gridsize_2d,
        gridsize_3d, math::FastMath, math::Float, shared_array, sync_threads, thread_idx,
        thread_index,
    };
}

/// Items the `#[kernel]` macro expands to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::disjoint::slice_from_kernel_param;
    pub use crate::thread::thread_index_for_shape;

    /// `shared_array!` on the host: the simulated block's instance of the array.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub fn static_shared<T>(symbol: &'static str, len: usize) -> *mut T {
        crate::arch::static_shared(
            symbol,
            core::mem::size_of::<T>() * len,
            core::mem::align_of::<T>(),
        )
        .cast()
    }

    /// The CPU simulator's view of device code: what an executor provides.
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::arch::simulation;
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::arch::ShuffleMode;
}
