//! The CPU simulator reports what a GPU would hide: an out-of-bounds access,
//! a `sync_threads` not reached by every thread, a shuffle with exited lanes,
//! panics, a block that makes no progress and a stack overflow, each naming
//! the kernel, block and thread; none hangs or crashes the process. A thread
//! spinning on a flag another thread of its block sets finishes.
//!
//! The simulator is forced for this binary, so it runs the same on a GPU
//! machine (scripts/gpu-bundle.sh) as in CI. Its watchdog is set to
//! `TIMEOUT_SECS` here, so that stalls are reported quickly.
//!
//! A failed launch ends its device for the rest of the process, as a kernel
//! fault ends a CUDA context: each test that fails a launch runs in a
//! process of its own ([`in_own_simulator_process`]), with a device for each
//! failure it checks ([`next_device`]).

mod common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_runtime::{
    backend, launch, Backend, DeviceBuffer, Error, Stream, BACKEND_ENV, SIM_STACK_BYTES_ENV,
    SIM_TIMEOUT_ENV,
};
use gpu_test_kernels as testing;
use std::process::Command;
use std::sync::{mpsc, Once};
use std::time::{Duration, Instant};

/// The watchdog's limit in this binary.
const TIMEOUT_SECS: u64 = 2;

fn simulator() -> Stream {
    static FORCE: Once = Once::new();
    // Every test calls this first, so no thread reads the environment while
    // it is set.
    FORCE.call_once(|| {
        std::env::set_var(BACKEND_ENV, "simulator");
        std::env::set_var(SIM_TIMEOUT_ENV, TIMEOUT_SECS.to_string());
    });
    assert_eq!(backend(), Backend::Simulator);
    Stream::new().unwrap()
}

/// Runs `attempt` on a thread of its own and returns its result; fails the
/// test if it does not finish within `limit` (a hang, which would otherwise
/// hang the test run), and passes its panic on.
fn within<T: Send + 'static>(limit: Duration, attempt: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = send.send(attempt());
    });
    match receive.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("not finished after {limit:?}: the simulator hangs")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the attempt sends before it ends"),
        },
    }
}

/// Runs the `#[ignore]`d test `test` of this binary in a child process with
/// `env` set; returns whether it passed and its output.
fn child(test: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([
        "--ignored",
        "--exact",
        test,
        "--nocapture",
        "--test-threads=1",
    ]);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status, text)
}

