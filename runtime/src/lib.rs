//! Host runtime for GPU kernels written as Rust functions.
//!
//! - [`Device`]: lazy driver start-up, primary contexts, limits, [`synchronize`];
//! - [`Stream`] and [`Event`]: ordered queues of work and markers in them;
//! - [`DeviceBuffer`]: device arrays, copies to and from the host, views;
//! - [`launch!`]: typed kernel launches, as Numba's `kernel[grid, block, stream](args)`;
//! - several devices: [`Device::enter`] and [`Device::scope`], peer access
//!   ([`Device::enable_peer_access`]), copies between devices
//!   ([`DeviceBuffer::copy_from_device`]), and collectives through NCCL
//!   ([`Communicators`] in one process, [`Communicator`] per process);
//! - tools and other libraries: [`nvtx`] ranges and [`profiler`] start/stop
//!   for Nsight; device memory lent to or from other libraries without a
//!   copy ([`DeviceBuffer::from_raw_parts`], [`DeviceBuffer::as_raw_on`],
//!   [`dlpack`]);
//! - a layer above them, built on this API only: the Day 7 [`Pipeline`] and
//!   the [`Timeline`] of when stream work ran.
//!
//! ```no_run
//! use gpu_runtime::{launch, DeviceBuffer, Stream};
//!
//! let stream = Stream::new()?;
//! let a = DeviceBuffer::to_device_sync(&[1.0f32; 1000], &stream)?;
//! let b = DeviceBuffer::to_device_sync(&[2.0f32; 1000], &stream)?;
//! let mut c = DeviceBuffer::<f32>::device_array(1000)?;
//! launch!(gpu_kernels::add_kernel[4, 256, stream](&a, &b, &mut c))?;
//! assert!(c.copy_to_host_sync(&stream)?.iter().all(|&x| x == 3.0));
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! Everything below the user-facing types goes through one seam, the
//! `backend` module's `Driver` trait, which the CUDA driver and the CPU
//! simulator implement.

#![deny(missing_docs)]

// The crate's README (its page on crates.io), whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// The workflow layer names this crate `gpu_runtime`, as a user's crate would
// (see `workflow`).
extern crate self as gpu_runtime;

mod abi;
mod architecture;
mod assertion;
mod backend;
mod callback;
mod capture;
mod collective;
mod completion;
mod constant;
mod crate_identity;
mod deferred;
mod device;
mod diagnostics;
pub mod dlpack;
mod error;
mod graph;
mod last_kernel;
mod launch;
pub mod memory;
mod memory_pool;
mod module;
pub mod nvtx;
mod panic_message;
mod peer;
mod pinned;
pub mod profiler;
mod scope_stack;
mod stream;
mod workflow;

pub use backend::cuda::NCCL_LIBRARY_ENV;
pub use backend::simulator::collective::rendezvous::SIM_RENDEZVOUS_DIR_ENV;
pub use backend::simulator::managed::SIM_MANAGED_MEMORY_ENV;
pub use backend::simulator::peer::SIM_PEER_ACCESS_ENV;
pub use backend::simulator::race_check::set_race_check;
pub use backend::simulator::settings::{
    SIM_COMPUTE_CAPABILITY_ENV, SIM_RACECHECK_ENV, SIM_STACK_BYTES_ENV, SIM_THREADS_ENV,
    SIM_TIMEOUT_ENV,
};
pub use backend::simulator::DEVICES_ENV as SIMULATED_DEVICES_ENV;
pub use backend::GraphNodeKind;
pub use backend::{
    backend, Advice, Backend, DeviceLimits, DriverError, Location, ReduceOp, BACKEND_ENV,
    MAX_DEVICES, MIN_DRIVER_VERSION,
};
pub use bytemuck;
pub use collective::{
    CollectiveElement, Communicator, Communicators, UniqueId, NVLS_ENV, UNIQUE_ID_ENV,
};
pub use completion::Done;
pub use constant::SetConstant;
pub use crate_identity::CrateIdentity;
pub use device::{require_backend, synchronize, Device, DeviceScope};
pub use error::{Error, Result};
pub use gpu_device::DeviceCopy;
pub use graph::{Capture, Graph, GraphExec, KernelNode};
pub use launch::{
    Const, DimValue, Dims, IntoDims, KernelArgs, KernelFunction, LaunchConfig, StreamRef,
};
pub use memory::{
    DeviceBuffer, DeviceInput, DeviceOutput, DeviceView, DeviceView2dMut, DeviceView3dMut,
    DeviceViewMut, Lender, ManagedBuffer, PitchedBuffer, Region2d, Region2dMut, Swizzle,
    TensorElement, TensorMap, TensorMapLayout, TensorMapOut,
};
pub use memory_pool::{MemoryPool, PoolStats};
pub use module::EmbeddedModule;
pub use pinned::{
    CopiesFromDevice, CopiesToDevice, HostOnly, Mapped, MappedBuffer, MappedView, MappedViewMut,
    Mapping, PinnedBuffer,
};
pub use stream::{
    current_stream, get_elapsed_time, Event, EventOptions, Stream, StreamKind, StreamOptions,
    StreamScope, PER_THREAD_DEFAULT_STREAM_ENV,
};
// The layer above the core: workflows built on the API above.
pub use workflow::{
    pipeline, spans_to_chrome_trace, spans_to_svg, Pipeline, Span, SpanKind, Timeline,
};

