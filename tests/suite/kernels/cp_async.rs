//! `cp.async` rings (`gpu_device::cp_async`): rows moved through a 3-stage
//! ring land whole, with the copies' tails zero-filled, and the misuses the
//! ring refuses at run time (a misaligned source, a fill too far ahead, a
//! wait with nothing filled, a chunk longer than 16 bytes, too little
//! shared memory) are reports naming the misuse. Reading a stage before its
//! wait, or copying into a stage another fill holds, does not compile: the
//! `tests/ui/device_api/cp_async_*.rs` cases. Runs on the simulator and on a GPU of
//! compute capability 8.0 or later.

use crate::common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_runtime::{launch, DeviceBuffer, Error, Stream, BACKEND_ENV};
use gpu_test_kernels::cp_async::{
    ring_misuse, ring_rows, CHUNK_TOO_LONG, FILL_TOO_FAR, MISALIGNED_SOURCE, RING_STEPS,
    WAIT_WITHOUT_FILL,
};

#[test]
fn rows_move_through_the_ring_with_zero_filled_tails() {
    let stream = Stream::new().unwrap();
    let x: Vec<u16> = (0..2 * RING_STEPS as u16 * 64).map(|i| i + 1).collect();
    let mut dx = DeviceBuffer::zeroed_on(x.len(), &stream).unwrap();
    dx.copy_from_host_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<[u16; 2 * RING_STEPS]>::zeroed_on(64, &stream).unwrap();
    // 64: whole rows; 61: a chunk cut to 5 elements; 13: one whole chunk,
    // one cut, six not copied.
    for width in [64usize, 61, 13] {
        launch!(ring_rows[1, 64, stream, 3 * 256](&dx, width, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for (t, seen) in got.iter().enumerate() {
            for step in 0..RING_STEPS {
                for (h, element) in [t, t + 64].into_iter().enumerate() {
                    let (row, col) = (element / 64, element % 64);
                    let want = if col < width {
                        x[(2 * step + row) * 64 + col]
                    } else {
                        0
                    };
                    assert_eq!(
                        seen[2 * step + h],
                        want,
                        "width {width}, thread {t}, step {step}, element ({row}, {col})"
                    );
                }
            }
        }
    }
}

/// The report of the launch on `stream`, which must fail: its message.
fn failure(stream: &Stream) -> String {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => format!("{kernel}: {}", driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// Each misuse is a report naming it, never undefined behaviour or a
/// hang. On the simulator, each on a device of its own (a failed kernel
/// ends its device).
#[test]
fn misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let cases = [
        (MISALIGNED_SOURCE, 384, "StageFill::copy: the source at element 1 is not 16-byte aligned"),
        (FILL_TOO_FAR, 384, "CpAsyncRing::fill: fill 2 would overwrite a stage of the 3 that may still be read (0 waited for)"),
        (WAIT_WITHOUT_FILL, 384, "CpAsyncRing::wait: every filled stage was waited for already"),
        (CHUNK_TOO_LONG, 384, "StageFill::copy: 9 elements from 0 (a chunk holds 8)"),
        (MISALIGNED_SOURCE, 300, "CpAsyncRing::new: 3 stages of 1 rows of 128 bytes need 384 bytes of dynamic shared memory (16-byte aligned); the launch gave 300"),
    ];
    for (which, bytes, expected) in cases {
        let stream = next_device();
        let x = vec![1u16; 64];
        let mut dx = DeviceBuffer::zeroed_on(x.len(), &stream).unwrap();
        dx.copy_from_host_sync(&x, &stream).unwrap();
        let mut out = DeviceBuffer::<u16>::zeroed_on(32, &stream).unwrap();
        launch!(ring_misuse[1, 32, stream, bytes](&dx, which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("ring_misuse") && message.contains(expected),
            "misuse {which}: {message}"
        );
    }
}
