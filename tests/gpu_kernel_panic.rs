//! A kernel that panics: the launch fails, the error names the kernel, and
//! the fault is sticky: every later call on the device returns the same
//! error, on every stream, so a program that goes on cannot reach its
//! "correct" line. On a GPU the CUDA context is lost; the simulator keeps the
//! same rule per simulated device. One test in its own binary, because the
//! fault ends the device for the rest of the process.

use gpu_runtime::{launch, DeviceBuffer, Error, Event, Stream, StreamOptions};
use gpu_test_kernels as testing;
use gpu_tutorial_kernels::add_kernel;

/// Asserts that `result` is the device's fault: `KernelFailed`, naming
/// `panic_if`, with the first report's code and description.
#[track_caller]
fn refused<T: std::fmt::Debug>(what: &str, first: &Error, result: gpu_runtime::Result<T>) {
    let Error::KernelFailed {
        driver: first_driver,
        ..
    } = first
    else {
        unreachable!("checked before")
    };
    match result {
        Err(Error::KernelFailed {
            kernel,
            driver,
            context,
        }) => {
            assert_eq!(kernel, "panic_if", "{what}: the kernel named");
            assert_eq!(driver.code, first_driver.code, "{what}: {context}");
            assert_eq!(driver.name, first_driver.name, "{what}: {context}");
            assert_eq!(
                driver.description, first_driver.description,
                "{what}: {context}"
            );
        }
        other => panic!("{what}: expected the kernel's fault, got {other:?}"),
    }
}

#[test]
fn a_kernel_fault_is_reported_by_name_and_every_later_call_returns_it() {
    let stream = Stream::new().unwrap();
    let other = Stream::new().unwrap();
    let blocking = Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
    let mut out = DeviceBuffer::<u32>::device_array(64).unwrap();
    let a = DeviceBuffer::from_host_sync(&[1.0f32; 64]).unwrap();
    let mut c = DeviceBuffer::<f32>::device_array(64).unwrap();
    // Not triggered: runs normally.
    launch!(testing::panic_if[1, 64, stream](0, &mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (0..64).collect::<Vec<u32>>()
    );
    // Made before the fault: a recorded event, a graph instance.
    let recorded = Event::new().unwrap();
    recorded.record_on(&other).unwrap();
    recorded.synchronize().unwrap();
    let graph = other
        .capture(|s| launch!(add_kernel[1, 64, s](&a, &a, &mut c)))
        .unwrap()
        .instantiate()
        .unwrap();

    // Triggered: the launch is queued, the failure surfaces at synchronize.
    launch!(testing::panic_if[1, 64, stream](1, &mut out)).unwrap();
    let first = stream.synchronize().unwrap_err();
    match &first {
        Error::KernelFailed { kernel, driver, .. } => {
            assert_eq!(*kernel, "panic_if");
            assert!(driver.is_kernel_fault(), "a kernel fault code: {driver}");
        }
        other => panic!("expected KernelFailed, got {other:?}"),
    }
    let message = first.to_string();
    assert!(message.starts_with("kernel `panic_if` failed"), "{message}");
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(message.contains("block (0, 0, 0), thread ("), "{message}");
    }
    eprintln!("reported: {message}");

    // The program went on after the first report and printed its
    // "correct" line: here every call fails with the same error instead.
    refused(
        "the stream's synchronize, again",
        &first,
        stream.synchronize(),
    );
    refused("another stream's synchronize", &first, other.synchronize());
    refused(
        "a blocking stream's synchronize",
        &first,
        blocking.synchronize(),
    );
    refused(
        "the legacy default stream's synchronize",
        &first,
        Stream::null().synchronize(),
    );
    refused(
        "the per-thread default stream's synchronize",
        &first,
        Stream::per_thread().synchronize(),
    );
    refused(
        "the device's synchronize",
        &first,
        gpu_runtime::synchronize(),
    );
    refused("a stream query", &first, other.is_done());
    refused("a copy to the host", &first, out.copy_to_host_sync(&stream));
    refused(
        "a copy to the host on another stream",
        &first,
        a.copy_to_host_sync(&other),
    );
    refused(
        "a copy to the device",
        &first,
        c.copy_from_host_sync(&[2.0; 64], &other),
    );
    refused(
        "an allocation",
        &first,
        DeviceBuffer::<u32>::device_array(16),
    );
    refused(
        "an allocation with a copy",
        &first,
        DeviceBuffer::from_host_sync(&[1u32, 2, 3]),
    );
    refused(
        "a launch",
        &first,
        launch!(testing::panic_if[1, 64, stream](0, &mut out)),
    );
    refused(
        "a launch of another kernel on another stream",
        &first,
        launch!(add_kernel[1, 64, other](&a, &a, &mut c)),
    );
    refused("a graph launch", &first, graph.launch(&other));
    refused("an event's synchronize", &first, recorded.synchronize());
    refused("an event query", &first, recorded.is_done());
    refused("an event record", &first, recorded.record_on(&other));
    refused("an event wait", &first, other.wait_event(&recorded));
    refused("a new stream", &first, Stream::new());
    refused("a new event", &first, Event::new().map(drop));
    refused("a future", &first, stream.async_done().map(drop));
    refused(
        "the device's memory information",
        &first,
        gpu_runtime::Device::get(0).unwrap().memory_info(),
    );
}