fn failure(stream: &Stream) -> (String, String) {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => (kernel.to_string(), driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

#[test]
fn an_out_of_bounds_read_names_kernel_block_and_thread() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let x = DeviceBuffer::to_device_sync(&[1u32, 2, 3], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::read_at[2, 32, stream](&x, 3, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "read_at");
    assert!(
        message.starts_with("kernel `read_at`, block ("),
        "{message}"
    );
    assert!(
        message.contains("index out of bounds: the len is 3 but the index is 3"),
        "{message}"
    );
    // The fault is sticky, as on a GPU: the device refuses every later
    // call, an in-bounds launch too, with the same report.
    let refused = |what: &str, result: Result<(), Error>| match result {
        Err(Error::KernelFailed { kernel, driver, .. }) => {
            assert_eq!(kernel, "read_at", "{what}");
            assert_eq!(driver.description, message, "{what}");
        }
        other => panic!("{what}: expected the fault, got {other:?}"),
    };
    refused(
        "a launch",
        launch!(testing::read_at[2, 32, stream](&x, 2, &mut out)),
    );
    refused("a copy", out.copy_to_host_sync(&stream).map(drop));
    refused("a synchronize", stream.synchronize());
    // Another device goes on, as another CUDA context does.
    let other = next_device();
    let x = DeviceBuffer::to_device_sync(&[1u32, 2, 3], &other).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &other).unwrap();
    launch!(testing::read_at[2, 32, other](&x, 2, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&other).unwrap(), vec![3; 64]);
}

#[test]
fn a_barrier_not_reached_by_every_thread_is_reported_not_hung_on() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(testing::divergent_barrier[1, 128, stream](0, &mut out)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![1; 128],
        "every thread reaching it passes"
    );
    launch!(testing::divergent_barrier[1, 128, stream](5, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "divergent_barrier");
    assert!(message.contains("block (0, 0, 0)"), "{message}");
    assert!(
        message.contains("sync_threads() is not reached by every thread"),
        "{message}"
    );
}

#[test]
fn a_shuffle_with_exited_lanes_is_reported() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::shuffle_after_exit[1, 64, stream](0, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert_eq!(got[..3], [1, 2, 3]);
    assert_eq!(got[31], 31, "the last lane keeps its own value");
    launch!(testing::shuffle_after_exit[1, 64, stream](3, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(
        message.contains("names lane 0 in its mask, but that thread exited"),
        "{message}"
    );
}

#[test]
fn a_panic_names_its_block_and_thread() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    launch!(testing::panic_at[4, 64, stream](2, 17, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "panic_at");
    assert!(
        message.starts_with("kernel `panic_at`, block (2, 0, 0), thread (17, 0, 0): panicked: thread 17 of block 2 gave up"),
        "{message}"
    );
}

#[test]
fn the_simulated_device_describes_itself() {
    let _stream = simulator();
    let device = gpu_runtime::Device::get(0).unwrap();
    assert_eq!(device.name(), "CPU simulator");
    assert_eq!(device.limits().max_threads_per_block, 1024);
    let (free, total) = device.memory_info().unwrap();
    assert!(free <= total && total >= 1 << 30);
}

#[test]
fn a_thread_spinning_on_a_flag_another_thread_of_its_block_sets_finishes() {
    within(Duration::from_secs(30), || {
        let stream = simulator();
        let mut flags = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
        // Thread 0 spins before the last thread of its block has run at all.
        launch!(testing::spin_on_flag[4, 64, stream](63, &mut flags, &mut out)).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 4 * 64]);
        assert_eq!(flags.copy_to_host_sync(&stream).unwrap(), vec![1; 4]);
    });
}

#[test]
fn threads_taking_turns_through_an_atomic_all_get_theirs() {
    within(Duration::from_secs(60), || {
        let stream = simulator();
        let (blocks, threads) = (3, 128);
        let mut turns = DeviceBuffer::<u32>::zeroed_on(blocks, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed_on(blocks * threads, &stream).unwrap();
        launch!(testing::take_turns[blocks, threads, stream](&mut turns, &mut out)).unwrap();
        stream.synchronize().unwrap();
        let expected: Vec<u32> = (0..blocks * threads)
            .map(|i| (threads - 1 - i % threads) as u32)
            .collect();
        assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
        assert_eq!(
            turns.copy_to_host_sync(&stream).unwrap(),
            vec![threads as u32; blocks]
        );
    });
}

#[test]
fn atomics_that_yield_still_count_exactly() {
    let stream = simulator();
    let n = 1 << 16;
    let values: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 7)
        .collect();
    let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    let mut bins = DeviceBuffer::<u32>::zeroed_on(37, &stream).unwrap();
    launch!(testing::histogram[n / 256, 256, stream](&input, &mut bins)).unwrap();
    let mut expected = vec![0u32; 37];
    for v in &values {
        expected[*v as usize % 37] += 1;
    }
    assert_eq!(bins.copy_to_host_sync(&stream).unwrap(), expected);
}

/// Checks a stall report: `thread` was running, with `others` after it.
fn assert_stalled(message: &str, kernel: &str, thread: &str, others: &str) {
    assert!(
        message.starts_with(&format!("kernel `{kernel}`, block (")),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "thread {thread}: made no progress for {TIMEOUT_SECS} s (GPU_SIM_TIMEOUT_SECS)"
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "Threads running: {thread}{others}. A thread spinning"
        )),
        "{message}"
    );
}

