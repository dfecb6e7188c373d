//! Host runtime for GPU kernels written as Rust functions.
//!
//! - [`Device`]: lazy driver start-up, primary contexts, limits, [`synchronize`];
//! - [`Stream`] and [`Event`]: ordered queues of work and markers in them;
//! - [`DeviceBuffer`]: device arrays, copies to and from the host, views;
//! - [`launch!`]: typed kernel launches, as Numba's `kernel[grid, block, stream](args)`.
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
//! All driver calls go through one internal module (`driver`), the seam where
//! other backends attach.

#![deny(missing_docs)]

mod backend;
mod current;
mod device;
mod driver;
mod error;
mod event;
mod launch;
mod memory;
mod module;
mod pinned;
mod pipeline;
mod simulator;
mod stream;
pub mod timeline;

pub use backend::{backend, Backend, BACKEND_ENV};
pub use current::{current_stream, StreamScope, PER_THREAD_DEFAULT_STREAM_ENV};
pub use device::{synchronize, Device, DeviceLimits, MAX_DEVICES};
pub use driver::DriverError;
pub use error::{Error, Result};
pub use event::{get_elapsed_time, Event, EventOptions};
pub use gpu_device::DeviceCopy;
pub use launch::{DimValue, Dims, IntoDims, KernelFunction, LaunchConfig, StreamRef};
pub use memory::{DeviceBuffer, DeviceInput, DeviceOutput, DeviceView, DeviceViewMut};
pub use module::EmbeddedModule;
pub use pinned::{
    HostOnly, Mapped, MappedBuffer, MappedView, MappedViewMut, Mapping, PinnedBuffer,
};
pub use pipeline::{pipeline, Pipeline};
pub use simulator::settings::{SIM_STACK_BYTES_ENV, SIM_TIMEOUT_ENV};
pub use stream::{Stream, StreamOptions};

/// Launches a `#[kernel]` function, Numba style:
///
/// - `launch!(k[grid, block](args))` on the current stream;
/// - `launch!(k[grid, block, stream](args))`;
/// - `launch!(k[grid, block, stream, shared_bytes](args))` with dynamic shared memory.
///
/// `grid` and `block` are a number or a tuple of two or three. `k` is the
/// kernel's path (`gpu_kernels::add_kernel`). Arguments are checked against
/// the kernel's parameters at compile time; the launch configuration at run
/// time. Evaluates to `Result<()>`.
#[macro_export]
macro_rules! launch {
    ($($kernel:ident)::+ [$grid:expr, $block:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::launch($crate::LaunchConfig::new($grid, $block), $($arg),*)
    };
    ($($kernel:ident)::+ [$grid:expr, $block:expr, $stream:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::launch($crate::LaunchConfig::new($grid, $block).stream(&$stream), $($arg),*)
    };
    ($($kernel:ident)::+ [$grid:expr, $block:expr, $stream:expr, $shared:expr $(,)?] ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::launch(
            $crate::LaunchConfig::new($grid, $block).stream(&$stream).shared_bytes($shared),
            $($arg),*
        )
    };
}

/// Items the `#[kernel]` macro expands to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::launch::{HostEntry, KernelFunction, SliceArg};

    /// Fails to compile unless `T` is `DeviceCopy`; the macro spans it on the parameter's type.
    #[inline(always)]
    pub fn assert_device_copy<T: gpu_device::DeviceCopy>() {}
}
