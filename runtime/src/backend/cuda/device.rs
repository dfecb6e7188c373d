//! Devices on the CUDA driver: how many, their properties and limits (the
//! attributes `cuDeviceGetAttribute` reports), opening one (its primary
//! context and default memory pool, configured), and waiting for one.

use super::super::{DeviceLimits, DeviceProperties, DriverError};
use super::call::check;
use super::context::{CudaDriver, OpenDevice};
use super::ffi::*;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;

/// How many devices the driver sees (it is initialised).
pub(super) fn count() -> Result<usize, DriverError> {
    let mut n = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetCount", unsafe { cuDeviceGetCount(&mut n) })?;
    Ok(n.max(0) as usize)
}

impl CudaDriver {
    /// Opens device `ordinal` (the driver is initialised): reads its
    /// properties, retains its primary context and configures its pool.
    pub(super) fn open_device(&self, ordinal: usize) -> Result<DeviceProperties, DriverError> {
        let device = Self::device_handle(ordinal)?;
        let attr = |a: c_int| -> Result<u32, DriverError> {
            let mut v = 0;
            // SAFETY: writes one int.
            check("cuDeviceGetAttribute", unsafe {
                cuDeviceGetAttribute(&mut v, a, device)
            })?;
            Ok(v.max(0) as u32)
        };
        use device_attribute as A;
        let limits = DeviceLimits {
            max_threads_per_block: attr(A::MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                attr(A::MAX_BLOCK_DIM_X)?,
                attr(A::MAX_BLOCK_DIM_Y)?,
                attr(A::MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                attr(A::MAX_GRID_DIM_X)?,
                attr(A::MAX_GRID_DIM_Y)?,
                attr(A::MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: attr(A::MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_per_block_optin: attr(A::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            multiprocessor_count: attr(A::MULTIPROCESSOR_COUNT)?,
            max_threads_per_multiprocessor: attr(A::MAX_THREADS_PER_MULTIPROCESSOR)?,
            max_registers_per_block: attr(A::MAX_REGISTERS_PER_BLOCK)?,
            compute_capability: (
                attr(A::COMPUTE_CAPABILITY_MAJOR)?,
                attr(A::COMPUTE_CAPABILITY_MINOR)?,
            ),
        };
        let mut buf = [0 as c_char; 256];
        // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
        check("cuDeviceGetName", unsafe {
            cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, device)
        })?;
        // SAFETY: NUL-terminated within the buffer (above).
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut context = ptr::null_mut();
        // SAFETY: writes one context handle; the retain is never released, so
        // the primary context lives as long as the process.
        check("cuDevicePrimaryCtxRetain", unsafe {
            cuDevicePrimaryCtxRetain(&mut context, device)
        })?;
        let mut pool = ptr::null_mut();
        // SAFETY: writes one pool handle.
        check("cuDeviceGetDefaultMemPool", unsafe {
            cuDeviceGetDefaultMemPool(&mut pool, device)
        })?;
        let mut keep_everything: u64 = u64::MAX;
        // SAFETY: the release threshold attribute takes a `cuuint64_t`.
        check("cuMemPoolSetAttribute", unsafe {
            cuMemPoolSetAttribute(
                pool,
                MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep_everything as *mut u64).cast(),
            )
        })?;
        let mut no_hidden_waits: c_int = 0;
        // SAFETY: the reuse attributes take an `int`. Off: a block freed on
        // one stream is reused on another only once the free is ordered
        // before (an event wait) or has completed, never by a dependency the
        // driver adds behind the program's back (as the simulator's pool).
        check("cuMemPoolSetAttribute", unsafe {
            cuMemPoolSetAttribute(
                pool,
                MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                (&mut no_hidden_waits as *mut c_int).cast(),
            )
        })?;
        let _ = self.devices[ordinal].set(OpenDevice { context, pool });
        Ok(DeviceProperties { name, limits })
    }
}

/// Waits for all work of the current context's device.
pub(super) fn synchronize() -> Result<(), DriverError> {
    // SAFETY: no arguments; the device's context is current.
    check("cuCtxSynchronize", unsafe { cuCtxSynchronize() })
}

/// The current context's per-thread stack size.
pub(super) fn stack_bytes_per_thread() -> Result<usize, DriverError> {
    let mut bytes = 0;
    // SAFETY: writes one size; the device's context is current.
    check("cuCtxGetLimit", unsafe {
        cuCtxGetLimit(&mut bytes, LIMIT_STACK_SIZE)
    })?;
    Ok(bytes)
}
