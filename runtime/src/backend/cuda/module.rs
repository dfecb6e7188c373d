//! Modules and their functions on the CUDA driver: loading PTX (keeping the
//! debug information gpu-builder marked, returning the JIT's error log),
//! looking up entry points and globals, and a function's attributes and
//! occupancy. Each function acts on the context the caller bound.

use super::super::{status, DevicePtr, DriverError, FunctionHandle, FunctionLimits, ModuleHandle};
use super::call::check;
use super::ffi::*;
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::ptr;

pub(super) fn load(device: usize, ptx: &CStr) -> Result<ModuleHandle, (DriverError, String)> {
    let mut log = vec![0u8; 16 * 1024];
    let mut options = vec![JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = vec![log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    // PTX built with debug information (gpu-builder's first line says
    // which): the JIT compiler keeps it, as ptxas's `-lineinfo` and `-g`.
    let text = ptx.to_bytes();
    let marked = |level: &str| text.starts_with(format!("{DEBUG_MARKER}{level}\n").as_bytes());
    if marked("line-tables") || marked("full") {
        options.push(JIT_GENERATE_LINE_INFO);
        values.push(ptr::without_provenance_mut(1));
    }
    if marked("full") {
        options.push(JIT_GENERATE_DEBUG_INFO);
        values.push(ptr::without_provenance_mut(1));
    }
    let mut module = ptr::null_mut();
    // SAFETY: `ptx` is NUL-terminated; the option arrays have equal length
    // (each value an int or the log buffer, as its option takes) and the
    // log buffer outlives the call.
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
        .map(|()| ModuleHandle {
            raw: module as usize,
            device,
        })
        .map_err(|e| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            (e, String::from_utf8_lossy(&log[..end]).trim().to_string())
        })
}

pub(super) fn function(module: ModuleHandle, name: &CStr) -> Result<FunctionHandle, DriverError> {
    let mut f = ptr::null_mut();
    // SAFETY: the module is loaded; `name` is NUL-terminated.
    check("cuModuleGetFunction", unsafe {
        cuModuleGetFunction(&mut f, module.raw as CUmodule, name.as_ptr())
    })?;
    Ok(FunctionHandle {
        raw: f as usize,
        device: module.device,
    })
}

pub(super) fn global(
    module: ModuleHandle,
    name: &CStr,
    bytes: usize,
) -> Result<Option<DevicePtr>, DriverError> {
    let (mut ptr, mut size) = (0, 0);
    // SAFETY: the module is loaded; `name` is NUL-terminated; writes a
    // device pointer and a size.
    let code =
        unsafe { cuModuleGetGlobal_v2(&mut ptr, &mut size, module.raw as CUmodule, name.as_ptr()) };
    if code == status::NOT_FOUND {
        return Ok(None);
    }
    check("cuModuleGetGlobal", code)?;
    if size != bytes {
        return Err(DriverError {
            call: "cuModuleGetGlobal",
            code: status::INVALID_VALUE,
            name: "CUDA_ERROR_INVALID_VALUE".into(),
            description: format!(
                "the module global `{}` has {size} bytes in the PTX, and the host expects {bytes}",
                name.to_string_lossy()
            ),
        });
    }
    Ok(Some(ptr))
}

pub(super) fn function_limits(function: FunctionHandle) -> Result<FunctionLimits, DriverError> {
    let attr = |a: c_int| -> Result<u32, DriverError> {
        let mut v = 0;
        // SAFETY: the function is live; writes one int.
        check("cuFuncGetAttribute", unsafe {
            cuFuncGetAttribute(&mut v, a, function.raw as CUfunction)
        })?;
        Ok(v.max(0) as u32)
    };
    use function_attribute as F;
    Ok(FunctionLimits {
        max_threads_per_block: attr(F::MAX_THREADS_PER_BLOCK)?,
        static_shared_bytes: attr(F::SHARED_SIZE_BYTES)?,
        max_dynamic_shared_bytes: attr(F::MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
        local_bytes_per_thread: attr(F::LOCAL_SIZE_BYTES)?,
        registers_per_thread: attr(F::NUM_REGS)?,
    })
}

pub(super) fn resident_blocks_per_multiprocessor(
    function: FunctionHandle,
    block_threads: u32,
    shared_bytes: u32,
) -> Result<u32, DriverError> {
    let mut blocks = 0;
    // SAFETY: the function is live; writes one int.
    check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
        cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            function.raw as CUfunction,
            block_threads as c_int,
            shared_bytes as usize,
        )
    })?;
    Ok(blocks.max(0) as u32)
}

pub(super) fn set_max_dynamic_shared(
    function: FunctionHandle,
    bytes: u32,
) -> Result<(), DriverError> {
    // SAFETY: the function is live.
    check("cuFuncSetAttribute", unsafe {
        cuFuncSetAttribute(
            function.raw as CUfunction,
            function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as c_int,
        )
    })
}
