//! Grid sync in cooperative launches (`#[kernel(cooperative)]`, a `Grid`
//! parameter; Numba's `cuda.cg.this_grid().sync()`): two-phase kernels that
//! need the barrier across blocks give the right answer, at grid sizes up
//! to what the device keeps resident; a grid larger than that is refused
//! before it launches, naming the kernel, the grid and the limit; a
//! cooperative kernel is not captured into a graph. On the simulator where
//! there is no GPU, on the GPU otherwise. (A grid sync that one block
//! skips hangs a GPU: that case runs on the simulator only, and says so.)

use crate::common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_runtime::{backend, launch, Backend, Device, DeviceBuffer, Error, Stream};
use gpu_test_kernels::grid_sync::{grid_rounds, grid_sync_skipped_by_a_block, grid_total};

/// The most blocks of 128 threads the device keeps resident on the
/// simulator's and a GPU's terms (at least what these kernels need: they
/// use few registers and little shared memory).
fn resident_blocks_of_128() -> usize {
    Device::get(0).unwrap().limits().multiprocessor_count as usize * 16
}

#[test]
fn every_block_sees_every_other_blocks_sum_after_the_grid_sync() {
    let stream = Stream::new().unwrap();
    for blocks in [1usize, 2, 7, resident_blocks_of_128().min(64)] {
        let n = blocks * 128 - 5;
        let input: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
            .collect();
        let want = input.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let mut total = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
        launch!(grid_total[blocks, 128, stream](&din, &mut total, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        assert!(
            got.iter().all(|&g| g == want),
            "{blocks} blocks: expected {want} everywhere, got {:?}",
            &got[..got.len().min(8)]
        );
    }
}

#[test]
fn repeated_grid_syncs_order_every_round() {
    let stream = Stream::new().unwrap();
    let blocks = resident_blocks_of_128().min(24);
    let n = blocks * 128;
    let mut marks = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
    let mut wrong = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let rounds = 5u32;
    launch!(grid_rounds[blocks, 128, stream](&mut marks, &mut wrong, rounds)).unwrap();
    assert_eq!(wrong.copy_to_host_sync(&stream).unwrap(), [0]);
    let got = marks.copy_to_host_sync(&stream).unwrap();
    assert!(got.iter().all(|&m| m == rounds), "{:?}", &got[..8]);
}

/// The attack: a grid larger than the device keeps resident would wait
/// forever at its first grid sync (blocks that never start). The launcher
/// refuses it before launching.
#[test]
fn a_grid_larger_than_the_device_keeps_resident_is_refused() {
    let stream = Stream::new().unwrap();
    let limit = Device::get(0).unwrap().limits().multiprocessor_count as usize * 32;
    let blocks = limit * 4 + 1;
    let din = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut total = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let err = launch!(grid_total[blocks, 128, stream](&din, &mut total, &mut out)).unwrap_err();
    match &err {
        Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(kernel, &"grid_total");
            assert!(
                reason.contains(&format!("the grid ({blocks}, 1, 1) has {blocks} blocks"))
                    && reason.contains("keeps at most")
                    && reason.contains("per multiprocessor"),
                "{reason}"
            );
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // Nothing was queued: the stream is still usable.
    stream.synchronize().unwrap();
}

#[test]
fn a_cooperative_kernel_is_not_captured_into_a_graph() {
    let stream = Stream::new().unwrap();
    let din = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    let mut total = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    stream.synchronize().unwrap();
    let err = gpu_runtime::kernel_args!(grid_total[1, 128](&din, &mut total, &mut out))
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidLaunch { kernel: "grid_total", reason } if reason.contains("not captured into a graph")),
        "{err:?}"
    );
    // A launch in a stream capture: refused too (the capture then fails).
    let mut refused = None;
    let captured = stream.capture(|s| {
        refused = Some(
            launch!(grid_total[1, 128, s](&din, &mut total, &mut out))
                .map(|_| ())
                .unwrap_err(),
        );
        Ok(())
    });
    let refused = refused.expect("the capture ran its work");
    assert!(
        matches!(&refused, Error::InvalidLaunch { kernel: "grid_total", reason } if reason.contains("not captured into a graph")),
        "{refused:?}"
    );
    drop(captured);
}

/// A block that returns before the grid sync the others wait at: a hang on
/// a GPU (not run there), a report naming the grid sync on the simulator.
#[test]
fn a_grid_sync_skipped_by_a_block_fails_the_launch_on_the_simulator() {
    if backend() != Backend::Simulator {
        println!("a_grid_sync_skipped_by_a_block_fails_the_launch_on_the_simulator: not run: on a GPU the grid hangs");
        return;
    }
    // The failure ends its device: a process and a device of its own, so
    // that the other tests of this binary keep theirs.
    if !in_own_simulator_process() {
        return;
    }
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    launch!(grid_sync_skipped_by_a_block[4, 64, stream](&mut out)).unwrap();
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => {
            assert_eq!(kernel, "grid_sync_skipped_by_a_block");
            assert!(
                driver
                    .description
                    .contains("Grid::sync() is not reached by every block"),
                "{}",
                driver.description
            );
        }
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}
