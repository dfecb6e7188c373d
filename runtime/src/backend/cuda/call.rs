//! Turning the driver's status codes into results, and the runtime's handles
//! into the driver's.

use super::super::{DriverError, EventHandle, StreamHandle};
use super::ffi::*;
use std::ffi::{c_char, CStr};
use std::ptr;

fn describe(code: Status) -> (String, String) {
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
#[inline]
pub(super) fn check(call: &'static str, code: Status) -> Result<(), DriverError> {
    if code == SUCCESS {
        Ok(())
    } else {
        Err(failure(call, code))
    }
}

/// The error for a failed `call`.
#[cold]
#[inline(never)]
fn failure(call: &'static str, code: Status) -> DriverError {
    let (name, description) = if code == ERROR_FUNCTION_MISSING {
        (
            "CUDA_ERROR_FUNCTION_MISSING".to_string(),
            format!("this CUDA driver library has no `{call}`, which a newer driver has (CUDA 12.2, R535 or newer): update the NVIDIA driver"),
        )
    } else {
        describe(code)
    };
    DriverError {
        call,
        code,
        name,
        description,
    }
}

/// The error for `code`, a status a call returned (success reads as "no
/// error").
pub(super) fn status_error(call: &'static str, code: Status) -> DriverError {
    check(call, code).err().unwrap_or_else(|| DriverError {
        call,
        code,
        name: "CUDA_SUCCESS".into(),
        description: "no error".into(),
    })
}

/// `Ok(true)` for success, `Ok(false)` for "not ready", an error otherwise.
pub(super) fn check_done(call: &'static str, code: Status) -> Result<bool, DriverError> {
    match code {
        SUCCESS => Ok(true),
        ERROR_NOT_READY => Ok(false),
        code => check(call, code).map(|()| false),
    }
}

/// The driver's stream (its device is the caller's to bind).
pub(super) fn stream(handle: StreamHandle) -> CUstream {
    handle.raw as CUstream
}

/// The driver's event (its device is the caller's to bind).
pub(super) fn event(handle: EventHandle) -> CUevent {
    handle.raw as CUevent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_optional_function_is_an_error_naming_it() {
        let error = check("cuMemPrefetchAsync_v2", ERROR_FUNCTION_MISSING).unwrap_err();
        assert_eq!(error.name, "CUDA_ERROR_FUNCTION_MISSING");
        assert!(
            error.description.contains("`cuMemPrefetchAsync_v2`")
                && error.description.contains("12.2"),
            "{}",
            error.description
        );
    }
}
