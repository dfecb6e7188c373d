//! The multi-device tests (`tests/multi_device`) on the CPU simulator with
//! four simulated devices (`GPU_SIM_DEVICES=4`), forced for this binary so
//! that it runs the same on every machine.

mod common;
#[macro_use]
mod multi_device;

use gpu_runtime::{Device, BACKEND_ENV, SIMULATED_DEVICES_ENV};
use std::sync::Once;

/// Forces the simulator with four devices before the runtime's first use.
fn four_simulated_devices(_test: &str) -> bool {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        std::env::set_var(BACKEND_ENV, "simulator");
        std::env::set_var(SIMULATED_DEVICES_ENV, "4");
    });
    assert_eq!(Device::count().unwrap(), 4);
    true
}

multi_device_tests!(four_simulated_devices);
