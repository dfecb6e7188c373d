//! Events on the CUDA driver: creating them with their flags, recording,
//! waiting, querying and timing. Each function acts on an event of the
//! device whose context the caller bound.

use super::super::{DriverError, EventFlags, EventHandle, StreamHandle};
use super::call::{check, check_done, event, stream};
use super::ffi::*;
use std::ptr;

pub(super) fn create(device: usize, flags: EventFlags) -> Result<EventHandle, DriverError> {
    let bits = (if flags.blocking_sync {
        EVENT_BLOCKING_SYNC
    } else {
        0
    }) | (if flags.timing {
        0
    } else {
        EVENT_DISABLE_TIMING
    }) | (if flags.interprocess {
        EVENT_INTERPROCESS
    } else {
        0
    });
    let mut e = ptr::null_mut();
    // SAFETY: writes one event handle.
    check("cuEventCreate", unsafe { cuEventCreate(&mut e, bits) })?;
    Ok(EventHandle {
        raw: e as usize,
        device,
    })
}

pub(super) fn destroy(e: EventHandle) -> Result<(), DriverError> {
    // SAFETY: the event was created by `create` and is destroyed once.
    check("cuEventDestroy", unsafe { cuEventDestroy_v2(event(e)) })
}

pub(super) fn record(e: EventHandle, on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: both handles are live (the driver refuses an event of
    // another device with CUDA_ERROR_INVALID_HANDLE).
    check("cuEventRecord", unsafe {
        cuEventRecord(event(e), stream(on))
    })
}

pub(super) fn synchronize(e: EventHandle) -> Result<(), DriverError> {
    // SAFETY: the event is live.
    check("cuEventSynchronize", unsafe {
        cuEventSynchronize(event(e))
    })
}

pub(super) fn is_done(e: EventHandle) -> Result<bool, DriverError> {
    // SAFETY: the event is live.
    check_done("cuEventQuery", unsafe { cuEventQuery(event(e)) })
}

pub(super) fn elapsed_ms(start: EventHandle, end: EventHandle) -> Result<f32, DriverError> {
    let mut ms = 0.0;
    // SAFETY: both events are live; writes one float.
    check("cuEventElapsedTime", unsafe {
        cuEventElapsedTime(&mut ms, event(start), event(end))
    })?;
    Ok(ms)
}
