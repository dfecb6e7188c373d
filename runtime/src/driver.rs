//! The one seam between the runtime and the CUDA driver.
//!
//! Every driver call of the runtime goes through this module; the rest of the
//! crate speaks in its own types. Each operation goes to the CUDA driver or,
//! when the [backend](crate::backend) is the simulator, to the matching
//! operation of [`simulator`], whose handles stand in for the driver's.
//!
//! Handles and argument enums come from `cust::sys` (cust's raw bindings).
//! The functions themselves are declared here, returning `c_int` rather than
//! `cust::sys::CUresult`: that is a Rust enum, and a newer driver can return a
//! code the enum lacks, which would be undefined behaviour. Here an unknown
//! code is just a number in an error message.

use crate::simulator;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::ptr;

pub use cust::sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction,
    CUfunction_attribute, CUjit_option, CUmodule, CUstream,
};

/// A driver status code.
pub type Status = c_int;

pub const SUCCESS: Status = 0;
pub const ERROR_INVALID_VALUE: Status = 1;
pub const ERROR_OUT_OF_MEMORY: Status = 2;
pub const ERROR_NOT_READY: Status = 600;
pub const ERROR_NOT_PERMITTED: Status = 800;
pub const ERROR_LAUNCH_FAILED: Status = 719;
pub const ERROR_LAUNCH_OUT_OF_RESOURCES: Status = 701;

/// Codes with which a kernel's execution fails; they leave the context unusable.
pub fn is_kernel_fault(code: Status) -> bool {
    matches!(code, 700 | 702 | 714..=720)
}

#[link(name = "cuda")]
extern "C" {
    fn cuInit(flags: c_uint) -> Status;
    fn cuGetErrorName(error: Status, name: *mut *const c_char) -> Status;
    fn cuGetErrorString(error: Status, text: *mut *const c_char) -> Status;
    fn cuDeviceGetCount(count: *mut c_int) -> Status;
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> Status;
    fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice) -> Status;
    fn cuDeviceGetAttribute(
        value: *mut c_int,
        attribute: CUdevice_attribute,
        device: CUdevice,
    ) -> Status;
    fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, device: CUdevice) -> Status;
    fn cuCtxSetCurrent(ctx: CUcontext) -> Status;
    fn cuCtxSynchronize() -> Status;
    fn cuMemAlloc_v2(ptr: *mut CUdeviceptr, bytes: usize) -> Status;
    fn cuMemFree_v2(ptr: CUdeviceptr) -> Status;
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> Status;
    fn cuMemHostAlloc(ptr: *mut *mut c_void, bytes: usize, flags: c_uint) -> Status;
    fn cuMemFreeHost(ptr: *mut c_void) -> Status;
    fn cuMemHostGetDevicePointer_v2(
        dptr: *mut CUdeviceptr,
        ptr: *mut c_void,
        flags: c_uint,
    ) -> Status;
    fn cuMemsetD8Async(ptr: CUdeviceptr, value: u8, count: usize, stream: CUstream) -> Status;
    fn cuMemcpyHtoDAsync_v2(
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    fn cuMemcpyDtoDAsync_v2(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: CUdeviceptr) -> Status;
    fn cuStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int) -> Status;
    fn cuStreamDestroy_v2(stream: CUstream) -> Status;
    fn cuStreamSynchronize(stream: CUstream) -> Status;
    fn cuStreamQuery(stream: CUstream) -> Status;
    fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> Status;
    fn cuLaunchHostFunc(stream: CUstream, function: HostFunction, user_data: *mut c_void)
        -> Status;
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> Status;
    fn cuEventCreate(event: *mut CUevent, flags: c_uint) -> Status;
    fn cuEventDestroy_v2(event: CUevent) -> Status;
    fn cuEventRecord(event: CUevent, stream: CUstream) -> Status;
    fn cuEventSynchronize(event: CUevent) -> Status;
    fn cuEventQuery(event: CUevent) -> Status;
    fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> Status;
    fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        count: c_uint,
        options: *mut CUjit_option,
        values: *mut *mut c_void,
    ) -> Status;
    fn cuModuleGetFunction(
        function: *mut CUfunction,
        module: CUmodule,
        name: *const c_char,
    ) -> Status;
    fn cuFuncGetAttribute(
        value: *mut c_int,
        attribute: CUfunction_attribute,
        function: CUfunction,
    ) -> Status;
    fn cuFuncSetAttribute(
        function: CUfunction,
        attribute: CUfunction_attribute,
        value: c_int,
    ) -> Status;
    fn cuLaunchKernel(
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

/// A function the driver calls on one of its threads when a stream reaches it.
pub type HostFunction = unsafe extern "C" fn(user_data: *mut c_void);

/// The legacy default stream's handle (CUDA's stream 0).
pub const LEGACY_DEFAULT_STREAM: usize = 0;
/// `CU_STREAM_PER_THREAD`: the per-thread default stream's handle.
pub const PER_THREAD_DEFAULT_STREAM: usize = 2;

/// A failed driver call: which call, and the driver's name and text for the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverError {
    /// The driver function that failed.
    pub call: &'static str,
    /// The numeric status code.
    pub code: i32,
    /// The driver's symbolic name for the code (`CUDA_ERROR_...`).
    pub name: String,
    /// The driver's description of the code.
    pub description: String,
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed with {} ({}): {}",
            self.call, self.name, self.code, self.description
        )
    }
}

