//! Managed memory (`cuMemAllocManaged`, prefetch and advice), pitched
//! allocations (`cuMemAllocPitch`), their synchronous free (`cuMemFree`) and
//! 2-D copies (`cuMemcpy2DAsync`) on the CUDA driver.

use super::super::{
    Advice, Copy2d, DevicePtr, DriverError, End2d, Location, ManagedSupport, Memory2d, StreamHandle,
};
use super::call::{check, stream};
use super::context::CudaDriver;
use super::ffi::*;
use std::ffi::{c_int, c_uint};
use std::ptr;

/// The driver's `CUmemLocation` for `location`.
fn location(location: Location) -> MemLocation {
    match location {
        Location::Device(ordinal) => MemLocation {
            kind: MEM_LOCATION_TYPE_DEVICE,
            id: ordinal as c_int,
        },
        Location::Host => MemLocation {
            kind: MEM_LOCATION_TYPE_HOST,
            id: 0,
        },
    }
}

/// The driver's fields for one end of a 2-D copy: memory type, host
/// address, device address.
fn end(end: End2d) -> (c_uint, *mut u8, CUdeviceptr) {
    match end.at {
        Memory2d::Host(p) => (MEMORYTYPE_HOST, p, 0),
        Memory2d::Device(d) => (MEMORYTYPE_DEVICE, ptr::null_mut(), d),
    }
}

impl CudaDriver {
    pub(super) fn managed_support_of(&self, device: usize) -> Result<ManagedSupport, DriverError> {
        let handle = Self::device_handle(device)?;
        let attr = |a: c_int| -> Result<bool, DriverError> {
            let mut v = 0;
            // SAFETY: writes one int.
            check("cuDeviceGetAttribute", unsafe {
                cuDeviceGetAttribute(&mut v, a, handle)
            })?;
            Ok(v != 0)
        };
        Ok(ManagedSupport {
            managed: attr(device_attribute::MANAGED_MEMORY)?,
            concurrent: attr(device_attribute::CONCURRENT_MANAGED_ACCESS)?,
        })
    }

    pub(super) fn managed_alloc(
        &self,
        device: usize,
        bytes: usize,
    ) -> Result<DevicePtr, DriverError> {
        self.bind(device)?;
        let mut p = 0;
        // SAFETY: writes one device pointer.
        check("cuMemAllocManaged", unsafe {
            cuMemAllocManaged(&mut p, bytes, MEM_ATTACH_GLOBAL)
        })?;
        Ok(p)
    }

    pub(super) fn pitch_alloc(
        &self,
        device: usize,
        width_bytes: usize,
        rows: usize,
        element_bytes: u32,
    ) -> Result<(DevicePtr, usize), DriverError> {
        self.bind(device)?;
        let (mut p, mut pitch) = (0, 0);
        // SAFETY: writes one device pointer and one size.
        check("cuMemAllocPitch", unsafe {
            cuMemAllocPitch_v2(
                &mut p,
                &mut pitch,
                width_bytes,
                rows,
                element_bytes as c_uint,
            )
        })?;
        Ok((p, pitch))
    }

    /// # Safety
    /// As [`Driver::free_now`](super::super::Driver::free_now).
    pub(super) unsafe fn free_allocation(
        &self,
        device: usize,
        ptr: DevicePtr,
    ) -> Result<(), DriverError> {
        self.bind(device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemFree", unsafe { cuMemFree_v2(ptr) })
    }

    /// # Safety
    /// As [`Driver::prefetch_async`](super::super::Driver::prefetch_async).
    pub(super) unsafe fn prefetch(
        &self,
        ptr: DevicePtr,
        bytes: usize,
        to: Location,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemPrefetchAsync_v2", unsafe {
            cuMemPrefetchAsync_v2(ptr, bytes, location(to), 0, stream(on))
        })
    }

    /// # Safety
    /// As [`Driver::advise`](super::super::Driver::advise).
    pub(super) unsafe fn mem_advise(
        &self,
        device: usize,
        ptr: DevicePtr,
        bytes: usize,
        advice: Advice,
        set: bool,
    ) -> Result<(), DriverError> {
        self.bind(device)?;
        // Each `SET_*` is followed by its `UNSET_*`.
        let unset = c_int::from(!set);
        let (code, at) = match advice {
            // The location is ignored for read-mostly.
            Advice::ReadMostly => (mem_advise::SET_READ_MOSTLY, Location::Device(device)),
            Advice::PreferredLocation(at) => (mem_advise::SET_PREFERRED_LOCATION, at),
            Advice::AccessedBy(at) => (mem_advise::SET_ACCESSED_BY, at),
        };
        // SAFETY: forwarded to the caller.
        check("cuMemAdvise_v2", unsafe {
            cuMemAdvise_v2(ptr, bytes, code + unset, location(at))
        })
    }

    /// # Safety
    /// As [`Driver::copy_2d_async`](super::super::Driver::copy_2d_async).
    pub(super) unsafe fn copy_2d(
        &self,
        copy: &Copy2d,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        let (src_type, src_host, src_device) = end(copy.src);
        let (dst_type, dst_host, dst_device) = end(copy.dst);
        let params = Memcpy2d {
            src_x_bytes: 0,
            src_y: 0,
            src_memory_type: src_type,
            src_host: src_host.cast_const().cast(),
            src_device,
            src_array: ptr::null_mut(),
            src_pitch: copy.src.pitch,
            dst_x_bytes: 0,
            dst_y: 0,
            dst_memory_type: dst_type,
            dst_host: dst_host.cast(),
            dst_device,
            dst_array: ptr::null_mut(),
            dst_pitch: copy.dst.pitch,
            width_bytes: copy.width_bytes,
            height: copy.rows,
        };
        // SAFETY: `params` describes the caller's ranges (forwarded contract)
        // and lives across the call, which reads it before returning.
        check("cuMemcpy2DAsync", unsafe {
            cuMemcpy2DAsync_v2(&params, stream(on))
        })
    }
}
