//! PTX embedded in a kernel crate, loaded into each device on first use.

use crate::backend::{driver, status, DriverError, ModuleHandle, MAX_DEVICES};
use crate::device::DeviceState;
use crate::error::{Error, Result};
use std::ffi::CString;
use std::sync::OnceLock;

/// A kernel crate's PTX module, embedded in the binary by
/// `gpu_device::embed_kernels!()`. Loaded once per device, on first launch.
pub struct EmbeddedModule {
    crate_name: &'static str,
    ptx: &'static str,
    loaded: [OnceLock<Result<ModuleHandle>>; MAX_DEVICES],
}

impl EmbeddedModule {
    /// Wraps a crate's PTX text. Used by `embed_kernels!()`.
    ///
    /// # Safety
    /// `ptx` is the PTX that `gpu-builder` built from the `#[kernel]`
    /// functions of `crate_name`, whose typed launchers will load it: each
    /// entry point they name must have exactly the parameters their
    /// signatures pass, and the device code must uphold the guarantees of
    /// `gpu-device` (no data race, no out-of-bounds access from safe code).
    /// Arbitrary PTX under a typed, safe launcher could do anything.
    pub const unsafe fn new(crate_name: &'static str, ptx: &'static str) -> Self {
        EmbeddedModule {
            crate_name,
            ptx,
            loaded: [const { OnceLock::new() }; MAX_DEVICES],
        }
    }

    /// The PTX text.
    pub fn ptx(&self) -> &'static str {
        self.ptx
    }

    /// The name of the crate the kernels come from.
    pub fn crate_name(&self) -> &'static str {
        self.crate_name
    }

    /// The names of the kernel entry points in the PTX.
    pub fn entry_points(&self) -> Vec<&'static str> {
        self.ptx
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
            .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
            .collect()
    }

    /// The module loaded into `device`.
    pub(crate) fn load(&self, device: &DeviceState) -> Result<ModuleHandle> {
        self.loaded[device.ordinal]
            .get_or_init(|| {
                let text = CString::new(self.ptx).map_err(|_| Error::ModuleLoad {
                    crate_name: self.crate_name,
                    driver: DriverError {
                        call: "cuModuleLoadDataEx",
                        code: status::INVALID_VALUE,
                        name: "CUDA_ERROR_INVALID_VALUE".into(),
                        description: "the PTX text contains a NUL byte".into(),
                    },
                    log: String::new(),
                })?;
                driver()
                    .module_load(device.ordinal, &text)
                    .map_err(|(driver, log)| Error::ModuleLoad {
                        crate_name: self.crate_name,
                        driver,
                        log,
                    })
            })
            .clone()
    }
}
