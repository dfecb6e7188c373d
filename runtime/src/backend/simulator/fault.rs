//! Sticky faults: after a kernel fault, the simulated device refuses every
//! later call, as a CUDA context does.
//!
//! On a GPU a kernel that traps (a panic, an out-of-bounds index) or touches
//! an illegal address ends its context: every later call on it returns the
//! same error, on every stream, and queued work no longer runs (host
//! functions are not called; stream callbacks are, with the error). Other
//! devices' contexts go on. The simulator keeps the same rule per simulated
//! device: the first failure of work on one of its streams (a kernel, a
//! replayed graph, a stream wait the watchdog gave up on) is recorded here;
//! from then on the device's calls return it ([`check`]) and its streams skip
//! their queued work, except markers and completion callbacks.

use super::super::{status, DriverError, MAX_DEVICES};
use std::sync::OnceLock;

/// Each device's first failure, once it has had one.
static FAULTS: [OnceLock<String>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

/// Records a failure of work on `device`; a device keeps its first one.
pub(crate) fn record(device: usize, message: String) {
    let _ = FAULTS[device].set(message);
}

/// Whether `device` has had a fault.
#[inline]
pub(crate) fn is_faulted(device: usize) -> bool {
    FAULTS[device].get().is_some()
}

/// The error a call on a faulted device returns: the fault's, under the
/// name of `call`.
pub(crate) fn error(device: usize, call: &'static str) -> Option<DriverError> {
    FAULTS[device].get().map(|message| DriverError {
        call,
        code: status::LAUNCH_FAILED,
        name: "CUDA_ERROR_LAUNCH_FAILED (simulated)".into(),
        description: message.clone(),
    })
}

/// An error if `device` has had a fault: what CUDA returns for any call on
/// a context that a kernel fault ended.
#[inline]
pub(crate) fn check(device: usize, call: &'static str) -> Result<(), DriverError> {
    match error(device, call) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_keeps_its_first_fault_and_others_go_on() {
        let device = MAX_DEVICES - 2; // no other test uses it
        assert!(check(device, "cuStreamSynchronize").is_ok());
        record(
            device,
            "kernel `k`, block (0, 0, 0), thread (1, 0, 0): panicked".into(),
        );
        record(device, "a later failure".into());
        let e = check(device, "cuMemcpyDtoHAsync").unwrap_err();
        assert_eq!(e.call, "cuMemcpyDtoHAsync");
        assert_eq!(e.code, status::LAUNCH_FAILED);
        assert!(e.is_kernel_fault());
        assert_eq!(
            e.description,
            "kernel `k`, block (0, 0, 0), thread (1, 0, 0): panicked"
        );
        assert!(check(device - 1, "cuStreamSynchronize").is_ok());
    }
}
