//! What the driver knows of an address (`cuPointerGetAttributes`), for the
//! checks of memory another library hands over; and the profiler's
//! collection switch (`cuProfilerStart`/`cuProfilerStop`).

use super::super::{DevicePtr, DriverError, MemoryRange};
use super::call::check;
use super::ffi::*;
use std::ffi::{c_int, c_uint, c_void};

/// The device allocation holding `ptr`, with the caller's context current;
/// `None` for host memory and unknown addresses. One
/// `cuPointerGetAttributes` call: unlike `cuPointerGetAttribute`, it
/// answers an address the driver does not know with default values rather
/// than an error, so refusing foreign memory makes no failed driver call
/// (compute-sanitizer's memcheck reports every one).
pub(super) fn memory_range(ptr: DevicePtr) -> Option<MemoryRange> {
    let mut kind: c_uint = 0;
    let mut device: c_int = -1;
    let mut start: u64 = 0;
    let mut size: usize = 0;
    let mut attributes = [
        POINTER_ATTRIBUTE_MEMORY_TYPE,
        POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        POINTER_ATTRIBUTE_RANGE_START_ADDR,
        POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut c_void; 4] = [
        (&mut kind as *mut c_uint).cast(),
        (&mut device as *mut c_int).cast(),
        (&mut start as *mut u64).cast(),
        (&mut size as *mut usize).cast(),
    ];
    // SAFETY: `data[i]` points to a live value of the type `cuda.h` gives
    // attribute `attributes[i]` (`unsigned int`, `int`, `CUdeviceptr`,
    // `size_t`); both arrays hold the 4 entries the count says.
    let status = unsafe {
        cuPointerGetAttributes(
            attributes.len() as c_uint,
            attributes.as_mut_ptr(),
            data.as_mut_ptr(),
            ptr,
        )
    };
    if status != SUCCESS || (kind != MEMORYTYPE_DEVICE && kind != MEMORYTYPE_UNIFIED) {
        return None;
    }
    Some(MemoryRange {
        device: usize::try_from(device).ok()?,
        extent: (size != 0).then_some((start, size)),
    })
}

/// `cuProfilerStart` (`on`) or `cuProfilerStop`, with the device's context
/// current.
pub(super) fn set_profiler_collection(on: bool) -> Result<(), DriverError> {
    if on {
        // SAFETY: no arguments; a context is current.
        check("cuProfilerStart", unsafe { cuProfilerStart() })
    } else {
        // SAFETY: no arguments; a context is current.
        check("cuProfilerStop", unsafe { cuProfilerStop() })
    }
}
