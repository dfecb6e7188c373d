//! Devices: lazy driver start-up, each device's primary context, its limits,
//! and device-wide synchronisation.
//!
//! Nothing touches the driver until the first call that needs it. Each device
//! uses its primary context (the one the CUDA runtime, CuPy and Numba share),
//! made current on each host thread the first time that thread uses the device.

use crate::driver::{self, CUcontext, CUdevice, CUdevice_attribute as Attr};
use crate::error::{Error, Result};
use crate::launch::KernelFunction;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The most devices one process addresses; per-kernel caches have this many slots.
pub const MAX_DEVICES: usize = 16;

/// A CUDA device, by ordinal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: usize,
}

/// The limits a launch is checked against, read once per device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Threads in one block, all dimensions together.
    pub max_threads_per_block: u32,
    /// Threads along each block dimension.
    pub max_block_dim: [u32; 3],
    /// Blocks along each grid dimension.
    pub max_grid_dim: [u32; 3],
    /// Shared memory a block gets without opting in (bytes).
    pub max_shared_per_block: u32,
    /// Shared memory a block can opt in to (bytes).
    pub max_shared_per_block_optin: u32,
    /// Streaming multiprocessors.
    pub multiprocessor_count: u32,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

pub(crate) struct DeviceState {
    pub(crate) ordinal: usize,
    context: CUcontext,
    pub(crate) name: String,
    pub(crate) limits: DeviceLimits,
    /// The kernel most recently launched on this device, for error reports.
    pub(crate) last_kernel: AtomicPtr<KernelFunction>,
}

// SAFETY: the context handle is only passed to the driver, which is thread-safe;
// the other fields are plain data or atomics.
unsafe impl Send for DeviceState {}
// SAFETY: as above.
unsafe impl Sync for DeviceState {}

struct Devices {
    slots: Vec<OnceLock<Result<DeviceState>>>,
}

static DEVICES: OnceLock<Result<Devices>> = OnceLock::new();