fn describe(code: Status) -> (String, String) {
    if let Some(simulated) = simulator::describe(code) {
        return simulated;
    }
    let mut name: *const c_char = ptr::null();
    let mut text: *const c_char = ptr::null();
    // SAFETY: both calls write a pointer to a static, NUL-terminated string or
    // leave it untouched (null) for an unknown code.
    unsafe {
        cuGetErrorName(code, &mut name);
        cuGetErrorString(code, &mut text);
    }
    let read = |p: *const c_char, fallback: &str| {
        if p.is_null() {
            fallback.to_string()
        } else {
            // SAFETY: non-null pointers from the driver are static C strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    (
        read(name, "CUDA_ERROR_UNKNOWN_CODE"),
        read(text, "a status code this runtime does not know"),
    )
}

/// Turns a status into `Ok(())` or a [`DriverError`] naming `call`.
pub fn check(call: &'static str, code: Status) -> Result<(), DriverError> {
    if code == SUCCESS {
        Ok(())
    } else {
        let (name, description) = describe(code);
        Err(DriverError {
            call,
            code,
            name,
            description,
        })
    }
}

/// The number of CUDA devices, asking the driver itself (for the choice of backend).
pub fn cuda_device_count() -> Result<i32, DriverError> {
    // SAFETY: cuInit takes flags 0; cuDeviceGetCount writes one int.
    check("cuInit", unsafe { cuInit(0) })?;
    let mut n = 0;
    check("cuDeviceGetCount", unsafe { cuDeviceGetCount(&mut n) })?;
    Ok(n)
}

pub fn init() -> Result<(), DriverError> {
    if crate::backend::simulated() {
        return Ok(());
    }
    // SAFETY: cuInit takes flags 0 and may be called any number of times.
    check("cuInit", unsafe { cuInit(0) })
}

pub fn device_count() -> Result<i32, DriverError> {
    if crate::backend::simulated() {
        return Ok(1);
    }
    let mut n = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetCount", unsafe { cuDeviceGetCount(&mut n) })?;
    Ok(n)
}

pub fn device(ordinal: i32) -> Result<CUdevice, DriverError> {
    if crate::backend::simulated() {
        return Ok(ordinal);
    }
    let mut d = 0;
    // SAFETY: writes one device handle.
    check("cuDeviceGet", unsafe { cuDeviceGet(&mut d, ordinal) })?;
    Ok(d)
}

pub fn device_name(device: CUdevice) -> Result<String, DriverError> {
    if crate::backend::simulated() {
        return Ok(simulator::DEVICE_NAME.to_string());
    }
    let mut buf = [0 as c_char; 256];
    // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
    check("cuDeviceGetName", unsafe {
        cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, device)
    })?;
    // SAFETY: NUL-terminated within the buffer (above).
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

pub fn device_attribute(
    device: CUdevice,
    attribute: CUdevice_attribute,
) -> Result<i32, DriverError> {
    if crate::backend::simulated() {
        return Ok(simulator::device_attribute(attribute));
    }
    let mut v = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetAttribute", unsafe {
        cuDeviceGetAttribute(&mut v, attribute, device)
    })?;
    Ok(v)
}

