//! What the driver knows of an address (`cuPointerGetAttribute`), for the
//! checks of memory another library hands over; and the profiler's
//! collection switch (`cuProfilerStart`/`cuProfilerStop`).

use super::super::{DevicePtr, DriverError, MemoryRange};
use super::call::check;
use super::ffi::*;
use std::ffi::{c_int, c_uint, c_void};

/// One pointer attribute of `ptr`, of type `V`, or `None` where the driver
/// does not know the address.
fn attribute<V: Default>(ptr: DevicePtr, attribute: c_int) -> Option<V> {
    let mut value = V::default();
    // SAFETY: each caller names `V` as the attribute's type in `cuda.h`
    // (`unsigned int`, `int`, `CUdeviceptr` or `size_t`); the driver writes
    // one such value.
    let status =
        unsafe { cuPointerGetAttribute((&mut value as *mut V).cast::<c_void>(), attribute, ptr) };
    (status == SUCCESS).then_some(value)
}

/// The device allocation holding `ptr`, with the caller's context current;
/// `None` for host memory and unknown addresses.
pub(super) fn memory_range(ptr: DevicePtr) -> Option<MemoryRange> {
    let kind: c_uint = attribute(ptr, POINTER_ATTRIBUTE_MEMORY_TYPE)?;
    if kind != MEMORYTYPE_DEVICE && kind != MEMORYTYPE_UNIFIED {
        return None;
    }
    let device: c_int = attribute(ptr, POINTER_ATTRIBUTE_DEVICE_ORDINAL)?;
    let start: Option<u64> = attribute(ptr, POINTER_ATTRIBUTE_RANGE_START_ADDR);
    let size: Option<usize> = attribute(ptr, POINTER_ATTRIBUTE_RANGE_SIZE);
    Some(MemoryRange {
        device: usize::try_from(device).ok()?,
        extent: start.zip(size),
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
