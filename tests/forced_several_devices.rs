//! The multi-device tests (`tests/multi_device`) on this machine's backend:
//! on a GPU machine with two or more GPUs they run there (peer copies over
//! NVLink or PCIe, NCCL's collectives). Where the simulator runs them, it
//! simulates three devices unless `GPU_SIM_DEVICES` says otherwise (the
//! `forced_two_simulated_devices` and `forced_four_simulated_devices`
//! binaries cover 2 and 4).
//! On a machine with a single GPU, each test runs in a child process on the
//! simulator with two devices instead, and says so: they need two devices.

mod common;
#[macro_use]
mod multi_device;

use gpu_runtime::{
    backend, Backend, Device, UniqueId, BACKEND_ENV, NCCL_LIBRARY_ENV, SIMULATED_DEVICES_ENV,
};
use std::process::Command;
use std::sync::Once;

/// Whether `test` runs in this process; with a single GPU, runs it in a child
/// process on the simulator with two devices, checks it passed, and says so.
fn on_this_machine(test: &str) -> bool {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        if std::env::var_os(SIMULATED_DEVICES_ENV).is_none() {
            // Read by the simulator only.
            std::env::set_var(SIMULATED_DEVICES_ENV, "3");
        }
    });
    if Device::count().unwrap() >= 2 {
        return true;
    }
    assert_eq!(
        backend(),
        Backend::Cuda,
        "the simulator was asked for one device"
    );
    eprintln!("{test}: this machine has one GPU; running it on the simulator with 2 devices");
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--include-ignored", "--nocapture"])
        .env(BACKEND_ENV, "simulator")
        .env(SIMULATED_DEVICES_ENV, "2")
        .status()
        .unwrap();
    assert!(status.success(), "{test} failed on the simulator: {status}");
    false
}

multi_device_tests!(on_this_machine);

/// A missing NCCL is an error naming where it was looked for, never a crash
/// or a link failure (the simulator needs no NCCL at all).
#[test]
fn a_missing_nccl_is_a_clear_error() {
    if std::env::var_os("GPU_MISSING_NCCL_CHILD").is_some() {
        match (backend(), UniqueId::new()) {
            (Backend::Cuda, Err(e)) => {
                let message = e.to_string();
                println!("{message}");
                assert!(
                    message.starts_with("NCCL is not available")
                        && message.contains("/nonexistent/libnccl.so.2")
                        && message.contains(NCCL_LIBRARY_ENV),
                    "{message}"
                );
            }
            (Backend::Cuda, Ok(_)) => panic!("NCCL was loaded from a path that does not exist"),
            (Backend::Simulator, id) => {
                id.expect("the simulator's collectives need no NCCL");
            }
        }
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_missing_nccl_is_a_clear_error", "--nocapture"])
        .env("GPU_MISSING_NCCL_CHILD", "1")
        .env(NCCL_LIBRARY_ENV, "/nonexistent/libnccl.so.2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each backend refuses the other's unique ids with an error that says so,
/// rather than trying to reach an address that is not one.
#[test]
fn an_id_of_the_other_backend_is_refused() {
    use gpu_runtime::Communicator;
    let mut simulated = vec![0u8; 128];
    simulated[..8].copy_from_slice(b"gpu-sim\0");
    let (foreign, says) = match backend() {
        Backend::Cuda => (simulated, "made by a process on the CPU simulator"),
        Backend::Simulator => (vec![2u8; 128], "was not made by the simulator"),
    };
    let id = UniqueId::from_bytes(&foreign).unwrap();
    let err = Communicator::init_rank(&id, 2, 0, Device::get(0).unwrap()).unwrap_err();
    assert!(err.to_string().contains(says), "{err}");
    let short = UniqueId::from_bytes(&[0; 12]).unwrap_err().to_string();
    assert!(short.contains("an id has 128 bytes, not 12"), "{short}");
    let bad_hex = UniqueId::from_hex("xyz").unwrap_err().to_string();
    assert!(
        bad_hex.contains("expected 256 hexadecimal digits"),
        "{bad_hex}"
    );
    let id = UniqueId::from_bytes(&foreign).unwrap();
    assert_eq!(
        UniqueId::from_hex(&format!(" {}\n", id.to_hex())).unwrap(),
        id
    );
}
