//! A kernel that panics: the launch fails, the error names the kernel, and
//! the process goes on (every later call reports the lost context instead of
//! crashing). One test in its own binary, because a trapped kernel ends the
//! CUDA context for the rest of the process.

use gpu_runtime::{launch, Backend, DeviceBuffer, Error, Stream};
use gpu_test_kernels as testing;

#[test]
fn a_panicking_kernel_is_reported_by_name() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::device_array(64).unwrap();
    // Not triggered: runs normally.
    launch!(testing::panic_if[1, 64, stream](0, &mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (0..64).collect::<Vec<u32>>()
    );

    // Triggered: the launch is queued, the failure surfaces at synchronize.
    launch!(testing::panic_if[1, 64, stream](1, &mut out)).unwrap();
    let err = stream.synchronize().unwrap_err();
    match &err {
        Error::KernelFailed { kernel, driver, .. } => {
            assert_eq!(*kernel, "panic_if");
            assert!(
                driver.code >= 700,
                "a kernel fault code, got {}",
                driver.code
            );
        }
        other => panic!("expected KernelFailed, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.starts_with("kernel `panic_if` failed"), "{message}");
    eprintln!("reported: {message}");

    match gpu_runtime::backend() {
        // On a GPU the context is lost: later calls fail cleanly rather than crash.
        Backend::Cuda => {
            assert!(
                out.copy_to_host_sync(&stream).is_err(),
                "the context is lost after a trap"
            );
            assert!(launch!(testing::panic_if[1, 64, stream](0, &mut out)).is_err());
        }
        // The simulator reports the panic and carries on.
        Backend::Simulator => {
            assert!(message.contains("block (0, 0, 0), thread ("), "{message}");
            launch!(testing::panic_if[1, 64, stream](0, &mut out)).unwrap();
            assert_eq!(
                out.copy_to_host_sync(&stream).unwrap(),
                (0..64).collect::<Vec<u32>>()
            );
        }
    }
}