pub fn retain_primary_context(device: CUdevice) -> Result<CUcontext, DriverError> {
    if crate::backend::simulated() {
        return Ok(std::ptr::NonNull::dangling().as_ptr());
    }
    let mut ctx = ptr::null_mut();
    // SAFETY: writes one context handle; the retain is never released, so the
    // primary context lives as long as the process.
    check("cuDevicePrimaryCtxRetain", unsafe {
        cuDevicePrimaryCtxRetain(&mut ctx, device)
    })?;
    Ok(ctx)
}

pub fn set_current_context(ctx: CUcontext) -> Result<(), DriverError> {
    if crate::backend::simulated() {
        return Ok(());
    }
    // SAFETY: `ctx` is a retained primary context.
    check("cuCtxSetCurrent", unsafe { cuCtxSetCurrent(ctx) })
}

pub fn context_synchronize() -> Status {
    if crate::backend::simulated() {
        return simulator::synchronize_all();
    }
    // SAFETY: no arguments; a context is current (callers bind first).
    unsafe { cuCtxSynchronize() }
}

pub fn mem_alloc(bytes: usize) -> WithStatus<CUdeviceptr> {
    if crate::backend::simulated() {
        return simulator::memory::alloc(bytes);
    }
    let mut p = 0;
    // SAFETY: writes one device pointer.
    let code = unsafe { cuMemAlloc_v2(&mut p, bytes) };
    (code, p)
}

/// A status with the value the call produced (valid only on success).
pub type WithStatus<T> = (Status, T);

pub fn mem_free(ptr: CUdeviceptr) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::free(ptr);
    }
    // SAFETY: `ptr` came from `mem_alloc` and is freed once (callers own it).
    unsafe { cuMemFree_v2(ptr) }
}

pub fn mem_info() -> Result<(usize, usize), DriverError> {
    if crate::backend::simulated() {
        return Ok(simulator::memory::info());
    }
    let (mut free, mut total) = (0, 0);
    // SAFETY: writes two sizes.
    check("cuMemGetInfo", unsafe {
        cuMemGetInfo_v2(&mut free, &mut total)
    })?;
    Ok((free, total))
}

/// `CU_MEMHOSTALLOC_DEVICEMAP`: map the allocation into the device's address space.
const HOST_ALLOC_DEVICE_MAP: c_uint = 2;

/// Allocates `bytes` of page-locked host memory, mapped into the current
/// context's device address space when `mapped`.
pub fn host_alloc(bytes: usize, mapped: bool) -> WithStatus<*mut c_void> {
    if crate::backend::simulated() {
        return simulator::memory::host_alloc(bytes);
    }
    let mut p = ptr::null_mut();
    let flags = if mapped { HOST_ALLOC_DEVICE_MAP } else { 0 };
    // SAFETY: writes one pointer.
    let code = unsafe { cuMemHostAlloc(&mut p, bytes, flags) };
    (code, p)
}

/// The device address of mapped page-locked memory at `ptr`.
pub fn host_device_pointer(ptr: *mut c_void) -> WithStatus<CUdeviceptr> {
    if crate::backend::simulated() {
        return simulator::memory::host_device_pointer(ptr);
    }
    let mut d = 0;
    // SAFETY: writes one address; the driver checks `ptr` (flags must be 0).
    let code = unsafe { cuMemHostGetDevicePointer_v2(&mut d, ptr, 0) };
    (code, d)
}

/// # Safety
/// `ptr` came from `host_alloc` and no copy still uses it.
pub unsafe fn host_free(ptr: *mut c_void) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::host_free(ptr);
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuMemFreeHost(ptr) }
}

/// # Safety
/// `dst..dst+bytes` is device memory that stays allocated until the stream reaches the memset.
pub unsafe fn memset_async(dst: CUdeviceptr, value: u8, bytes: usize, stream: CUstream) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::memset(dst, value, bytes, stream);
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuMemsetD8Async(dst, value, bytes, stream) }
}

/// # Safety
/// `src` is readable for `bytes` until the copy completes; `dst` is device memory of `bytes`.
pub unsafe fn memcpy_htod_async(
    dst: CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: CUstream,
) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::copy_to_device(dst, src.cast(), bytes, stream);
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuMemcpyHtoDAsync_v2(dst, src, bytes, stream) }
}

