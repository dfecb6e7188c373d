//! Tests that force the CPU simulator for their process, so that they run the
//! same on a GPU machine as in CI: the device-side attacks whose launches
//! must fail with a report (on a GPU they are traps that end the CUDA
//! context), and the simulator's race detector (on a GPU,
//! compute-sanitizer's racecheck does its job). Each test that fails a
//! launch runs in a process of its own, with a device for each failure it
//! checks (`common::faults`).

#[path = "../common/mod.rs"]
mod common;

mod device_attacks;
mod race_check;

/// Forces the simulator for this process. Every test calls it before any
/// other runtime call, so no thread reads the environment while it is set.
fn force_simulator() {
    static FORCE: std::sync::Once = std::sync::Once::new();
    FORCE.call_once(|| std::env::set_var(gpu_runtime::BACKEND_ENV, "simulator"));
}
