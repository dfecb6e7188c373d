//! The simulator's driver, with two devices, given handles of two devices:
//! the default streams are the handle's device's, and a mix CUDA refuses is
//! refused with CUDA's code. The runtime refuses these mixes above the seam
//! already; these tests check the backstop below it.

use super::super::{
    status, Driver, EventFlags, EventHandle, KernelLaunch, StreamHandle, UNIQUE_ID_BYTES,
};
use super::{stream, SimulatorDriver};
use crate::abi::HostBody;
use std::ffi::c_void;
use std::sync::OnceLock;

fn two_devices() -> SimulatorDriver {
    SimulatorDriver {
        devices: OnceLock::from(2),
    }
}

const TIMED: EventFlags = EventFlags {
    blocking_sync: false,
    timing: true,
    interprocess: false,
};

fn event(driver: &SimulatorDriver, device: usize) -> EventHandle {
    driver.event_create(device, TIMED).unwrap()
}

#[test]
fn default_streams_are_those_of_the_handles_device() {
    for device in 0..2 {
        for handle in [
            StreamHandle::legacy(device),
            StreamHandle::per_thread(device),
        ] {
            assert_eq!(stream::device_of(handle), device, "{handle:?}");
        }
    }
    assert_ne!(StreamHandle::legacy(0), StreamHandle::legacy(1));
}

#[test]
fn an_event_is_recorded_only_on_a_stream_of_its_device() {
    let driver = two_devices();
    let (e0, e1) = (event(&driver, 0), event(&driver, 1));
    let s1 = driver.stream_create(1, true, 0).unwrap();
    for on in [s1, StreamHandle::legacy(1), StreamHandle::per_thread(1)] {
        let err = driver.event_record(e0, on).unwrap_err();
        assert_eq!(err.code, status::INVALID_HANDLE, "{err}");
        assert!(err.to_string().contains("device 0"), "{err}");
        driver.event_record(e1, on).unwrap();
    }
    driver.event_record(e0, StreamHandle::legacy(0)).unwrap();
    // Events of two devices have no common clock.
    driver.event_synchronize(e0).unwrap();
    driver.event_synchronize(e1).unwrap();
    let err = driver.event_elapsed_ms(e0, e1).unwrap_err();
    assert_eq!(err.code, status::INVALID_HANDLE, "{err}");
    // A stream may wait for an event of another device.
    driver.stream_wait_event(s1, e0).unwrap();
    driver.stream_synchronize(s1).unwrap();
    driver.stream_destroy(s1).unwrap();
    driver.event_destroy(e0).unwrap();
    driver.event_destroy(e1).unwrap();
}

/// A kernel body that does nothing (the launches below are refused before
/// anything runs).
unsafe fn nothing(_params: *const *mut c_void) {}

#[test]
fn a_kernel_runs_only_on_a_stream_of_its_modules_device() {
    let driver = two_devices();
    let module = driver.module_load(0, c"").unwrap();
    let function = driver.module_function(module, c"k").unwrap();
    assert_eq!(function.device, 0);
    let host = HostBody {
        call: nothing,
        param_sizes: &[],
    };
    for on in [StreamHandle::legacy(1), StreamHandle::per_thread(1)] {
        let launch = KernelLaunch {
            name: "k",
            function,
            host,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            shared_bytes: 0,
            cooperative: false,
            cluster: None,
            params: &mut [],
        };
        // SAFETY: no parameters, and a body that touches nothing.
        let err = unsafe { driver.launch(launch, on) }.unwrap_err();
        assert_eq!(err.code, status::INVALID_HANDLE, "{err}");
        assert!(err.to_string().contains("device 1"), "{err}");
    }
}

#[test]
fn a_graph_instance_runs_only_on_a_stream_of_its_device() {
    let driver = two_devices();
    let (s0, s1) = (
        driver.stream_create(0, true, 0).unwrap(),
        driver.stream_create(1, true, 0).unwrap(),
    );
    driver.stream_begin_capture(s0).unwrap();
    let graph = driver.stream_end_capture(s0).unwrap();
    assert_eq!(graph.device, 0);
    let exec = driver.graph_instantiate(graph).unwrap();
    for on in [s1, StreamHandle::legacy(1)] {
        let err = driver.graph_launch(exec, on).unwrap_err();
        assert_eq!(err.code, status::INVALID_HANDLE, "{err}");
    }
    driver.graph_launch(exec, s0).unwrap();
    driver.stream_synchronize(s0).unwrap();
    driver.graph_exec_destroy(exec).unwrap();
    driver.graph_destroy(graph).unwrap();
    driver.stream_destroy(s0).unwrap();
    driver.stream_destroy(s1).unwrap();
}

#[test]
fn a_copy_on_a_handle_naming_another_device_than_its_streams_is_refused() {
    let driver = two_devices();
    let s1 = driver.stream_create(1, true, 0).unwrap();
    // A stream of device 1 named as device 0's (as a wrong `from_external`
    // would): CUDA, with device 0's context current, refuses the copy.
    let wrong = StreamHandle { device: 0, ..s1 };
    // SAFETY: zero bytes, refused before anything is queued.
    let err = unsafe { driver.memset_async(0, 0, 0, wrong) }.unwrap_err();
    assert_eq!(err.code, status::INVALID_VALUE, "{err}");
    driver.stream_destroy(s1).unwrap();
}

#[test]
fn calls_naming_a_device_the_simulator_lacks_are_refused() {
    let driver = two_devices();
    assert!(driver.stream_create(2, true, 0).is_err());
    assert!(driver.event_create(2, TIMED).is_err());
    assert!(driver.synchronize_device(2).is_err());
    assert!(driver.memory_info(2).is_err());
    assert!(driver.module_load(2, c"").is_err());
    let id = [0u8; UNIQUE_ID_BYTES];
    assert!(driver.comm_init_rank(2, &id, 2, 0).is_err());
}
