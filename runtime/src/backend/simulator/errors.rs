//! The simulator's failures, as the CUDA driver reports its own.

use super::super::{status, DriverError};

/// A simulated kernel failure, as the driver reports a failed launch.
pub(crate) fn launch_failed(call: &'static str, message: String) -> DriverError {
    DriverError {
        call,
        code: status::LAUNCH_FAILED,
        name: "CUDA_ERROR_LAUNCH_FAILED (simulated)".into(),
        description: message,
    }
}

/// An argument the simulator refuses, as the driver's `CUDA_ERROR_INVALID_VALUE`.
pub(crate) fn invalid_value(call: &'static str, description: String) -> DriverError {
    DriverError {
        call,
        code: status::INVALID_VALUE,
        name: "CUDA_ERROR_INVALID_VALUE".into(),
        description,
    }
}

/// A handle of another device than the call acts on, as the driver's
/// `CUDA_ERROR_INVALID_HANDLE`.
pub(crate) fn invalid_handle(call: &'static str, description: String) -> DriverError {
    DriverError {
        call,
        code: status::INVALID_HANDLE,
        name: "CUDA_ERROR_INVALID_HANDLE".into(),
        description,
    }
}

/// A stream-capture failure, as the driver's `CUDA_ERROR_STREAM_CAPTURE_*` codes.
pub(crate) fn capture_error(call: &'static str, code: i32, description: String) -> DriverError {
    let name = match code {
        status::STREAM_CAPTURE_UNSUPPORTED => "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
        status::STREAM_CAPTURE_MERGE => "CUDA_ERROR_STREAM_CAPTURE_MERGE",
        status::STREAM_CAPTURE_UNMATCHED => "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
        status::STREAM_CAPTURE_UNJOINED => "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
        status::STREAM_CAPTURE_ISOLATION => "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
        status::STREAM_CAPTURE_INVALIDATED => "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
        status::STREAM_CAPTURE_IMPLICIT => "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
        _ => "CUDA_ERROR_INVALID_VALUE",
    };
    DriverError {
        call,
        code,
        name: name.into(),
        description,
    }
}

/// A simulated collective refused, as NCCL reports its errors.
pub(crate) fn collective_failed(call: &'static str, description: String) -> DriverError {
    DriverError {
        call,
        code: status::COLLECTIVE_FAILED,
        name: "ncclInvalidUsage (simulated)".into(),
        description,
    }
}
