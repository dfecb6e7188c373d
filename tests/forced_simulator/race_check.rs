//! The simulator's race detector (`GPU_SIM_RACECHECK`,
//! `gpu_runtime::set_race_check`): each seeded race (shared memory, global
//! memory, across a missing barrier, across warps, a plain write among
//! atomics) fails its launch with a report naming the kernel, both threads,
//! the address and the barrier interval; the same kernel without the race
//! (one `bool` apart) runs clean and computes the right result.
//!
//! The simulator is forced for this binary: the detector is the simulator's
//! (on a GPU, compute-sanitizer's racecheck does this job). A reported race
//! ends its device, as any kernel fault does: each test runs in a process of
//! its own, and runs on a fresh device after each report it checks.

use crate::common;

use common::faults::{in_own_simulator_process, next_device};

use gpu_runtime::{backend, launch, set_race_check, Backend, DeviceBuffer, Error, Stream};
use gpu_test_kernels::races;
use std::sync::{Mutex, MutexGuard};

/// The detector's setting is the process's: tests that change it run one at
/// a time.
static SETTING: Mutex<()> = Mutex::new(());

/// A stream of the simulator, with the detector on while the guard lives;
/// `None` in the test process, which has run the test in a child process.
fn checked() -> Option<(MutexGuard<'static, ()>, Stream)> {
    if !in_own_simulator_process() {
        return None;
    }
    crate::force_simulator();
    assert_eq!(backend(), Backend::Simulator);
    let guard = SETTING.lock().unwrap_or_else(|e| e.into_inner());
    set_race_check(true);
    Some((guard, Stream::new().unwrap()))
}

/// The race report of the kernel that failed on `stream`.
fn race(stream: &Stream) -> String {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { driver, .. } => {
            assert!(
                driver.description.starts_with("data race on "),
                "{}",
                driver.description
            );
            driver.description
        }
        other => panic!("expected a data race report, got {other:?}"),
    }
}

#[test]
fn a_write_write_race_on_shared_memory_is_reported() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(races::shared_write_write[1, 64, stream](false, &mut out)).unwrap();
    let report = race(&stream);
    for part in [
        "data race on shared memory in kernel `shared_write_write`: ",
        "thread (1, 0, 0) of block (0, 0, 0) wrote 4 bytes at 0x",
        "(byte 0 of the shared array `__gpu_shared_gpu_test_kernels_",
        "which thread (0, 0, 0) of the same block wrote before",
        "both in barrier interval 0",
    ] {
        assert!(report.contains(part), "`{part}` not in: {report}");
    }
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(races::shared_write_write[1, 64, stream](true, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 64]);
}

#[test]
fn a_missing_barrier_is_reported() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(races::shared_neighbour[1, 128, stream](false, &mut out)).unwrap();
    let report = race(&stream);
    assert!(
        report.contains("thread (1, 0, 0) of block (0, 0, 0) wrote 4 bytes")
            && report.contains("which thread (0, 0, 0) of the same block read before")
            && report.contains("both in barrier interval 0, before the block's first barrier")
            && report.contains("no barrier (sync_threads() or a phase token's sync())"),
        "{report}"
    );
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(races::shared_neighbour[1, 128, stream](true, &mut out)).unwrap();
    let expected: Vec<u32> = (0..128).map(|t| (t + 1) % 128).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
}

#[test]
fn blocks_writing_one_element_of_global_memory_are_reported() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    launch!(races::global_block_results[16, 32, stream](false, &mut out)).unwrap();
    let report = race(&stream);
    for part in [
        "data race on global memory in kernel `global_block_results`: ",
        "wrote 4 bytes at 0x",
        "(byte 0 of the 64-byte device allocation at 0x",
        "threads of different blocks are not ordered within a launch",
    ] {
        assert!(report.contains(part), "`{part}` not in: {report}");
    }
    assert!(
        report.matches("thread (0, 0, 0) of block (").count() == 2,
        "both threads named: {report}"
    );
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    launch!(races::global_block_results[16, 32, stream](true, &mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (1..=16).collect::<Vec<u32>>()
    );
}

#[test]
fn threads_of_one_block_are_ordered_only_by_a_barrier() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(races::global_same_block[4, 64, stream](false, &mut out)).unwrap();
    let report = race(&stream);
    assert!(
        report.contains("thread (1, 0, 0) of block (")
            && report.contains("wrote 4 bytes")
            && report.contains("which thread (0, 0, 0) of the same block wrote before"),
        "{report}"
    );
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(races::global_same_block[4, 64, stream](true, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![2; 4]);
}

#[test]
fn a_warp_operation_orders_its_lanes_and_no_others() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    // Lane 1 reads lane 0's write after a shuffle both took part in.
    launch!(races::warp_handoff[1, 64, stream](true, 1, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap()[1], 42);
    // Without the shuffle; and a reader in the other warp.
    for (shuffle, reader) in [(false, 1u32), (true, 33)] {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
        launch!(races::warp_handoff[1, 64, stream](shuffle, reader, &mut out)).unwrap();
        let report = race(&stream);
        assert!(
            report.contains(&format!(
                "thread ({reader}, 0, 0) of block (0, 0, 0) read 4 bytes"
            )) && report.contains("which thread (0, 0, 0) of the same block wrote before")
                && report.contains("or warp operation of both threads"),
            "shuffle {shuffle}, reader {reader}: {report}"
        );
    }
}

#[test]
fn atomics_do_not_race_with_atomics_but_a_plain_write_does() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(races::shared_counter[1, 64, stream](false, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![64; 64]);
    launch!(races::shared_counter[1, 64, stream](true, &mut out)).unwrap();
    let report = race(&stream);
    assert!(
        report.contains("updated atomically") && report.contains("wrote"),
        "{report}"
    );
}

/// Off, the detector costs the racy kernel nothing and reports nothing
/// (the kernel's result is then whatever its race gives).
#[test]
fn with_the_detector_off_nothing_is_reported() {
    let Some((_setting, stream)) = checked() else {
        return;
    };
    set_race_check(false);
    let mut out = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    launch!(races::global_block_results[16, 32, stream](false, &mut out)).unwrap();
    let result = stream.synchronize();
    set_race_check(true);
    result.unwrap();
}
