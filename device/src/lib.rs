//! Device-side support for kernels written as ordinary Rust functions.
//!
//! A kernel crate depends on this crate on every target. Compiled for
//! `nvptx64-nvidia-cuda` it provides what a kernel body uses (on the host the
//! same items exist so that kernel bodies type-check; those that only mean
//! something inside a running kernel panic there, naming themselves):
//!
//! - [`thread`]: `thread_idx`, `block_idx`, `block_dim`, `grid_dim`, Numba's
//!   `grid(n)` and `gridsize(n)`, and the witnesses [`thread_index`],
//!   [`thread_index_2d`], [`thread_index_3d`] (see [`witness`]), and what a
//!   `#[kernel]` entry point knows of its launch in [`entry`];
//! - [`sync_threads`] and the other barriers in [`sync`], the block votes
//!   ([`sync_threads_count`](vote::sync_threads_count) and its peers) in
//!   [`vote`];
//! - shared memory ([`shared`]): static ([`shared_array!`]) and dynamic
//!   ([`DynamicShared`]) arrays used safely through the phase token [`Block`];
//! - warp shuffles, votes and matching in [`warp`];
//! - reductions and scans over a warp or a block, for any associative
//!   operation, in [`collective`];
//! - atomics on [`DeviceAtomic`] cells;
//! - float math in [`math`], and half precision ([`f16`](struct@f16), [`bf16`], and their
//!   pairs [`f16x2`], [`bf16x2`]) in [`half`];
//! - formatted output, [`println!`] and [`print!`] over `vprintf`, in [`print`](mod@print);
//! - assertions with a message, [`gpu_assert!`], reported to the host, in
//!   [`assert`](mod@assert);
//! - constant memory, [`constant!`], set by the host between launches, in
//!   [`constant`](mod@constant);
//! - ownership beyond one element per thread, in [`ownership`]: per block
//!   and per warp (the [`leader`] witnesses), grid-stride, blocked and
//!   striped runs, one row per block, register tiles, and shared arrays
//!   written by leaders, in runs, in tiles or in the halo form; 16-byte
//!   vector loads and stores in [`vector`]; loop unrolling, [`unroll!`].
//! - Numba's device random numbers (xoroshiro128+ per thread) in [`random`];
//! - the kernels `#[vectorize]` generates call [`vectorize`](mod@vectorize).
//!
//! On every target it provides the types that appear in kernel signatures:
//! [`DisjointSlice`], [`DisjointSlice2d`] and [`DisjointSlice3d`] (outputs
//! each thread may write only at its own index), [`DeviceAtomic`], the phase
//! token [`Block`], [`DynamicShared`], and the [`DeviceCopy`] trait for values
//! that may cross between host and device; and [`Slice2d`], a read-only
//! matrix view of an input slice, bounds checked per axis, whose
//! [`interior`](matrix::Slice2dOf::interior) elements give a [`Neighbourhood`] read
//! with no bounds check. [`matrix`] has them all, each written once for
//! `usize` and `u32` extents and indices ([`DisjointSlice2dU32`],
//! [`Slice2dU32`]: 32-bit, for matrices of at most `u32::MAX` elements).
//!
//! A panic inside a kernel executes `trap`: the launch fails and the host
//! runtime reports the kernel by name.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// The kernels' interface descriptions name their types on both targets, in
// constants (`interface`).
#![feature(const_type_name)]
// 16-byte vector stores are LLVM vector stores (`vector`), which no pass
// splits into scalar ones.
#![feature(portable_simd)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics)
)]
// Deliberate (the PTX intrinsics): not a warning for every kernel crate's
// device build to show.
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![deny(missing_docs)]

// The crate's README (its page on crates.io), whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// `shared_array!` expands to paths under `::gpu_device`, also inside this crate.
extern crate self as gpu_device;

mod atomic;
#[cfg(not(target_arch = "nvptx64"))]
mod c_printf;
pub mod collective;
mod copy;
mod disjoint;
pub mod entry;
pub mod grid;
pub mod half;
mod interface;
mod launch_scope;
pub mod leader;
pub mod lookback;
pub mod matrix;
// Tensor cores' `mma.sync` is sm_80's: not in PTX of older architectures.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma;
// Warpgroup MMA is sm_90a's: not in PTX of other architectures.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;
// The collective check of a call against thread 0's, for `cp_async` and
// `mbarrier`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod block_agreement;
// `cp.async` is sm_80's too.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod cp_async;
// Thread-block clusters are sm_90's.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod cluster;
// `mbarrier`'s transaction counts are sm_90's.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod mbarrier;
// The bulk tensor copies are sm_90's.
pub mod neighbourhood;
pub mod ownership;
pub mod print;
pub mod race_check;
pub mod random;
pub mod thread_owner;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod tma;
pub mod vector;
pub mod vectorize;

pub use atomic::{AtomicElement, DeviceAtomic};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub use cluster::Cluster;
pub use copy::{DeviceCopy, MAX_DEVICE_ALIGN, MAX_PARAMETER_ALIGN};
pub use disjoint::{DisjointSlice, DisjointSlice3d};
pub use gpu_macros::{
    constant, embed_kernels, gpu_assert, kernel, mbarriers, print, println, shared_array, tma_tile,
    vectorize, DeviceCopy,
};
pub use grid::Grid;
pub use half::{bf16, bf16x2, f16, f16x2};
pub use leader::{block_leader, warp_leader, BlockLeader, WarpLeader};
pub use matrix::{
    DisjointSlice2d, DisjointSlice2dU32, MatrixIndex, Shape2d, Shape2dU32, Slice2d, Slice2dU32,
};
pub use neighbourhood::Neighbourhood;
pub use ownership::DisjointMatrix;
pub use shared::{Block, DynamicShared};
pub use witness::{ThreadIndex, ThreadIndex2d, ThreadIndex3d};

