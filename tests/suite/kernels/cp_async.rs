//! `cp.async` rings (`gpu_device::cp_async`): rows moved through a 3-stage
//! ring land whole, with the copies' tails zero-filled, and the misuses the
//! ring refuses at run time (a misaligned source, a fill too far ahead, a
//! wait with nothing filled, a chunk longer than 16 bytes, too little
//! shared memory, threads of one block making the ring differently) are
//! reports naming the misuse. Reading a stage before its
//! wait, or copying into a stage another fill holds, does not compile: the
//! `tests/ui/device_api/cp_async_*.rs` cases. Runs on the simulator and on a GPU of
//! compute capability 8.0 or later.

use crate::common;

use common::faults::{failure, in_own_simulator_process, next_device};
use gpu_runtime::{launch, DeviceBuffer, Stream, BACKEND_ENV};
use gpu_test_kernels::cp_async::{
    matrix_misuse, matrix_tile, ring_misuse, ring_rows, CHUNKS_TOO_MANY, CHUNKS_WRONG_BLOCK,
    CHUNK_PAST_OWN, CHUNK_TOO_LONG, FILL_TOO_FAR, MATRIX_COLS_PAST_LD, MATRIX_MISALIGNED,
    MATRIX_ODD_LD, MATRIX_PAST_THE_SOURCE, MISALIGNED_SOURCE, RING_STEPS, WAIT_WITHOUT_FILL,
};
use gpu_test_kernels::cp_async::{
    ring_made_differently, RING_AGREES, RING_KIND_DIFFERS, RING_ROWS_DIFFER, RING_STAGES_DIFFER,
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

/// Tiles copied through `CpAsyncSource::matrix` and `StageFill::chunks`
/// land as the matrix holds them: chunks cut at the last column, rows and
/// chunks outside the matrix zero (read from nowhere: the source ends with
/// the matrix's last element), the padding between rows never copied.
#[test]
fn matrix_tiles_land_with_zeros_outside_the_matrix() {
    let stream = Stream::new().unwrap();
    // (rows, cols, ld, row0, col0): whole; cut columns (21 of a padded
    // 24); a tile past the last row and column; one past the matrix; an
    // empty matrix.
    let cases = [
        (16, 64, 64, 0, 0),
        (20, 21, 24, 2, 8),
        (5, 70, 72, 3, 64),
        (5, 70, 72, 5, 72),
        (0, 0, 8, 0, 0),
    ];
    for (rows, cols, ld, row0, col0) in cases {
        // Padding NaN-like 0xffff; the source ends with the last row's
        // last column.
        let len = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
        let x: Vec<u16> = (0..len)
            .map(|i| {
                if i % ld < cols {
                    (i % 60_000) as u16 + 1
                } else {
                    0xffff
                }
            })
            .collect();
        let mut dx = DeviceBuffer::zeroed_on(len.max(1), &stream).unwrap();
        if len > 0 {
            dx.slice_mut(0..len)
                .unwrap()
                .copy_from_host_sync(&x, &stream)
                .unwrap();
        }
        let src = dx.slice(0..len).unwrap();
        let mut out = DeviceBuffer::<[u16; 16]>::zeroed_on(64, &stream).unwrap();
        launch!(matrix_tile[1, 64, stream, 2 * 16 * 128](
            src, rows, cols, ld, row0, col0, &mut out
        ))
        .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for (t, seen) in got.iter().enumerate() {
            for (e, &value) in seen.iter().enumerate() {
                let (r, c) = ((16 * t + e) / 64, (16 * t + e) % 64);
                let (row, col) = (row0 + r, col0 + c);
                let want = if row < rows && col < cols {
                    x[row * ld + col]
                } else {
                    0
                };
                assert_eq!(
                    value, want,
                    "{rows} × {cols} (ld {ld}) from ({row0}, {col0}): element ({r}, {c})"
                );
            }
        }
    }
}

/// A matrix that `cp.async` could not copy chunk by chunk, or chunks that
/// are not the thread's, are reports naming the misuse before any copy.
#[test]
fn matrix_misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let matrix = "does not fit the source of";
    let cases = [
        (MATRIX_MISALIGNED, "a 2 × 8 matrix with rows 8 elements apart does not fit the source of 63 elements"),
        (MATRIX_ODD_LD, "a 2 × 4 matrix with rows 12 elements apart"),
        (MATRIX_COLS_PAST_LD, "a 2 × 16 matrix with rows 8 elements apart"),
        (MATRIX_PAST_THE_SOURCE, "a 9 × 8 matrix with rows 8 elements apart"),
        (CHUNKS_WRONG_BLOCK, "StageFill::chunks: 1 chunks for each of 64 threads do not fit a stage of 4 rows of 8 chunks filled by a block of 32 threads"),
        (CHUNKS_TOO_MANY, "StageFill::chunks: 2 chunks for each of 32 threads"),
        (CHUNK_PAST_OWN, "OwnChunks: chunk 1 is not one of this thread's 1"),
    ];
    for (which, expected) in cases {
        let stream = next_device();
        let mut dx = DeviceBuffer::<u16>::zeroed_on(64, &stream).unwrap();
        dx.copy_from_host_sync(&[1; 64], &stream).unwrap();
        let mut out = DeviceBuffer::<u16>::zeroed_on(32, &stream).unwrap();
        launch!(matrix_misuse[1, 32, stream, 3 * 512](&dx, which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("matrix_misuse") && message.contains(expected),
            "misuse {which}: {message}"
        );
        if which < CHUNKS_WRONG_BLOCK {
            assert!(message.contains(matrix), "misuse {which}: {message}");
        }
    }
}

/// Threads of one block that make the ring over the same memory with other
/// stage rows, another constructor or another stage count (chosen by their
/// index) would disagree on which stage is filled and which read: the
/// ring's construction compares every thread's with thread 0's and refuses
/// the difference, naming both. On the simulator here, each on a device of
/// its own; on a GPU the same kernels trap (`ring_made_differently` with
/// these `which`, a launch failure).
#[test]
fn rings_made_differently_by_threads_of_one_block_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let cases = [
        (RING_ROWS_DIFFER, "thread 1 of the block made the ring as 3 stages of 2 rows of 2-byte elements, made by CpAsyncRing::new, but thread 0 as 3 stages of 1 rows of 2-byte elements, made by CpAsyncRing::new"),
        (RING_KIND_DIFFERS, "thread 16 of the block made the ring as 3 stages of 1 rows of 2-byte elements, made by CpAsyncRing::with_async_reads, but thread 0 as 3 stages of 1 rows of 2-byte elements, made by CpAsyncRing::new"),
        (RING_STAGES_DIFFER, "thread 1 of the block made the ring as 2 stages of 1 rows of 2-byte elements, made by CpAsyncRing::new, but thread 0 as 3 stages of 1 rows"),
    ];
    for (which, expected) in cases {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
        launch!(ring_made_differently[1, 32, stream, 3 * 256](which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("ring_made_differently") && message.contains(expected),
            "case {which}: {message}"
        );
    }
    // The same kernel with every thread's ring alike runs.
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(ring_made_differently[1, 32, stream, 3 * 256](RING_AGREES, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 32]);
}

/// The ring made alike by every thread runs on a GPU as on the simulator
/// (the construction's two barriers and its record in stage 0 before the
/// first fill).
#[test]
fn a_ring_made_alike_by_every_thread_runs() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(ring_made_differently[2, 32, stream, 3 * 256](RING_AGREES, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 64]);
}

/// Threads making the ring differently fail the launch on whatever device
/// runs the suite: a trap on a GPU (the check is the ring's, on every
/// target), a report on the simulator.
#[test]
fn a_ring_made_differently_fails_the_launch() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(ring_made_differently[1, 32, stream, 3 * 256](RING_KIND_DIFFERS, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(message.starts_with("ring_made_differently"), "{message}");
}
