//! Devices: lazy start-up, each device's limits, the calling thread's current
//! device, and device-wide synchronisation.
//!
//! Nothing touches the driver until the first call that needs it. Each device
//! is opened once per process ([`state`]); every driver call names the device
//! it acts on (a stream, event or module handle carries its device), so no
//! call depends on a device "bound" to the calling thread by an earlier one.

use crate::backend::{backend, choice_reason, driver, Backend, DeviceLimits, MAX_DEVICES};
use crate::callback::in_callback;
use crate::capture::registry;
use crate::error::{Error, Result};
use crate::last_kernel::LastKernel;
use crate::scope_stack::{ScopeId, ScopeStack};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// A device, by ordinal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: usize,
}

pub(crate) struct DeviceState {
    pub(crate) ordinal: usize,
    pub(crate) name: String,
    pub(crate) limits: DeviceLimits,
    /// The device's memory in bytes.
    pub(crate) total_memory: usize,
    /// The kernel most recently launched on this device, for error reports.
    pub(crate) last_kernel: LastKernel,
    /// The kernel the device's first kernel fault was blamed on: the fault
    /// ends the context, and every later error names the same kernel.
    fault_blame: OnceLock<&'static str>,
}

struct Devices {
    slots: Vec<OnceLock<Result<DeviceState>>>,
}

static DEVICES: OnceLock<Result<Devices>> = OnceLock::new();

fn devices() -> Result<&'static Devices> {
    DEVICES
        .get_or_init(|| {
            let count = driver().device_count().map_err(|e| Error::NoDevice {
                reason: e.to_string(),
            })?;
            if count == 0 {
                return Err(Error::NoDevice {
                    reason: "the driver reports 0 devices".into(),
                });
            }
            Ok(Devices {
                slots: (0..count.min(MAX_DEVICES))
                    .map(|_| OnceLock::new())
                    .collect(),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

impl DeviceState {
    fn open(ordinal: usize) -> Result<DeviceState> {
        let properties = driver().open(ordinal)?;
        let (_, total_memory) = driver().memory_info(ordinal)?;
        Ok(DeviceState {
            ordinal,
            name: properties.name,
            limits: properties.limits,
            total_memory,
            last_kernel: LastKernel::new(),
            fault_blame: OnceLock::new(),
        })
    }

    /// Maps a failed device-wide call to an error naming the device's last kernel.
    pub(crate) fn error(&self, driver: crate::backend::DriverError) -> Error {
        let kernel = self.blame(&driver, self.last_kernel.get());
        Error::from_driver(driver, kernel, Some(self.ordinal), || {
            format!("device {}", self.ordinal)
        })
    }

    /// The kernel an error names: `last`, the kernel launched last where the
    /// error surfaced, except after a kernel fault, which every later error
    /// blames on the kernel the first report named (a fault is sticky: the
    /// device refuses every later call with it).
    pub(crate) fn blame(
        &self,
        driver: &crate::backend::DriverError,
        last: Option<&'static str>,
    ) -> Option<&'static str> {
        if !driver.is_kernel_fault() {
            return last;
        }
        match (self.fault_blame.get(), last) {
            (Some(first), _) => Some(*first),
            (None, Some(last)) => Some(*self.fault_blame.get_or_init(|| last)),
            (None, None) => None,
        }
    }
}

/// The state of device `ordinal`, opened on first use.
fn opened(ordinal: usize) -> Result<&'static DeviceState> {
    let devices = devices()?;
    let Some(slot) = devices.slots.get(ordinal) else {
        return Err(Error::InvalidDevice {
            ordinal,
            count: devices.slots.len(),
        });
    };
    slot.get_or_init(|| DeviceState::open(ordinal))
        .as_ref()
        .map_err(Clone::clone)
}

/// The state of device `ordinal`, opened, before a driver call on it. Fails
/// inside stream callbacks, where CUDA calls are forbidden.
pub(crate) fn state(ordinal: usize) -> Result<&'static DeviceState> {
    if in_callback() {
        return Err(Error::CalledFromCallback);
    }
    opened(ordinal)
}

thread_local! {
    /// The calling thread's current device: device 0 unless changed.
    static CURRENT_DEVICE: RefCell<ScopeStack<usize>> = const { RefCell::new(ScopeStack::new(0)) };
}

/// The calling thread's current device ordinal, without touching the driver.
pub(crate) fn current_ordinal() -> usize {
    CURRENT_DEVICE.with(|c| *c.borrow().current())
}

impl Device {
    /// The number of devices (at most [`MAX_DEVICES`] are used).
    pub fn count() -> Result<usize> {
        Ok(devices()?.slots.len())
    }

    /// Device `ordinal`; an error names the ordinal and the device count.
    pub fn get(ordinal: usize) -> Result<Device> {
        opened(ordinal)?;
        Ok(Device { ordinal })
    }

    /// Every device, in ordinal order.
    pub fn all() -> Result<Vec<Device>> {
        (0..Device::count()?).map(Device::get).collect()
    }

    /// The calling thread's current device (device 0 unless changed with
    /// [`Device::make_current`], [`Device::enter`] or [`Device::scope`]).
    pub fn current() -> Result<Device> {
        Device::get(current_ordinal())
    }

    /// Makes this device current for the calling thread until changed: new
    /// streams, events and buffers made without a device go here
    /// (CuPy's `cp.cuda.Device(n).use()`).
    pub fn make_current(self) {
        CURRENT_DEVICE.with(|c| c.borrow_mut().set(self.ordinal));
    }

    /// Makes this device current until the returned guard is dropped, which
    /// restores the device that was current before (CuPy's
    /// `with cp.cuda.Device(n):`), also when unwinding from a panic. Guards
    /// dropped out of order restore what the guards still alive set.
    pub fn enter(self) -> DeviceScope {
        DeviceScope {
            id: CURRENT_DEVICE.with(|c| c.borrow_mut().push(self.ordinal)),
            _not_send: PhantomData,
        }
    }

    /// Runs `f` with this device current on the calling thread, then restores
    /// the previous one, also when `f` panics.
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        let _scope = self.enter();
        f()
    }

    /// The device's ordinal.
    pub fn ordinal(self) -> usize {
        self.ordinal
    }

    /// The device's state, without the callback check.
    fn opened(self) -> &'static DeviceState {
        // A `Device` is only made after `opened` succeeded for its ordinal, and
        // the result is cached.
        opened(self.ordinal).expect("a Device is only made for an opened device")
    }

    /// The device's state, before a driver call on it.
    pub(crate) fn state(self) -> Result<&'static DeviceState> {
        state(self.ordinal)
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(self) -> &'static str {
        &self.opened().name
    }

    /// The limits launches on this device are checked against.
    pub fn limits(self) -> &'static DeviceLimits {
        &self.opened().limits
    }

    /// Free and total device memory in bytes. Memory that freed buffers
    /// returned to the device's pool counts as used until
    /// [`release_pool_memory`](Device::release_pool_memory).
    pub fn memory_info(self) -> Result<(usize, usize)> {
        let state = self.state()?;
        driver()
            .memory_info(self.ordinal)
            .map_err(|e| state.error(e))
    }

    /// Returns the memory that dropped buffers left in the device's memory
    /// pool to the system, for other libraries' allocations. (Buffers are
    /// freed in stream order into the pool, which keeps the memory for the
    /// next allocation rather than give it back, as CuPy's pool does.)
    pub fn release_pool_memory(self) -> Result<()> {
        let state = self.state()?;
        registry::refuse_device_wide(self.ordinal, "Device::release_pool_memory")?;
        driver()
            .synchronize_device(self.ordinal)
            .map_err(|e| state.error(e))?;
        driver()
            .trim_memory_pool(self.ordinal, 0)
            .map_err(|e| state.error(e))
    }

    /// Waits for all work on the device, on every stream, to finish
    /// (Numba's `cuda.synchronize()`). A kernel that failed is named in the error.
    pub fn synchronize(self) -> Result<()> {
        let state = self.state()?;
        registry::refuse_device_wide(self.ordinal, "Device::synchronize")?;
        driver()
            .synchronize_device(self.ordinal)
            .map_err(|e| state.error(e))
    }
}

