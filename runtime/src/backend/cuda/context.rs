//! Each device's primary context on the CUDA driver: loading the driver,
//! opening a device (its context and default memory pool), and binding the
//! context of the device a call names to the calling thread.

use super::super::{status, DriverError, MAX_DEVICES};
use super::call::check;
use super::ffi::*;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::OnceLock;

/// The CUDA driver, with each opened device's primary context and memory pool.
pub(crate) struct CudaDriver {
    pub(super) initialised: OnceLock<Result<(), DriverError>>,
    pub(super) devices: [OnceLock<OpenDevice>; MAX_DEVICES],
}

/// An opened device: its retained primary context and its default pool.
#[derive(Clone, Copy)]
pub(super) struct OpenDevice {
    pub(super) context: CUcontext,
    pub(super) pool: CUmemoryPool,
}

// SAFETY: the context and pool handles are only passed to the driver, which
// is thread-safe.
unsafe impl Send for OpenDevice {}
// SAFETY: as above.
unsafe impl Sync for OpenDevice {}

thread_local! {
    /// The device ordinal whose context this thread made current last.
    static BOUND: Cell<Option<usize>> = const { Cell::new(None) };
}

impl CudaDriver {
    pub(crate) const fn new() -> Self {
        CudaDriver {
            initialised: OnceLock::new(),
            devices: [const { OnceLock::new() }; MAX_DEVICES],
        }
    }

    pub(super) fn init(&self) -> Result<(), DriverError> {
        self.initialised
            .get_or_init(|| {
                functions().map_err(|reason| DriverError {
                    call: "loading libcuda",
                    code: ERROR_NOT_INITIALIZED,
                    name: "CUDA_ERROR_NOT_INITIALIZED".into(),
                    description: reason.to_string(),
                })?;
                // SAFETY: cuInit takes flags 0 and may be called any number of times.
                check("cuInit", unsafe { cuInit(0) })?;
                let mut version = 0;
                // SAFETY: writes one int.
                check("cuDriverGetVersion", unsafe {
                    cuDriverGetVersion(&mut version)
                })?;
                check_driver_version(version).map_err(|description| DriverError {
                    call: "cuDriverGetVersion",
                    code: ERROR_INSUFFICIENT_DRIVER,
                    name: "CUDA_ERROR_INSUFFICIENT_DRIVER".into(),
                    description,
                })
            })
            .clone()
    }

    pub(super) fn device_handle(ordinal: usize) -> Result<CUdevice, DriverError> {
        let mut device = 0;
        // SAFETY: writes one device handle.
        check("cuDeviceGet", unsafe {
            cuDeviceGet(&mut device, ordinal as c_int)
        })?;
        Ok(device)
    }

    /// Device `ordinal`'s context and pool, once opened.
    pub(super) fn opened(
        &self,
        ordinal: usize,
        call: &'static str,
    ) -> Result<OpenDevice, DriverError> {
        self.devices
            .get(ordinal)
            .and_then(OnceLock::get)
            .copied()
            .ok_or_else(|| DriverError {
                call,
                code: status::INVALID_VALUE,
                name: "CUDA_ERROR_INVALID_CONTEXT".into(),
                description: format!("device {ordinal} was not opened"),
            })
    }

    /// Makes device `ordinal`'s context (opened) current on this thread,
    /// unless this thread's last call named the same device: every call does
    /// this first for the device it acts on.
    #[inline]
    pub(super) fn bind(&self, ordinal: usize) -> Result<(), DriverError> {
        if BOUND.with(Cell::get) == Some(ordinal) {
            return Ok(());
        }
        self.make_current(ordinal)
    }

    fn make_current(&self, ordinal: usize) -> Result<(), DriverError> {
        let device = self.opened(ordinal, "cuCtxSetCurrent")?;
        // SAFETY: `context` is a retained primary context.
        check("cuCtxSetCurrent", unsafe {
            cuCtxSetCurrent(device.context)
        })?;
        BOUND.with(|b| b.set(Some(ordinal)));
        Ok(())
    }

    /// Forgets which context this thread made current: the next `bind` sets
    /// it again. For after calls into libraries (NCCL) that may switch the
    /// thread's current context.
    pub(super) fn forget_binding() {
        BOUND.with(|b| b.set(None));
    }
}
