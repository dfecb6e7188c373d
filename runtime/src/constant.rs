//! Constant memory from the host: [`SetConstant`] sets a kernel crate's
//! `gpu_device::constant!` values on a stream (CUDA's
//! `cudaMemcpyToSymbolAsync`: the module's global, found with
//! `cuModuleGetGlobal`, written by a copy in stream order), and the
//! ordering of those sets against the launches that read them.
//!
//! Cross-stream ordering treats each constant as a buffer (see
//! [`crate::memory::tracking`]): a `set` is a write, each launch of one of
//! the module's kernels a read of every constant of the module set so far
//! (the runtime cannot know which constants a kernel's body reads). So a
//! `set` on one stream waits for the launches on other streams that may
//! still read the old value, and a launch waits for the last `set`. The
//! first `set` of a constant on a device waits for the device (launches
//! before it, which read zeros, were not tracked). Sets and launches of the
//! module's kernels on one device are queued one at a time (a lock), so
//! two host threads cannot interleave a set between a launch's ordering and
//! its queueing.

use crate::backend::{driver, DevicePtr, MAX_DEVICES};
use crate::error::{Error, Result};
use crate::memory::tracking::{Access, AccessTracker, Tracked};
use crate::module::EmbeddedModule;
use crate::stream::Stream;
use gpu_device::constant::Constant;
use gpu_device::DeviceCopy;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Sets a `gpu_device::constant!` value from the host.
///
/// ```ignore
/// use gpu_runtime::SetConstant;
/// my_kernels::TAPS.set([0.25, 0.5, 0.25], &stream)?;
/// launch!(my_kernels::filter[blocks, 256, stream](&x, &mut y))?;
/// ```
pub trait SetConstant<T> {
    /// Writes `value` into the constant on `stream`'s device, in stream
    /// order: launches queued after it (on any stream) read `value`, and
    /// launches queued before it (on any stream) read the old value. Returns
    /// at once (the value is copied before it returns). Refused in a graph
    /// capture: set it before.
    fn set(&self, value: T, stream: &Stream) -> Result<()>;
}

impl<T: DeviceCopy> SetConstant<T> for Constant<T> {
    fn set(&self, value: T, stream: &Stream) -> Result<()> {
        stream.refuse_in_capture(
            "SetConstant::set",
            "a constant is set from host memory, which a graph would read again at every launch; set it before the capture",
        )?;
        let symbol = self.symbol();
        let module: &'static dyn std::any::Any = self.module();
        let Some(module) = module.downcast_ref::<EmbeddedModule>() else {
            return Err(Error::InvalidArgument {
                operation: "SetConstant::set",
                reason: format!("the constant `{symbol}` names no kernel module"),
            });
        };
        let device = stream.device_state()?;
        let bytes = std::mem::size_of::<T>();
        let constants = module.constants();
        let mut states = constants.lock(device.ordinal);
        // Launches from now on order themselves after this set (and wait
        // for the lock while it is queued).
        constants.any_set[device.ordinal].store(true, Ordering::Release);
        let state = match states.iter().find(|s| s.symbol == symbol) {
            Some(state) => Arc::clone(state),
            None => {
                // Launches before the first set were not tracked.
                driver()
                    .synchronize_device(device.ordinal)
                    .map_err(|e| device.error(e))?;
                let handle = module.load(device)?;
                let name = CString::new(symbol).expect("a symbol has no NUL");
                let address = driver()
                    .module_global(handle, &name, bytes)
                    .map_err(|e| Error::InvalidArgument {
                        operation: "SetConstant::set",
                        reason: format!("the constant `{symbol}`: {}", e.description),
                    })?
                    .ok_or_else(|| Error::InvalidArgument {
                        operation: "SetConstant::set",
                        reason: format!(
                            "the PTX of crate `{}` has no global `{symbol}` (built without gpu-builder?)",
                            module.crate_name()
                        ),
                    })?;
                let state = Arc::new_cyclic(|owner: &std::sync::Weak<ConstantState>| ConstantState {
                    symbol,
                    address,
                    tracker: AccessTracker::written_on(stream, owner.clone() as std::sync::Weak<dyn Tracked>),
                });
                states.push(Arc::clone(&state));
                state
            }
        };
        state.tracker.access(stream, Access::Write)?;
        // SAFETY: `address` is the module's global of `bytes` bytes on the
        // stream's device (checked by `module_global`), alive while the
        // module is loaded (the process); the source is `value`, a local,
        // pageable, so the copy reads it before returning; the tracking
        // ordered the write after the launches that may read the global.
        unsafe {
            driver().copy_to_device_async(
                state.address,
                (&raw const value).cast(),
                bytes,
                stream.handle(),
            )
        }
        .map_err(|e| stream.error(e))
    }
}

/// A constant set on a device: its global, and its tracked accesses.
pub(crate) struct ConstantState {
    symbol: &'static str,
    address: DevicePtr,
    tracker: AccessTracker,
}

impl Tracked for ConstantState {
    fn tracker(&self) -> &AccessTracker {
        &self.tracker
    }
}

/// A module's constants, per device.
pub(crate) struct ModuleConstants {
    /// Whether a constant of the module was set on the device: a launch
    /// reads this alone when none was.
    any_set: [AtomicBool; MAX_DEVICES],
    states: [Mutex<Vec<Arc<ConstantState>>>; MAX_DEVICES],
}

impl ModuleConstants {
    pub(crate) const fn new() -> Self {
        ModuleConstants {
            any_set: [const { AtomicBool::new(false) }; MAX_DEVICES],
            states: [const { Mutex::new(Vec::new()) }; MAX_DEVICES],
        }
    }

    fn lock(&self, device: usize) -> MutexGuard<'_, Vec<Arc<ConstantState>>> {
        self.states[device]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Orders a launch of one of the module's kernels, about to be queued on
    /// `stream` of `device`, after the sets of the module's constants, and
    /// records it as reading them; the guard keeps sets out until the
    /// launch is queued. Nothing (one load) when no constant was set.
    #[inline]
    pub(crate) fn before_launch(
        &self,
        device: usize,
        stream: &Stream,
    ) -> Result<Option<MutexGuard<'_, Vec<Arc<ConstantState>>>>> {
        if !self.any_set[device].load(Ordering::Acquire) {
            return Ok(None);
        }
        let states = self.lock(device);
        for state in states.iter() {
            state.tracker.access(stream, Access::Read)?;
        }
        Ok(Some(states))
    }
}