#[test]
fn a_thread_spinning_on_a_flag_nobody_sets_is_reported_after_the_timeout() {
    if !in_own_simulator_process() {
        return;
    }
    within(Duration::from_secs(60), || {
        let stream = simulator();
        let mut flags = DeviceBuffer::<u32>::zeroed_on(3, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed_on(3 * 64, &stream).unwrap();
        let start = Instant::now();
        launch!(testing::spin_on_flag[3, 64, stream](64, &mut flags, &mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert!(start.elapsed() >= Duration::from_secs(TIMEOUT_SECS));
        assert_eq!(kernel, "spin_on_flag");
        assert_stalled(&message, "spin_on_flag", "(0, 0, 0)", "; 63 finished");
        // The process goes on, and so do other devices.
        let other = next_device();
        let mut flags = DeviceBuffer::<u32>::zeroed_on(3, &other).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed_on(3 * 64, &other).unwrap();
        launch!(testing::spin_on_flag[3, 64, other](5, &mut flags, &mut out)).unwrap();
        other.synchronize().unwrap();
        assert_eq!(out.copy_to_host_sync(&other).unwrap(), vec![1; 3 * 64]);
    });
}

#[test]
fn a_thread_looping_without_device_calls_is_stopped_and_reported() {
    if !in_own_simulator_process() {
        return;
    }
    within(Duration::from_secs(60), || {
        let stream = simulator();
        let mut out = DeviceBuffer::<u64>::zeroed_on(2 * 32, &stream).unwrap();
        launch!(testing::busy_loop[2, 32, stream](5, u64::MAX, &mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "busy_loop");
        assert_stalled(
            &message,
            "busy_loop",
            "(5, 0, 0)",
            "; 26 not started, 5 finished",
        );
        // The OS thread was freed: the next launch runs (on another device:
        // the stall ended this one).
        let other = next_device();
        let mut out = DeviceBuffer::<u64>::zeroed_on(2 * 32, &other).unwrap();
        launch!(testing::busy_loop[2, 32, other](5, 3, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&other).unwrap();
        let step = |x: u64| {
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
        };
        assert_eq!(got[5], step(step(step(5))));
        assert_eq!(got[32 + 6], 6);
    });
}

#[test]
fn a_stack_overflow_fails_the_launch_and_names_the_stack_size() {
    if !in_own_simulator_process() {
        return;
    }
    within(Duration::from_secs(60), || {
        let stream = simulator();
        let mut out = DeviceBuffer::<u32>::zeroed_on(2 * 4, &stream).unwrap();
        launch!(testing::large_local_array[2, 4, stream](1, 2, &mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "large_local_array");
        assert!(
            message.starts_with("kernel `large_local_array`, block ("),
            "{message}"
        );
        assert!(
            message.contains("thread (0, 0, 0): overflowed its stack of 262144 bytes"),
            "{message}"
        );
        assert!(
            message.contains(
                "set GPU_SIM_STACK_BYTES to more bytes, e.g. GPU_SIM_STACK_BYTES=1048576"
            ),
            "{message}"
        );
        // The process goes on, and so do other devices.
        let other = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(2 * 4, &other).unwrap();
        let x = DeviceBuffer::to_device_sync(&[4u32, 5, 6], &other).unwrap();
        launch!(testing::read_at[2, 4, other](&x, 1, &mut out)).unwrap();
        assert_eq!(out.copy_to_host_sync(&other).unwrap(), vec![5; 8]);
    });
}

#[test]
fn a_larger_stack_can_be_set() {
    let (status, output) = child(
        "large_local_array_with_a_larger_stack",
        &[(SIM_STACK_BYTES_ENV, "1048576")],
    );
    assert!(status.success(), "{output}");
    assert!(output.contains("1 passed"), "{output}");
}

#[test]
#[ignore = "run by a_larger_stack_can_be_set, in a process with GPU_SIM_STACK_BYTES set"]
fn large_local_array_with_a_larger_stack() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(2 * 4, &stream).unwrap();
    launch!(testing::large_local_array[2, 4, stream](100_000, 100_000, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![7; 8]);
    launch!(testing::large_local_array[2, 4, stream](100_000, 300_000, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![0; 8]);
}

#[test]
fn a_bad_stack_size_is_an_error_naming_the_variable() {
    let (status, output) = child(
        "a_launch_with_a_bad_stack_size",
        &[(SIM_STACK_BYTES_ENV, "lots")],
    );
    assert!(status.success(), "{output}");
    assert!(output.contains("1 passed"), "{output}");
}

#[test]
#[ignore = "run by a_bad_stack_size_is_an_error_naming_the_variable, with GPU_SIM_STACK_BYTES=lots"]
fn a_launch_with_a_bad_stack_size() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(testing::panic_if[1, 4, stream](0, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(
        message.starts_with("GPU_SIM_STACK_BYTES=`lots` is not a stack size"),
        "{message}"
    );
}

#[test]
fn faults_that_are_not_the_simulators_still_end_the_process() {
    let (status, output) = child("a_null_write_after_a_simulated_launch", &[]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(11), "SIGSEGV expected: {output}");
    assert!(output.contains("launched"), "{output}");
}

#[test]
#[ignore = "run by faults_that_are_not_the_simulators_still_end_the_process: it crashes"]
fn a_null_write_after_a_simulated_launch() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(testing::panic_if[1, 4, stream](0, &mut out)).unwrap();
    stream.synchronize().unwrap();
    println!("launched");
    let address = std::hint::black_box(16usize) as *mut u32;
    // SAFETY: none: this writes to an unmapped page on purpose, to check
    // that the simulator's handler passes the fault on to the default action.
    unsafe { address.write_volatile(1) };
}

#[test]
fn rusts_own_stack_overflow_report_still_works() {
    let (status, output) = child("a_host_thread_overflowing_its_stack", &[]);
    assert!(!status.success(), "{output}");
    assert!(output.contains("has overflowed its stack"), "{output}");
}

#[test]
#[ignore = "run by rusts_own_stack_overflow_report_still_works: it aborts"]
fn a_host_thread_overflowing_its_stack() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(testing::panic_if[1, 4, stream](0, &mut out)).unwrap();
    stream.synchronize().unwrap();
    #[allow(unconditional_recursion)] // on purpose: it overflows its stack
    fn recurse(depth: u64) -> u64 {
        let mut frame = [depth; 64];
        frame = std::hint::black_box(frame);
        recurse(depth + 1) + frame[3]
    }
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(|| recurse(0))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_matmul_launched_with_another_block_shape_is_refused_before_it_runs() {
    let stream = simulator();
    let (m, n, k) = (40usize, 40usize, 40usize);
    let da = DeviceBuffer::to_device_sync(&vec![1.0f32; m * k], &stream).unwrap();
    let db = DeviceBuffer::to_device_sync(&vec![1.0f32; k * n], &stream).unwrap();
    let mut c = DeviceBuffer::<f32>::to_device_sync(&vec![-1.0; m * n], &stream).unwrap();
    // `#[kernel(block = (16, 16))]`: its entry points assume that shape, so
    // the launcher refuses any other before queueing anything.
    let err = launch!(gpu_test_kernels::classic::matmul_tiled[(2, 5), (32, 8), stream](
        &da,
        &db,
        k,
        c.view_2d_mut(m, n).unwrap()
    ))
    .unwrap_err();
    match &err {
        Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "matmul_tiled");
            assert!(
                reason.contains(
                    "runs only in blocks of (16, 16, 1) threads (its `block` option); the launch has blocks of (32, 8, 1)"
                ),
                "{reason}"
            );
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // Nothing ran, and the stream is fine.
    assert_eq!(c.copy_to_host_sync(&stream).unwrap(), vec![-1.0; m * n]);
    for block in [(16, 16, 2), (256, 1, 1), (16, 8, 1)] {
        let err = launch!(gpu_test_kernels::classic::matmul_tiled[(3, 3), block, stream](
            &da,
            &db,
            k,
            c.view_2d_mut(m, n).unwrap()
        ));
        assert!(
            matches!(err, Err(Error::InvalidLaunch { .. })),
            "{block:?}: {err:?}"
        );
    }
    // The declared shape runs.
    launch!(gpu_test_kernels::classic::matmul_tiled[(3, 3), (16, 16), stream](
        &da,
        &db,
        k,
        c.view_2d_mut(m, n).unwrap()
    ))
    .unwrap();
    assert_eq!(c.copy_to_host_sync(&stream).unwrap(), vec![40.0; m * n]);
}

#[test]
fn the_two_dimensional_witness_fails_in_a_launch_with_a_z_extent() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<[u32; 2]>::zeroed_on(16 * 16, &stream).unwrap();
    // With z extents of 1 (the entry for them): every element, once.
    launch!(testing::coordinates_2d[(2, 2), (8, 8), stream](out.view_2d_mut(16, 16).unwrap()))
        .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (slot, xy) in got.iter().enumerate() {
        assert_eq!(*xy, [(slot % 16) as u32, (slot / 16) as u32]);
    }
    // A z extent in the block or in the grid: the general entry, whose
    // `thread_index_2d()` tests the shape.
    for (grid, block) in [((2, 2, 1), (8, 8, 2)), ((2, 2, 2), (8, 8, 1))] {
        let stream = next_device();
        let mut out = DeviceBuffer::<[u32; 2]>::zeroed_on(16 * 16, &stream).unwrap();
        launch!(testing::coordinates_2d[grid, block, stream](
            out.view_2d_mut(16, 16).unwrap()
        ))
        .unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "coordinates_2d");
        assert!(
            message.contains("thread_index_2d() is the witness of launches whose grid and block have a z extent of 1"),
            "{message}"
        );
    }
}

#[test]
fn a_required_block_shape_fails_in_other_launches() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<[u32; 4]>::zeroed_on(32 * 8, &stream).unwrap();
    launch!(testing::shaped_fill[(1, 2), (32, 4), stream](true, out.view_2d_mut(8, 32).unwrap()))
        .unwrap();
    stream.synchronize().unwrap();
    launch!(testing::shaped_fill[(1, 1), (32, 8), stream](true, out.view_2d_mut(8, 32).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "shaped_fill");
    assert!(
        message.contains(
            "this kernel needs blocks of (32, 4, 1) threads; the launch has blocks of (32, 8, 1)"
        ),
        "{message}"
    );
}

#[test]
fn a_matrix_view_of_a_slice_too_short_fails_naming_the_shape() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[0u32; 11], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(testing::matrix_read[(1, 1), (2, 2), stream](&input, 3, 4, 0, 0, out.view_2d_mut(2, 2).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "matrix_read");
    assert!(
        message.contains("a 3 x 4 matrix needs more elements than the slice's 11"),
        "{message}"
    );
}

#[test]
fn a_matrix_view_checks_each_axis_not_the_offset() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[0u32; 12], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    // Column 4 of a 3 x 4 view (offsets 4..6, inside the slice).
    launch!(testing::matrix_read[(1, 1), (2, 2), stream](&input, 3, 4, 0, 3, out.view_2d_mut(2, 2).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "matrix_read");
    assert!(
        message.contains("matrix index out of bounds: the shape is 3 x 4 but the index is (0, 4)"),
        "{message}"
    );
}

#[test]
fn the_one_dimensional_witness_fails_in_a_two_dimensional_launch() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    // In one-dimensional launches both work.
    launch!(testing::one_dimensional_witness[2, 32, stream](&mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (0..64).collect::<Vec<u32>>()
    );
    launch!(testing::witness_from_helper[2, 32, stream](&mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (1..65).collect::<Vec<u32>>()
    );
    // The kernel body's `thread_index()` (the general entry point's)...
    launch!(testing::one_dimensional_witness[(2, 2), (4, 4), stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "one_dimensional_witness");
    assert!(message.contains("use thread_index_2d()"), "{message}");
    // ... and the unshadowed one, called from a helper, which tests the shape.
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::witness_from_helper[(1, 2), 32, stream](&mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("use thread_index_2d()"), "{message}");
}

#[test]
fn an_out_of_range_shared_read_names_kernel_block_and_thread() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::shared_read_at[1, 64, stream](63, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![63; 64]);
    launch!(testing::shared_read_at[1, 64, stream](64, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "shared_read_at");
    assert!(
        message.starts_with("kernel `shared_read_at`, block (0, 0, 0), thread ("),
        "{message}"
    );
    assert!(
        message.contains("shared array index out of bounds: the len is 64 but the index is 64"),
        "{message}"
    );
}

#[test]
fn a_phase_barrier_never_pairs_with_sync_threads() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::phase_and_threads_barriers[1, 64, stream](false, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![2; 64]);
    // Half the threads at sync_threads(), half at Block::sync(): a hang on a
    // GPU, reported here.
    launch!(testing::phase_and_threads_barriers[1, 64, stream](true, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("wait at different barriers"), "{message}");
}
