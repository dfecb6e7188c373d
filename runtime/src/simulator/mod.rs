//! The CPU simulator: the driver seam's operations on host memory and threads.
//!
//! Handles are pointers to simulator objects cast to the driver's handle
//! types, so the rest of the runtime is the same for both backends.
//!
//! - memory ([`memory`]): device allocations are aligned host allocations,
//!   counted against a fixed capacity;
//! - streams ([`stream`]): each stream is a worker thread running its queue of
//!   operations in order, asynchronously with the host;
//! - events ([`event`]): completion and real timestamps, recorded in stream order;
//! - kernels ([`executor`]): every thread of a block is a coroutine, so
//!   barriers and warp shuffles are real; blocks run in parallel on the cores;
//! - robustness: a [`watchdog`] fails blocks that make no progress, and
//!   [`signals`] stops threads that overflow their stack or loop without
//!   device calls; both read their [`settings`] from the environment.

pub(crate) mod event;
pub(crate) mod executor;
pub(crate) mod memory;
pub(crate) mod settings;
pub(crate) mod signals;
pub(crate) mod stream;
pub(crate) mod watchdog;

use crate::driver::Status;
use std::cell::RefCell;

/// The simulated device's name.
pub(crate) const DEVICE_NAME: &str = "CPU simulator";

thread_local! {
    /// The message of the last simulated kernel failure reported on this thread.
    static LAST_FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Reports a failure message with `code`, for `describe` to pick up.
pub(crate) fn report(message: String, code: Status) -> Status {
    LAST_FAILURE.with(|f| *f.borrow_mut() = Some(message));
    code
}

/// The simulator's description of `code`, when it reported one.
pub(crate) fn describe(code: Status) -> Option<(String, String)> {
    if code != crate::driver::ERROR_LAUNCH_FAILED {
        return None;
    }
    LAST_FAILURE
        .with(|f| f.borrow_mut().take())
        .map(|message| ("CUDA_ERROR_LAUNCH_FAILED (simulated)".to_string(), message))
}

/// Device attributes of the simulated device (those the runtime reads).
pub(crate) fn device_attribute(attribute: crate::driver::CUdevice_attribute) -> i32 {
    use crate::driver::CUdevice_attribute as A;
    match attribute {
        A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X | A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y => 1024,
        A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z => 64,
        A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X => i32::MAX,
        A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y | A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z => 65535,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK => 48 * 1024,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => 227 * 1024,
        A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT => executor::parallelism() as i32,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => 9,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR => 0,
        _ => 0,
    }
}

/// Waits for every simulated stream (`cuCtxSynchronize`).
pub(crate) fn synchronize_all() -> Status {
    stream::synchronize_all()
}
