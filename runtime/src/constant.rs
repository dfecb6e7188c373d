//! Constant memory from the host: [`SetConstant`] sets a kernel crate's
//! `gpu_device::constant!` values on a stream (CUDA's
//! `cudaMemcpyToSymbolAsync`: the module's global, found with
//! `cuModuleGetGlobal`, written by a copy in stream order). The module keeps
//! the constants set so far, and a launch's side of the ordering
//! (`module::ModuleConstants`).
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

use crate::backend::driver;
use crate::capture::registry;
use crate::error::{Error, Result};
use crate::memory::tracking::{Access, AccessTracker, Tracked};
use crate::module::{ConstantState, EmbeddedModule};
use crate::stream::Stream;
use gpu_device::constant::Constant;
use gpu_device::DeviceCopy;
use std::ffi::CString;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
        let device = stream.device_state("SetConstant::set")?;
        let bytes = std::mem::size_of::<T>();
        let constants = module.constants();
        let mut states = constants.lock(device.ordinal);
        // Launches from now on order themselves after this set (and wait
        // for the lock while it is queued).
        constants.any_set[device.ordinal].store(true, Ordering::Release);
        let state = match states.iter().find(|s| s.symbol == symbol) {
            Some(state) => Arc::clone(state),
            None => {
                // Launches before the first set were not tracked: a
                // device-wide wait, which no capture on the device allows.
                registry::refuse_device_wide(
                    device.ordinal,
                    "SetConstant::set (a constant's first set on a device)",
                )?;
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
                let state =
                    Arc::new_cyclic(|owner: &std::sync::Weak<ConstantState>| ConstantState {
                        symbol,
                        address,
                        tracker: AccessTracker::written_on(
                            stream,
                            owner.clone() as std::sync::Weak<dyn Tracked>,
                        ),
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
