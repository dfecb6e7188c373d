//! A loaded module's globals on the simulator (CUDA's `cuModuleGetGlobal`):
//! the constant arrays and the assertion record's address that device code
//! reads. Each module load is a module of its own, and each of its globals
//! is simulated device memory of the module's device, made zeroed on first
//! use, by the runtime (`Driver::module_global`) or by device code (the
//! executor's `module_global`), whichever comes first, and kept while the
//! process runs (as a loaded module's globals are).

use super::super::{status, DevicePtr, DriverError};
use super::memory;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The globals of one loaded module.
pub(crate) struct ModuleGlobals {
    device: usize,
    devices: usize,
    globals: Mutex<HashMap<String, (DevicePtr, usize)>>,
}

/// Every module loaded so far; a module handle's `raw` is its index plus 1.
static MODULES: Mutex<Vec<Arc<ModuleGlobals>>> = Mutex::new(Vec::new());

/// A new module on `device` (of `devices` simulated devices): its handle's `raw`.
pub(crate) fn load(device: usize, devices: usize) -> usize {
    let mut modules = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    modules.push(Arc::new(ModuleGlobals {
        device,
        devices,
        globals: Mutex::new(HashMap::new()),
    }));
    modules.len()
}

/// The module whose handle's `raw` is `raw`; `None` for 0 (the simulator's
/// own launches, which belong to no module).
pub(crate) fn of(raw: usize) -> Option<Arc<ModuleGlobals>> {
    let modules = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    raw.checked_sub(1).and_then(|i| modules.get(i).cloned())
}

impl ModuleGlobals {
    /// The address of global `name` of `bytes` bytes, made zeroed on first
    /// use; an error when it was made with another size.
    pub(crate) fn get(&self, name: &str, bytes: usize) -> Result<DevicePtr, DriverError> {
        let mut globals = self.globals.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(ptr, size)) = globals.get(name) {
            return if size == bytes {
                Ok(ptr)
            } else {
                Err(DriverError {
                    call: "cuModuleGetGlobal",
                    code: status::INVALID_VALUE,
                    name: "CUDA_ERROR_INVALID_VALUE".into(),
                    description: format!(
                        "the module global `{name}` has {size} bytes, not the {bytes} asked for"
                    ),
                })
            };
        }
        let ptr = memory::alloc(bytes.max(1), self.device, self.devices)?;
        // SAFETY: a fresh allocation of at least `bytes` bytes.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, bytes) };
        globals.insert(name.to_string(), (ptr, bytes));
        Ok(ptr)
    }
}
