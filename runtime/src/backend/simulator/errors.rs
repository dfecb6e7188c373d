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

/// A simulated collective refused, as NCCL reports its errors.
pub(crate) fn collective_failed(call: &'static str, description: String) -> DriverError {
    DriverError {
        call,
        code: status::COLLECTIVE_FAILED,
        name: "ncclInvalidUsage (simulated)".into(),
        description,
    }
}