fn devices() -> Result<&'static Devices> {
    DEVICES
        .get_or_init(|| {
            let no_device = |e: driver::DriverError| Error::NoDevice {
                reason: e.to_string(),
            };
            driver::init().map_err(no_device)?;
            let count = driver::device_count().map_err(no_device)?;
            if count <= 0 {
                return Err(Error::NoDevice {
                    reason: "the driver reports 0 devices".into(),
                });
            }
            let count = (count as usize).min(MAX_DEVICES);
            Ok(Devices {
                slots: (0..count).map(|_| OnceLock::new()).collect(),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

thread_local! {
    /// The context this thread last made current.
    static BOUND: Cell<CUcontext> = const { Cell::new(std::ptr::null_mut()) };
}

impl DeviceState {
    fn open(ordinal: usize) -> Result<DeviceState> {
        let handle: CUdevice = driver::device(ordinal as i32)?;
        let attr = |a: Attr| driver::device_attribute(handle, a).map(|v| v.max(0) as u32);
        let limits = DeviceLimits {
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_per_block_optin: attr(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            multiprocessor_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            compute_capability: (
                attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
        };
        Ok(DeviceState {
            ordinal,
            context: driver::retain_primary_context(handle)?,
            name: driver::device_name(handle)?,
            limits,
            last_kernel: AtomicPtr::new(std::ptr::null_mut()),
        })
    }

    /// Makes this device's primary context current on the calling thread.
    #[inline]
    pub(crate) fn bind(&self) -> Result<()> {
        BOUND.with(|bound| {
            if bound.get() != self.context {
                driver::set_current_context(self.context)?;
                bound.set(self.context);
            }
            Ok(())
        })
    }

    /// The name of the kernel last launched on this device.
    pub(crate) fn last_kernel_name(&self) -> &'static str {
        KernelFunction::name_of(self.last_kernel.load(Ordering::Relaxed))
    }

    /// Maps a failed status of a device-wide operation to an error.
    pub(crate) fn error(&self, call: &'static str, code: driver::Status) -> Error {
        let err = driver::check(call, code).expect_err("called with a failure");
        if driver::is_kernel_fault(code) {
            Error::KernelFailed {
                kernel: self.last_kernel_name(),
                context: format!("{call} on device {}", self.ordinal),
                driver: err,
            }
        } else {
            Error::Driver(err)
        }
    }
}

/// The state of device `ordinal`, opened on first use.
fn opened(ordinal: usize) -> Result<&'static DeviceState> {
    let devices = devices()?;
    let slot = devices.slots.get(ordinal).ok_or(Error::InvalidDevice {
        ordinal,
        count: devices.slots.len(),
    })?;
    slot.get_or_init(|| DeviceState::open(ordinal))
        .as_ref()
        .map_err(Clone::clone)
}

thread_local! {
    /// Whether this thread is running a stream callback, where CUDA calls are forbidden.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is inside a stream callback.
pub(crate) fn in_callback() -> bool {
    IN_CALLBACK.with(Cell::get)
}

/// Runs `f` marked as a stream callback: runtime calls inside it fail with
/// `Error::CalledFromCallback` instead of calling CUDA.
pub(crate) fn while_in_callback<R>(f: impl FnOnce() -> R) -> R {
    IN_CALLBACK.with(|c| c.set(true));
    let result = f();
    IN_CALLBACK.with(|c| c.set(false));
    result
}

/// The state of device `ordinal`, with its context current on this thread.
pub(crate) fn state(ordinal: usize) -> Result<&'static DeviceState> {
    if in_callback() {
        return Err(Error::CalledFromCallback);
    }
    let state = opened(ordinal)?;
    state.bind()?;
    Ok(state)
}

thread_local! {
    static CURRENT_DEVICE: Cell<usize> = const { Cell::new(0) };
}

/// The calling thread's current device ordinal, without touching the driver.
pub(crate) fn current_ordinal() -> usize {
    CURRENT_DEVICE.with(Cell::get)
}

impl Device {
    /// The number of CUDA devices (at most [`MAX_DEVICES`] are used).
    pub fn count() -> Result<usize> {
        Ok(devices()?.slots.len())
    }

    /// Device `ordinal`; an error names the ordinal and the device count.
    pub fn get(ordinal: usize) -> Result<Device> {
        state(ordinal)?;
        Ok(Device { ordinal })
    }

    /// The calling thread's current device (device 0 unless changed with
    /// [`Device::make_current`]).
    pub fn current() -> Result<Device> {
        Device::get(CURRENT_DEVICE.with(Cell::get))
    }

    /// Makes this device current for the calling thread: new streams and
    /// buffers made without a device go here.
    pub fn make_current(self) {
        CURRENT_DEVICE.with(|c| c.set(self.ordinal));
    }

    /// The device's ordinal.
    pub fn ordinal(self) -> usize {
        self.ordinal
    }

    /// The device's state, without binding its context.
    fn opened(self) -> &'static DeviceState {
        // A `Device` is only made after `opened` succeeded for its ordinal, and
        // the result is cached.
        opened(self.ordinal).expect("a Device is only made for an opened device")
    }

    /// The device's state, with its context current on this thread.
    pub(crate) fn state(self) -> Result<&'static DeviceState> {
        state(self.ordinal)
    }

    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(self) -> &'static str {
        &self.opened().name
    }

    /// The limits launches on this device are checked against.
    pub fn limits(self) -> &'static DeviceLimits {
        &self.opened().limits
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(self) -> Result<(usize, usize)> {
        self.state()?;
        Ok(driver::mem_info()?)
    }

    /// Waits for all work on the device, on every stream, to finish
    /// (Numba's `cuda.synchronize()`). A kernel that failed is named in the error.
    pub fn synchronize(self) -> Result<()> {
        let state = self.state()?;
        match driver::context_synchronize() {
            driver::SUCCESS => Ok(()),
            code => Err(state.error("cuCtxSynchronize", code)),
        }
    }

    /// Runs `f` with this device current on the calling thread, then restores
    /// the previous one (CuPy's `with cp.cuda.Device(n):`).
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        let previous = CURRENT_DEVICE.with(|c| c.replace(self.ordinal));
        let result = f();
        CURRENT_DEVICE.with(|c| c.set(previous));
        result
    }
}

/// Waits for all work on the current device (Numba's `cuda.synchronize()`).
pub fn synchronize() -> Result<()> {
    Device::current()?.synchronize()
}