pub(crate) mod arch;
pub mod assert;
pub mod constant;
pub mod math;
#[cfg(target_arch = "nvptx64")]
mod panic;
pub mod shared;
pub mod sync;
pub mod thread;
pub mod unroll;
pub mod vote;
pub mod warp;
pub mod witness;

pub use sync::sync_threads;
pub use thread::{
    block_dim, block_idx, block_size, grid_1d, grid_2d, grid_3d, grid_dim, gridsize_1d,
    gridsize_2d, gridsize_3d, thread_idx, thread_index, thread_index_2d, thread_index_3d,
    thread_rank, Dim3,
};

/// Everything a kernel body usually needs, in one import.
pub mod prelude {
    pub use crate::{
        kernel, vectorize, Block, DeviceAtomic, DeviceCopy, DisjointMatrix, DisjointSlice,
        DisjointSlice2d, DisjointSlice2dU32, DisjointSlice3d, DynamicShared, Grid, Neighbourhood,
        Shape2d, Shape2dU32, Slice2d, Slice2dU32, ThreadIndex, ThreadIndex2d, ThreadIndex3d,
    };

    pub use crate::{block_leader, unroll, warp_leader};

    pub use crate::{
        block_dim, block_idx, block_size, grid_1d, grid_2d, grid_3d, grid_dim, gridsize_1d,
        gridsize_2d, gridsize_3d,
        math::FastMath,
        math::Float,
        shared_array, sync_threads, thread_idx, thread_index, thread_index_2d, thread_index_3d,
        thread_rank,
        vote::{sync_threads_and, sync_threads_count, sync_threads_or},
    };

    // A crate's own `KERNEL_MODULE` (`embed_kernels!()`) shadows this glob
    // import; where there is none, a launcher finds this stand-in, whose
    // type the runtime refuses with a message naming the fix (a kernel in
    // `main.rs`), rather than "cannot find value `KERNEL_MODULE`".
    #[doc(hidden)]
    pub use crate::__private::KERNEL_MODULE;
}

/// Items the `#[kernel]` macro expands to; not part of the public API.
///
/// Hidden is not private: safe code can name everything here. So each item
/// that the crate's `unsafe` code relies on is `unsafe` with a contract (the
/// entry point's constructors and assumptions, `static_shared`), and each
/// safe one says at its definition why no misuse breaks an invariant.
#[doc(hidden)]
pub mod __private {
    /// The type of the prelude's stand-in `KERNEL_MODULE`, found where a
    /// crate has no `embed_kernels!()`: no launcher accepts it.
    #[derive(Debug)]
    pub struct NoKernelModule;

    /// The stand-in (see `prelude`).
    pub static KERNEL_MODULE: NoKernelModule = NoKernelModule;

    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    pub use crate::cluster::ClusterState;
    pub use crate::copy::{require_device_align, require_parameter_align};
    pub use crate::disjoint::slice_from_kernel_param;
    pub use crate::entry::{
        assume_block_shape, assume_len_at_least, declared_block_shape, declared_cluster_shape,
        declared_launch_bounds, EntryShape, GENERAL, ONE_DIMENSIONAL, Z_EXTENT_ONE,
    };
    pub use crate::launch_scope::LaunchScope;
    pub use crate::ownership::require_shared_map;
    pub use crate::shared::SharedStorage;

    /// The interface descriptions `#[kernel]` emits and the runtime compares.
    pub mod interface {
        pub use crate::interface::*;
    }

    /// Fails to compile unless `T` may live in shared memory: `shared_array!`
    /// calls it first, so the error names the element type. (It does
    /// nothing at run time: safe to call from anywhere.)
    #[inline(always)]
    pub fn require_shared_element<T: crate::shared::SharedElement>() {}

    /// `shared_array!` on the host: the simulated block's instance of the
    /// array, aligned for `T` and to 16 bytes at least, as on the device
    /// (`SharedStorage`; the simulator's allocations are 16-aligned, so the
    /// array is over-allocated by the alignment and its start aligned up).
    ///
    /// # Safety
    /// Called only by `shared_array!`, with its invocation's own symbol,
    /// element type and length: the macro's handle trusts the array to be
    /// its own. (The simulator also refuses a symbol asked for with more
    /// bytes than it was made with.)
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub unsafe fn static_shared<T>(symbol: &'static str, len: usize) -> *mut T {
        let align = core::mem::align_of::<T>().max(16);
        let bytes = core::mem::size_of::<T>()
            .checked_mul(len)
            .and_then(|b| b.checked_add(align))
            .unwrap_or_else(|| panic!("the shared array `{symbol}` of {len} elements has more bytes than a usize counts"));
        let base = crate::arch::static_shared(symbol, bytes, align);
        base.wrapping_add(base.align_offset(align)).cast()
    }

    /// The CPU simulator's view of device code: what an executor provides.
    /// What device code trusts of it is behind `unsafe`: `run_as` and the
    /// `unsafe trait Block`; the rest is plain data.
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::arch::simulation;
    /// Which lane a shuffle reads from: a plain enum, for the executor.
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::arch::ShuffleMode;
    /// Formats a kernel print's C format string and values as the host's C
    /// library does (the simulator's prints, assertion messages read back
    /// from a GPU). Safe for any bytes: see its module.
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::c_printf::format as format_printf;
}
