//! Stream-ordered copies and fills of linear memory on the CUDA driver:
//! host to device, device to host, device to device, and byte fills. (Copies
//! between devices are in `peer.rs`, 2-D copies in `managed.rs`.) Each
//! function is queued on a stream whose context the caller bound.

use super::super::{DevicePtr, DriverError, StreamHandle};
use super::call::{check, stream};
use super::ffi::*;

/// # Safety
/// As [`Driver::memset_async`](super::super::Driver::memset_async).
pub(super) unsafe fn memset_async(
    dst: DevicePtr,
    value: u8,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemsetD8Async", unsafe {
        cuMemsetD8Async(dst, value, bytes, stream(on))
    })
}

/// # Safety
/// As [`Driver::copy_to_device_async`](super::super::Driver::copy_to_device_async).
pub(super) unsafe fn to_device_async(
    dst: DevicePtr,
    src: *const u8,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemcpyHtoDAsync", unsafe {
        cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream(on))
    })
}

/// # Safety
/// As [`Driver::copy_to_host_async`](super::super::Driver::copy_to_host_async).
pub(super) unsafe fn to_host_async(
    dst: *mut u8,
    src: DevicePtr,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemcpyDtoHAsync", unsafe {
        cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream(on))
    })
}

/// # Safety
/// As [`Driver::copy_device_async`](super::super::Driver::copy_device_async).
pub(super) unsafe fn device_async(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemcpyDtoDAsync", unsafe {
        cuMemcpyDtoDAsync_v2(dst, src, bytes, stream(on))
    })
}
