//! Device and page-locked host memory on the CUDA driver: stream-ordered
//! allocations from the device's default pool (`cuMemAllocAsync`,
//! `cuMemFreeAsync`), the device's free and total memory, and portable
//! pinned host memory, mapped for the devices on request. Each function acts
//! on the context the caller bound.

use super::super::{DevicePtr, DriverError, StreamHandle};
use super::call::{check, stream};
use super::ffi::*;
use std::ptr;

pub(super) fn info() -> Result<(usize, usize), DriverError> {
    let (mut free, mut total) = (0, 0);
    // SAFETY: writes two sizes.
    check("cuMemGetInfo", unsafe {
        cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free, total))
}

pub(super) fn alloc_async(bytes: usize, on: StreamHandle) -> Result<DevicePtr, DriverError> {
    let mut p = 0;
    // SAFETY: writes one device pointer; `on` is a live stream.
    check("cuMemAllocAsync", unsafe {
        cuMemAllocAsync(&mut p, bytes, stream(on))
    })?;
    Ok(p)
}

/// # Safety
/// As [`Driver::free_async`](super::super::Driver::free_async).
pub(super) unsafe fn free_async(ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemFreeAsync", unsafe { cuMemFreeAsync(ptr, stream(on)) })
}

pub(super) fn host_alloc(bytes: usize, mapped: bool) -> Result<*mut u8, DriverError> {
    let mut p = ptr::null_mut();
    // Portable: pinned for every device's context, so that copies on any
    // device's streams are asynchronous (and mapped for every device).
    let flags = HOST_ALLOC_PORTABLE | if mapped { HOST_ALLOC_DEVICE_MAP } else { 0 };
    // SAFETY: writes one pointer.
    check("cuMemHostAlloc", unsafe {
        cuMemHostAlloc(&mut p, bytes, flags)
    })?;
    Ok(p.cast())
}

pub(super) fn host_device_pointer(ptr: *mut u8) -> Result<DevicePtr, DriverError> {
    let mut d = 0;
    // SAFETY: writes one address; the driver checks `ptr` (flags must be 0).
    check("cuMemHostGetDevicePointer", unsafe {
        cuMemHostGetDevicePointer_v2(&mut d, ptr.cast(), 0)
    })?;
    Ok(d)
}

/// # Safety
/// As [`Driver::host_free`](super::super::Driver::host_free).
pub(super) unsafe fn host_free(ptr: *mut u8) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuMemFreeHost", unsafe { cuMemFreeHost(ptr.cast()) })
}
