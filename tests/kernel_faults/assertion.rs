//! A kernel's `gpu_assert!` with a message: the launch ends, and the host
//! gets `Error::KernelAssertion` naming the kernel, the block, the thread,
//! the file and line, and the formatted message, on the GPU as on the
//! simulator. It runs in a process of its own: a failed assertion ends the
//! CUDA context for the rest of the process (`assertion_in_one_lane.rs` has
//! the other one).

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels::output::assert_below;

/// The line of `assert_below`'s `gpu_assert!` in its source file.
fn assertion_line() -> u32 {
    let source = include_str!("../kernels/src/features/output.rs");
    let at = source.find("gpu_assert!(v < limit").expect("the assertion");
    source[..at].matches('\n').count() as u32 + 1
}

#[test]
fn a_failed_assertion_names_the_kernel_block_thread_file_line_and_message() {
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut x: Vec<i32> = (0..96).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<i32>::zeroed_on(96, &stream).unwrap();
    // Holds everywhere: the launch runs through.
    launch!(assert_below[3, 32, stream](1000, &dx, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), x);

    // Fails in one thread only: block 1, thread 5.
    x[37] = 5000;
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    launch!(assert_below[3, 32, stream](1000, &dx, &mut out)).unwrap();
    match stream.synchronize().unwrap_err() {
        Error::KernelAssertion {
            kernel,
            block,
            thread,
            file,
            line,
            column,
            message,
            context,
        } => {
            assert_eq!(kernel, "assert_below");
            assert_eq!((block, thread), ([1, 0, 0], [5, 0, 0]));
            assert!(file.ends_with("features/output.rs"), "{file}");
            assert_eq!(line, assertion_line());
            assert_eq!(column, 9);
            assert_eq!(message, "x[37] = 5000 is not below 1000");
            assert!(context.contains("cuStreamSynchronize"), "{context}");
        }
        other => panic!("expected KernelAssertion, got {other:?}: {other}"),
    }
}
