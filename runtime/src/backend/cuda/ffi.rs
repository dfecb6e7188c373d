//! The CUDA driver functions the runtime calls.
//!
//! Handle and enum types come from `cust::sys` (cust's raw bindings). The
//! functions are declared here, returning `c_int` rather than
//! `cust::sys::CUresult`: that is a Rust enum, and a newer driver can return a
//! code the enum lacks, which would be undefined behaviour. Here an unknown
//! code is just a number in an error message.

use std::ffi::{c_char, c_int, c_uint, c_void};

pub(crate) use cust::sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction,
    CUfunction_attribute, CUjit_option, CUmemoryPool, CUmodule, CUstream,
};

/// A driver status code.
pub(crate) type Status = c_int;

pub(crate) const SUCCESS: Status = 0;
pub(crate) const ERROR_NOT_READY: Status = 600;

/// `CU_STREAM_NON_BLOCKING`.
pub(crate) const STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_BLOCKING_SYNC`, `CU_EVENT_DISABLE_TIMING`, `CU_EVENT_INTERPROCESS`.
pub(crate) const EVENT_BLOCKING_SYNC: c_uint = 1;
pub(crate) const EVENT_DISABLE_TIMING: c_uint = 2;
pub(crate) const EVENT_INTERPROCESS: c_uint = 4;
/// `CU_MEMHOSTALLOC_PORTABLE`: page-locked for every context, not only the
/// one that allocated it (every device's copies run at full speed).
pub(crate) const HOST_ALLOC_PORTABLE: c_uint = 1;
/// `CU_MEMHOSTALLOC_DEVICEMAP`.
pub(crate) const HOST_ALLOC_DEVICE_MAP: c_uint = 2;
/// `CU_MEM_LOCATION_TYPE_DEVICE`.
pub(crate) const MEM_LOCATION_TYPE_DEVICE: c_int = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
pub(crate) const MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;

/// `CUmemLocation`.
#[repr(C)]
pub(crate) struct MemLocation {
    pub(crate) kind: c_int,
    pub(crate) id: c_int,
}

/// `CUmemAccessDesc`.
#[repr(C)]
pub(crate) struct MemAccessDesc {
    pub(crate) location: MemLocation,
    pub(crate) flags: c_int,
}
/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`.
pub(crate) const MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;

#[link(name = "cuda")]
extern "C" {
    pub(crate) fn cuInit(flags: c_uint) -> Status;
    pub(crate) fn cuGetErrorName(error: Status, name: *mut *const c_char) -> Status;
    pub(crate) fn cuGetErrorString(error: Status, text: *mut *const c_char) -> Status;
    pub(crate) fn cuDeviceGetCount(count: *mut c_int) -> Status;
    pub(crate) fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> Status;
    pub(crate) fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice) -> Status;
    pub(crate) fn cuDeviceGetAttribute(
        value: *mut c_int,
        attribute: CUdevice_attribute,
        device: CUdevice,
    ) -> Status;
    pub(crate) fn cuDeviceGetDefaultMemPool(pool: *mut CUmemoryPool, device: CUdevice) -> Status;
    pub(crate) fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, device: CUdevice) -> Status;
    pub(crate) fn cuCtxSetCurrent(ctx: CUcontext) -> Status;
    pub(crate) fn cuCtxSynchronize() -> Status;
    pub(crate) fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> Status;
    pub(crate) fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> Status;
    pub(crate) fn cuMemPoolSetAttribute(
        pool: CUmemoryPool,
        attribute: c_int,
        value: *mut c_void,
    ) -> Status;
    pub(crate) fn cuMemPoolTrimTo(pool: CUmemoryPool, keep: usize) -> Status;
    pub(crate) fn cuMemPoolSetAccess(
        pool: CUmemoryPool,
        map: *const MemAccessDesc,
        count: usize,
    ) -> Status;
    pub(crate) fn cuDeviceCanAccessPeer(
        can_access: *mut c_int,
        device: CUdevice,
        peer: CUdevice,
    ) -> Status;
    pub(crate) fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> Status;
    pub(crate) fn cuMemcpyPeerAsync(
        dst: CUdeviceptr,
        dst_context: CUcontext,
        src: CUdeviceptr,
        src_context: CUcontext,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    pub(crate) fn cuMemAllocAsync(ptr: *mut CUdeviceptr, bytes: usize, stream: CUstream) -> Status;
    pub(crate) fn cuMemFreeAsync(ptr: CUdeviceptr, stream: CUstream) -> Status;
    pub(crate) fn cuMemHostAlloc(ptr: *mut *mut c_void, bytes: usize, flags: c_uint) -> Status;
    pub(crate) fn cuMemFreeHost(ptr: *mut c_void) -> Status;
    pub(crate) fn cuMemHostGetDevicePointer_v2(
        dptr: *mut CUdeviceptr,
        ptr: *mut c_void,
        flags: c_uint,
    ) -> Status;
    pub(crate) fn cuMemsetD8Async(
        ptr: CUdeviceptr,
        value: u8,
        count: usize,
        stream: CUstream,
    ) -> Status;
    pub(crate) fn cuMemcpyHtoDAsync_v2(
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    pub(crate) fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    pub(crate) fn cuMemcpyDtoDAsync_v2(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    pub(crate) fn cuStreamCreateWithPriority(
        stream: *mut CUstream,
        flags: c_uint,
        priority: c_int,
    ) -> Status;
    pub(crate) fn cuStreamDestroy_v2(stream: CUstream) -> Status;
    pub(crate) fn cuStreamGetFlags(stream: CUstream, flags: *mut c_uint) -> Status;
    pub(crate) fn cuStreamGetPriority(stream: CUstream, priority: *mut c_int) -> Status;
    pub(crate) fn cuStreamSynchronize(stream: CUstream) -> Status;
    pub(crate) fn cuStreamQuery(stream: CUstream) -> Status;
    pub(crate) fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> Status;
    pub(crate) fn cuLaunchHostFunc(
        stream: CUstream,
        function: unsafe extern "C" fn(*mut c_void),
        user_data: *mut c_void,
    ) -> Status;
    pub(crate) fn cuEventCreate(event: *mut CUevent, flags: c_uint) -> Status;
    pub(crate) fn cuEventDestroy_v2(event: CUevent) -> Status;
    pub(crate) fn cuEventRecord(event: CUevent, stream: CUstream) -> Status;
    pub(crate) fn cuEventSynchronize(event: CUevent) -> Status;
    pub(crate) fn cuEventQuery(event: CUevent) -> Status;
    pub(crate) fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> Status;
    pub(crate) fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        count: c_uint,
        options: *mut CUjit_option,
        values: *mut *mut c_void,
    ) -> Status;
    pub(crate) fn cuModuleGetFunction(
        function: *mut CUfunction,
        module: CUmodule,
        name: *const c_char,
    ) -> Status;
    pub(crate) fn cuFuncGetAttribute(
        value: *mut c_int,
        attribute: CUfunction_attribute,
        function: CUfunction,
    ) -> Status;
    pub(crate) fn cuFuncSetAttribute(
        function: CUfunction,
        attribute: CUfunction_attribute,
        value: c_int,
    ) -> Status;
    pub(crate) fn cuLaunchKernel(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Status;
}