/// Launches a `#[kernel]` function, Numba style:
///
/// - `launch!(k[grid, block](args))` on the current stream;
/// - `launch!(k[grid, block, stream](args))`;
/// - `launch!(k[grid, block, stream, shared_bytes](args))` with dynamic shared memory.
///
/// `grid` and `block` are a number or a tuple of two or three. `k` is the
/// kernel's path (`gpu_kernels::add_kernel`); a const-generic kernel names
/// its instance, `launch!(k::<16>[grid, block](args))`. Arguments are checked
/// against the kernel's parameters at compile time; the launch configuration
/// at run time (and, before an instance's first launch on a device, that the
/// host and the device compiled the kernel alike). Evaluates to
/// `Result<()>`: it is `k::Launcher::new(config).launch(args)`.
#[macro_export]
macro_rules! launch {
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new($crate::LaunchConfig::new($grid, $block)).launch $(::<$($generic),+>)? ($($arg),*)
    };
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr, $stream:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new($crate::LaunchConfig::new($grid, $block).stream(&$stream)).launch $(::<$($generic),+>)? ($($arg),*)
    };
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr, $stream:expr, $shared:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new(
            $crate::LaunchConfig::new($grid, $block).stream(&$stream).shared_bytes($shared),
        ).launch $(::<$($generic),+>)? ($($arg),*)
    };
}

/// Builds a kernel's arguments without launching, for
/// [`GraphExec::set_kernel_args`]: the same forms as [`launch!`], checked
/// the same way (a wrong argument type is a compile error). Evaluates to
/// `Result<KernelArgs>`.
///
/// ```no_run
/// use gpu_runtime::{kernel_args, launch, DeviceBuffer, Stream};
/// let stream = Stream::new()?;
/// let a = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream)?;
/// let b = DeviceBuffer::to_device_sync(&[2.0f32; 256], &stream)?;
/// let mut c = DeviceBuffer::<f32>::device_array(256)?;
/// let graph = stream.capture(|s| launch!(gpu_kernels::add_kernel[1, 256, s](&a, &a, &mut c)))?;
/// let mut exec = graph.instantiate()?;
/// let node = graph.kernel_nodes()[0].clone();
/// exec.set_kernel_args(&node, kernel_args!(gpu_kernels::add_kernel[1, 256, stream](&a, &b, &mut c))?)?;
/// exec.launch(&stream)?; // c = a + b
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[macro_export]
macro_rules! kernel_args {
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new($crate::LaunchConfig::new($grid, $block)).arguments $(::<$($generic),+>)? ($($arg),*)
    };
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr, $stream:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new($crate::LaunchConfig::new($grid, $block).stream(&$stream)).arguments $(::<$($generic),+>)? ($($arg),*)
    };
    ($($kernel:ident)::+ $(::<$($generic:tt),+>)? [$grid:expr, $block:expr, $stream:expr, $shared:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::Launcher::new(
            $crate::LaunchConfig::new($grid, $block).stream(&$stream).shared_bytes($shared),
        ).arguments $(::<$($generic),+>)? ($($arg),*)
    };
}

/// Items the `#[kernel]` macro expands to; not part of the public API.
/// Each constructor that the runtime's `unsafe` code relies on is `unsafe`
/// itself (`KernelFunction::new`, `HostEntry::new`, `LaunchArgs::for_launch`).
#[doc(hidden)]
pub mod __private {
    pub use crate::abi::HostEntry;
    pub use crate::deferred::completed as deferred_releases_completed;
    pub use crate::launch::{
        check_len_at_least, check_reduce_output, elementwise_len, elementwise_shape, reduce_shape,
        KernelFunction, KernelModule, LaunchArgs,
    };
}