/// # Safety
/// `dst` is writable for `bytes` and untouched until the copy completes; `src` is device memory.
pub unsafe fn memcpy_dtoh_async(
    dst: *mut c_void,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::copy(dst.cast(), src, bytes, stream);
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuMemcpyDtoHAsync_v2(dst, src, bytes, stream) }
}

/// # Safety
/// Both ranges are device memory of `bytes` that stays allocated until the copy completes.
pub unsafe fn memcpy_dtod_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
) -> Status {
    if crate::backend::simulated() {
        return simulator::memory::copy(dst as *mut u8, src, bytes, stream);
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuMemcpyDtoDAsync_v2(dst, src, bytes, stream) }
}

/// Whether host memory at `ptr` is page-locked (pinned or registered with the driver).
pub fn is_page_locked(ptr: *const c_void) -> bool {
    if crate::backend::simulated() {
        return simulator::memory::is_pinned(ptr.cast());
    }
    const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
    const CU_MEMORYTYPE_HOST: c_uint = 1;
    let mut kind: c_uint = 0;
    // SAFETY: writes one unsigned int; pageable memory makes the call fail,
    // which reads as "not page-locked".
    let code = unsafe {
        cuPointerGetAttribute(
            (&mut kind as *mut c_uint).cast(),
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr as CUdeviceptr,
        )
    };
    code == SUCCESS && kind == CU_MEMORYTYPE_HOST
}

pub fn stream_create(flags: u32, priority: i32) -> Result<CUstream, DriverError> {
    if crate::backend::simulated() {
        let _ = (flags, priority);
        return Ok(simulator::stream::create());
    }
    let mut s = ptr::null_mut();
    // SAFETY: writes one stream handle.
    check("cuStreamCreateWithPriority", unsafe {
        cuStreamCreateWithPriority(&mut s, flags, priority)
    })?;
    Ok(s)
}

/// The (least, greatest) stream priorities of the current context: numerically,
/// greatest < least (lower numbers run first).
pub fn stream_priority_range() -> Result<(i32, i32), DriverError> {
    if crate::backend::simulated() {
        return Ok((0, -5));
    }
    let (mut least, mut greatest) = (0, 0);
    // SAFETY: writes two ints; a context is current (callers bind first).
    check("cuCtxGetStreamPriorityRange", unsafe {
        cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
    })?;
    Ok((least, greatest))
}

/// # Safety
/// `function` must be safe to call once with `user_data` on a driver thread,
/// and must not call into CUDA.
pub unsafe fn launch_host_function(
    stream: CUstream,
    function: HostFunction,
    user_data: *mut c_void,
) -> Status {
    if crate::backend::simulated() {
        let data = user_data as usize;
        return simulator::stream::enqueue(
            stream,
            Box::new(move || {
                // SAFETY: forwarded from the caller.
                unsafe { function(data as *mut c_void) };
                Ok(())
            }),
        );
    }
    // SAFETY: forwarded to the caller.
    unsafe { cuLaunchHostFunc(stream, function, user_data) }
}

pub fn stream_destroy(stream: CUstream) -> Status {
    if crate::backend::simulated() {
        return simulator::stream::destroy(stream);
    }
    // SAFETY: `stream` was created by `stream_create` and is destroyed once.
    unsafe { cuStreamDestroy_v2(stream) }
}

pub fn stream_synchronize(stream: CUstream) -> Status {
    if crate::backend::simulated() {
        return simulator::stream::synchronize(stream);
    }
    // SAFETY: `stream` is a live stream handle or a default-stream constant.
    unsafe { cuStreamSynchronize(stream) }
}

pub fn stream_query(stream: CUstream) -> Status {
    if crate::backend::simulated() {
        return simulator::stream::query(stream);
    }
    // SAFETY: as `stream_synchronize`.
    unsafe { cuStreamQuery(stream) }
}

pub fn stream_wait_event(stream: CUstream, event: CUevent) -> Status {
    if crate::backend::simulated() {
        return simulator::event::stream_wait(stream, event);
    }
    // SAFETY: both handles are live.
    unsafe { cuStreamWaitEvent(stream, event, 0) }
}

