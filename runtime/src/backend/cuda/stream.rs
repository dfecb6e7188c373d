//! Streams on the CUDA driver: creating them (blocking or not, with a
//! priority), their properties, waiting for them and for events, and host
//! functions and callbacks queued on them. Each function acts on a stream of
//! the device whose context the caller bound.

use super::super::{CompletionCallback, DriverError, EventHandle, HostFunction, StreamHandle};
use super::call::{check, check_done, event, stream};
use super::ffi::*;
use std::ffi::{c_int, c_uint, c_void};
use std::ptr;

pub(super) fn create(
    device: usize,
    non_blocking: bool,
    priority: i32,
) -> Result<StreamHandle, DriverError> {
    let mut s = ptr::null_mut();
    let flags = if non_blocking { STREAM_NON_BLOCKING } else { 0 };
    // SAFETY: writes one stream handle.
    check("cuStreamCreateWithPriority", unsafe {
        cuStreamCreateWithPriority(&mut s, flags, priority)
    })?;
    Ok(StreamHandle {
        raw: s as usize,
        device,
    })
}

pub(super) fn properties(on: StreamHandle) -> Result<(bool, i32), DriverError> {
    let (mut flags, mut priority): (c_uint, c_int) = (0, 0);
    // SAFETY: a live stream; each call writes one integer.
    unsafe {
        check("cuStreamGetFlags", cuStreamGetFlags(stream(on), &mut flags))?;
        check(
            "cuStreamGetPriority",
            cuStreamGetPriority(stream(on), &mut priority),
        )?;
    }
    Ok((flags & STREAM_NON_BLOCKING != 0, priority))
}

pub(super) fn destroy(on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: the stream was created by `stream_create` and is destroyed once.
    check("cuStreamDestroy", unsafe { cuStreamDestroy_v2(stream(on)) })
}

pub(super) fn synchronize(on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: a live stream handle or a default-stream constant.
    check("cuStreamSynchronize", unsafe {
        cuStreamSynchronize(stream(on))
    })
}

pub(super) fn is_done(on: StreamHandle) -> Result<bool, DriverError> {
    // SAFETY: as `synchronize`.
    check_done("cuStreamQuery", unsafe { cuStreamQuery(stream(on)) })
}

pub(super) fn wait_event(on: StreamHandle, e: EventHandle) -> Result<(), DriverError> {
    // SAFETY: both handles are live; CUDA lets a stream wait for an
    // event of another device.
    check("cuStreamWaitEvent", unsafe {
        cuStreamWaitEvent(stream(on), event(e), 0)
    })
}

/// The current context's least and greatest stream priorities.
pub(super) fn priority_range() -> Result<(i32, i32), DriverError> {
    let (mut least, mut greatest) = (0, 0);
    // SAFETY: writes two ints; the device's context is current.
    check("cuCtxGetStreamPriorityRange", unsafe {
        cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
    })?;
    Ok((least, greatest))
}

/// # Safety
/// As [`Driver::launch_host_function`](super::super::Driver::launch_host_function).
pub(super) unsafe fn launch_host_function(
    on: StreamHandle,
    function: HostFunction,
    user_data: *mut c_void,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller.
    check("cuLaunchHostFunc", unsafe {
        cuLaunchHostFunc(stream(on), function, user_data)
    })
}

/// # Safety
/// As [`Driver::stream_add_callback`](super::super::Driver::stream_add_callback).
pub(super) unsafe fn add_callback(
    on: StreamHandle,
    callback: CompletionCallback,
    user_data: *mut c_void,
) -> Result<(), DriverError> {
    // SAFETY: forwarded to the caller; the signatures are CUDA's
    // `CUstreamCallback` (a raw stream, a status, the user data).
    check("cuStreamAddCallback", unsafe {
        cuStreamAddCallback(stream(on), callback, user_data, 0)
    })
}