/// The guard of [`Device::enter`]: while it lives, its device is current on
/// this thread; dropping it restores the previous current device.
#[must_use = "the device is current only while the guard lives"]
pub struct DeviceScope {
    id: ScopeId,
    /// The current device is per thread: the guard stays on its thread.
    _not_send: PhantomData<*const ()>,
}

impl Drop for DeviceScope {
    fn drop(&mut self) {
        CURRENT_DEVICE.with(|c| c.borrow_mut().remove(self.id));
    }
}

/// Refuses to go on elsewhere than on `wanted`: a program that must run on
/// a GPU calls `require_backend(Backend::Cuda)?` first, and gets an error
/// naming why there is none rather than running on the CPU simulator (as
/// `GPU_BACKEND=cuda` makes any program do).
///
/// On [`Backend::Cuda`] the driver must also start (a supported version,
/// see [`MIN_DRIVER_VERSION`](crate::MIN_DRIVER_VERSION)) and see a device:
/// otherwise [`Error::NoDevice`] with the driver's reason.
///
/// ```
/// use gpu_runtime::{backend, require_backend, Backend};
///
/// match require_backend(Backend::Cuda) {
///     Ok(()) => assert_eq!(backend(), Backend::Cuda),
///     // e.g. "this program needs the CUDA driver but runs on the CPU simulator (no CUDA device: ...)"
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn require_backend(wanted: Backend) -> Result<()> {
    let running = backend();
    if running != wanted {
        return Err(Error::WrongBackend {
            wanted,
            running,
            reason: choice_reason().to_string(),
        });
    }
    if wanted == Backend::Cuda {
        match driver().device_count() {
            Ok(n) if n > 0 => {}
            Ok(_) => {
                return Err(Error::NoDevice {
                    reason: "the CUDA driver reports no device".into(),
                })
            }
            Err(e) => {
                return Err(Error::NoDevice {
                    reason: e.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// Waits for all work on the current device (Numba's `cuda.synchronize()`).
pub fn synchronize() -> Result<()> {
    Device::current()?.synchronize()
}