pub fn event_create(flags: u32) -> Result<CUevent, DriverError> {
    if crate::backend::simulated() {
        let _ = flags;
        return Ok(simulator::event::create());
    }
    let mut e = ptr::null_mut();
    // SAFETY: writes one event handle.
    check("cuEventCreate", unsafe { cuEventCreate(&mut e, flags) })?;
    Ok(e)
}

pub fn event_destroy(event: CUevent) -> Status {
    if crate::backend::simulated() {
        return simulator::event::destroy(event);
    }
    // SAFETY: `event` was created by `event_create` and is destroyed once.
    unsafe { cuEventDestroy_v2(event) }
}

pub fn event_record(event: CUevent, stream: CUstream) -> Status {
    if crate::backend::simulated() {
        return simulator::event::record(event, stream);
    }
    // SAFETY: both handles are live.
    unsafe { cuEventRecord(event, stream) }
}

pub fn event_synchronize(event: CUevent) -> Status {
    if crate::backend::simulated() {
        return simulator::event::synchronize(event);
    }
    // SAFETY: `event` is live.
    unsafe { cuEventSynchronize(event) }
}

pub fn event_query(event: CUevent) -> Status {
    if crate::backend::simulated() {
        return simulator::event::query(event);
    }
    // SAFETY: `event` is live.
    unsafe { cuEventQuery(event) }
}

pub fn event_elapsed_ms(start: CUevent, end: CUevent) -> WithStatus<f32> {
    if crate::backend::simulated() {
        return simulator::event::elapsed_ms(start, end);
    }
    let mut ms = 0.0;
    // SAFETY: both events are live; writes one float.
    let code = unsafe { cuEventElapsedTime(&mut ms, start, end) };
    (code, ms)
}

/// Loads PTX text; on failure returns the JIT compiler's log too.
pub fn module_load_ptx(ptx: &CStr) -> Result<CUmodule, (DriverError, String)> {
    if crate::backend::simulated() {
        let _ = ptx;
        return Ok(std::ptr::NonNull::dangling().as_ptr());
    }
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let mut module = ptr::null_mut();
    // SAFETY: `ptx` is NUL-terminated; the option arrays have equal length and
    // the log buffer outlives the call.
    let code = unsafe {
        cuModuleLoadDataEx(
            &mut module,
            ptx.as_ptr().cast(),
            options.len() as c_uint,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    check("cuModuleLoadDataEx", code)
        .map(|()| module)
        .map_err(|e| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            (e, String::from_utf8_lossy(&log[..end]).trim().to_string())
        })
}

pub fn module_function(module: CUmodule, name: &CStr) -> Result<CUfunction, DriverError> {
    if crate::backend::simulated() {
        let _ = (module, name);
        return Ok(std::ptr::NonNull::dangling().as_ptr());
    }
    let mut f = ptr::null_mut();
    // SAFETY: `module` is loaded; `name` is NUL-terminated.
    check("cuModuleGetFunction", unsafe {
        cuModuleGetFunction(&mut f, module, name.as_ptr())
    })?;
    Ok(f)
}

pub fn function_attribute(
    f: CUfunction,
    attribute: CUfunction_attribute,
) -> Result<i32, DriverError> {
    if crate::backend::simulated() {
        return Ok(match attribute {
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => 48 * 1024,
            _ => 0,
        });
    }
    let mut v = 0;
    // SAFETY: `f` is a live function; writes one int.
    check("cuFuncGetAttribute", unsafe {
        cuFuncGetAttribute(&mut v, attribute, f)
    })?;
    Ok(v)
}

pub fn set_function_attribute(
    f: CUfunction,
    attribute: CUfunction_attribute,
    value: i32,
) -> Result<(), DriverError> {
    if crate::backend::simulated() {
        return Ok(());
    }
    // SAFETY: `f` is a live function.
    check("cuFuncSetAttribute", unsafe {
        cuFuncSetAttribute(f, attribute, value)
    })
}

/// # Safety
/// `params` holds one pointer per kernel parameter, each to a value of the
/// parameter's type, alive for the call; every pointer argument in them refers
/// to device memory that stays valid until the kernel completes.
pub unsafe fn launch(
    f: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    stream: CUstream,
    params: &mut [*mut c_void],
) -> Status {
    // SAFETY: forwarded to the caller.
    unsafe {
        cuLaunchKernel(
            f,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared_bytes,
            stream,
            params.as_mut_ptr(),
            ptr::null_mut(),
        )
    }
}
