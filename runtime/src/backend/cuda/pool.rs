//! Each device's default memory pool on the CUDA driver: its usage, release
//! threshold and trimming (`cuMemPoolGetAttribute`, `cuMemPoolSetAttribute`,
//! `cuMemPoolTrimTo`).

use super::super::DriverError;
use super::call::check;
use super::context::CudaDriver;
use super::ffi::*;
use std::ffi::c_int;

impl CudaDriver {
    /// A `cuuint64_t` attribute of `device`'s default pool.
    pub(super) fn pool_attribute(
        &self,
        device: usize,
        attribute: c_int,
    ) -> Result<u64, DriverError> {
        let pool = self.opened(device, "cuMemPoolGetAttribute")?.pool;
        let mut value: u64 = 0;
        // SAFETY: `pool` is the device's default pool; the attributes asked
        // here are `cuuint64_t`s, written to `value`.
        check("cuMemPoolGetAttribute", unsafe {
            cuMemPoolGetAttribute(pool, attribute, (&mut value as *mut u64).cast())
        })?;
        Ok(value)
    }

    pub(super) fn set_release_threshold(
        &self,
        device: usize,
        bytes: u64,
    ) -> Result<(), DriverError> {
        let pool = self.opened(device, "cuMemPoolSetAttribute")?.pool;
        let mut value = bytes;
        // SAFETY: the release threshold is a `cuuint64_t`, read from `value`.
        check("cuMemPoolSetAttribute", unsafe {
            cuMemPoolSetAttribute(
                pool,
                MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut value as *mut u64).cast(),
            )
        })
    }

    pub(super) fn trim_pool(&self, device: usize, keep: usize) -> Result<(), DriverError> {
        let pool = self.opened(device, "cuMemPoolTrimTo")?.pool;
        // SAFETY: `pool` is the device's default pool.
        check("cuMemPoolTrimTo", unsafe { cuMemPoolTrimTo(pool, keep) })
    }
}
