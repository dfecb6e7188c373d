//! Bad launches and allocations on the GPU: each is an error naming the
//! kernel and the limit, and none disturbs later work.

use crate::common;

use common::faults::in_own_process;
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, Backend, Device, DeviceBuffer, Error, Stream};
use gpu_test_kernels as testing;

fn invalid_launch(result: gpu_runtime::Result<()>) -> (&'static str, String) {
    match result {
        Err(Error::InvalidLaunch { kernel, reason }) => (kernel, reason),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

#[test]
fn bad_launch_configurations_name_the_kernel_and_the_limit() {
    let stream = Stream::new().unwrap();
    let limits = Device::get(0).unwrap().limits().clone();
    let a = DeviceBuffer::to_device_sync(&[1.0f32; 64], &stream).unwrap();
    let mut c = DeviceBuffer::<f32>::device_array(64).unwrap();

    let (kernel, reason) = invalid_launch(launch!(add_kernel[0, 64, stream](&a, &a, &mut c)));
    assert_eq!(kernel, "add_kernel");
    assert!(reason.contains("grid dimension x is 0"), "{reason}");

    let (_, reason) = invalid_launch(launch!(add_kernel[1, (64, 0), stream](&a, &a, &mut c)));
    assert!(reason.contains("block dimension y is 0"), "{reason}");

    let (_, reason) = invalid_launch(launch!(add_kernel[-3, 64, stream](&a, &a, &mut c)));
    assert!(reason.contains("grid dimension x is -3"), "{reason}");

    let (_, reason) = invalid_launch(launch!(add_kernel[1, 2048, stream](&a, &a, &mut c)));
    assert!(
        reason.contains(&format!("limit of {}", limits.max_block_dim[0])),
        "{reason}"
    );

    let (_, reason) = invalid_launch(launch!(add_kernel[1, (64, 32), stream](&a, &a, &mut c)));
    assert!(
        reason.contains("2048 threads")
            && reason.contains(&limits.max_threads_per_block.to_string()),
        "{reason}"
    );

    let (_, reason) = invalid_launch(launch!(add_kernel[1, (1, 1, 65), stream](&a, &a, &mut c)));
    assert!(reason.contains("block dimension z is 65"), "{reason}");

    let (_, reason) = invalid_launch(launch!(add_kernel[(1, 100_000), 32, stream](&a, &a, &mut c)));
    assert!(
        reason.contains("grid dimension y is 100000") && reason.contains("65535"),
        "{reason}"
    );

    let too_much = limits.max_shared_per_block_optin as usize + 1;
    let (kernel, reason) = invalid_launch(
        launch!(testing::reverse_in_blocks[1, 32, stream, too_much](&DeviceBuffer::<u32>::device_array(32).unwrap(), &mut DeviceBuffer::<u32>::device_array(32).unwrap())),
    );
    assert_eq!(kernel, "reverse_in_blocks");
    assert!(
        reason.contains("dynamic shared memory")
            && reason.contains(&limits.max_shared_per_block_optin.to_string()),
        "{reason}"
    );

    let max = limits.max_grid_dim;
    let (_, reason) =
        invalid_launch(launch!(testing::empty[(max[0], max[1], max[2]), 1024, stream]()));
    assert!(reason.contains("2^64 threads or more"), "{reason}");

    // Messages read as sentences a user can act on.
    let message = launch!(add_kernel[0, 64, stream](&a, &a, &mut c))
        .unwrap_err()
        .to_string();
    assert_eq!(message, "cannot launch kernel `add_kernel`: grid dimension x is 0: every grid dimension must be at least 1");

    // None of this disturbed the stream: a good launch still works.
    launch!(fill[1, 64, stream](4.0f32, &mut c)).unwrap();
    assert_eq!(c.copy_to_host_sync(&stream).unwrap(), vec![4.0; 64]);
}

#[test]
fn out_of_memory_is_an_error_with_the_sizes() {
    let (free, total) = Device::get(0).unwrap().memory_info().unwrap();
    let request = total + (1 << 30);
    match DeviceBuffer::<u8>::device_array(request) {
        Err(Error::OutOfMemory {
            requested,
            total: reported_total,
            ..
        }) => {
            assert_eq!(requested, request);
            assert_eq!(reported_total, total);
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // A byte size that overflows is its own error, not an out-of-memory one.
    let err = DeviceBuffer::<u64>::device_array(usize::MAX / 4).unwrap_err();
    assert_eq!(
        err,
        Error::SizeOverflow {
            len: usize::MAX / 4,
            element_bytes: 8
        }
    );
    assert!(
        err.to_string()
            .ends_with("elements of 8 bytes do not fit in the address space"),
        "{err}"
    );
    // The device still works afterwards.
    let stream = Stream::new().unwrap();
    let mut small = DeviceBuffer::<f32>::device_array(16).unwrap();
    launch!(fill[1, 16, stream](1.0f32, &mut small)).unwrap();
    assert_eq!(small.copy_to_host_sync(&stream).unwrap(), vec![1.0; 16]);
    assert!(free > 0);
}

#[test]
fn copies_of_the_wrong_length_are_refused() {
    let stream = Stream::new().unwrap();
    let mut buffer = DeviceBuffer::<f32>::device_array(10).unwrap();
    let err = buffer.copy_from_host_sync(&[1.0; 9], &stream).unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "copy to device",
            destination: 10,
            source: 9
        }
    );
    let mut out = vec![0.0f32; 11];
    let err = buffer.copy_to_slice_sync(&mut out, &stream).unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "copy to host",
            destination: 11,
            source: 10
        }
    );
    assert!(err
        .to_string()
        .contains("holds 11 elements but the source holds 10"));
}

#[test]
fn a_device_that_does_not_exist_is_named() {
    let count = Device::count().unwrap();
    let err = Device::get(count).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidDevice {
            ordinal: count,
            count
        }
    );
    assert!(err
        .to_string()
        .contains(&format!("device {count} does not exist")));
}

/// The kernel: a 320 KiB local array per thread. A GPU sets local
/// memory aside for every thread it runs at once; an H100 cannot (82.5 GiB
/// of 79 GiB) and refused the launch with a bare `CUDA_ERROR_INVALID_VALUE`:
/// the error names the kernel, its local memory and the limit now. A device
/// with the memory (an H200) runs it. The simulator knows no local memory:
/// the array lives on each simulated thread's stack (256 KiB), which it
/// overflows, failing the launch with a report naming the stack size; a
/// failure ends the device, so the test has a process of its own.
#[test]
fn a_kernel_whose_local_memory_the_device_cannot_set_aside_is_refused_naming_it() {
    if !in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(8, &stream).unwrap();
    let launched = launch!(testing::large_local_array[2, 4, stream](1, 1, &mut out));
    match (gpu_runtime::backend(), launched) {
        (Backend::Cuda, Err(Error::InvalidLaunch { kernel, reason })) => {
            eprintln!("refused: {reason}");
            assert_eq!(kernel, "large_local_array");
            let per_thread: u64 = reason
                .split("local memory: ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no local memory figure in: {reason}"));
            assert!(per_thread >= testing::LARGE_LOCAL_BYTES as u64, "{reason}");
            assert!(
                reason.contains("over the limit: local memory: ")
                    && reason.contains("bytes per thread (its local arrays and register spills)")
                    && reason.contains("of device memory free"),
                "{reason}"
            );
        }
        (Backend::Cuda, Ok(())) => {
            eprintln!("this device set the local memory aside: the launch ran");
            assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![7; 8]);
        }
        (Backend::Simulator, Ok(())) => match stream.synchronize() {
            Err(Error::KernelFailed { kernel, driver, .. }) => {
                assert_eq!(kernel, "large_local_array");
                assert!(
                    driver
                        .description
                        .contains("overflowed its stack of 262144 bytes"),
                    "{}",
                    driver.description
                );
            }
            other => panic!("expected the stack overflow, got {other:?}"),
        },
        (_, other) => panic!("expected a refusal naming the local memory, got {other:?}"),
    }
}

/// A launch inside a stream callback, where CUDA calls are forbidden, is
/// refused also on a stream whose device state the launch path keeps (the
/// stream launched before, so the state is cached in it): the cache is read
/// only after the callback check.
#[test]
fn a_launch_inside_a_callback_is_refused_on_a_stream_that_launched_before() {
    let stream = Stream::new().unwrap();
    let a = DeviceBuffer::to_device(&[1.0f32; 64], &stream).unwrap();
    let b = DeviceBuffer::to_device(&[2.0f32; 64], &stream).unwrap();
    let mut c = DeviceBuffer::<f32>::device_array(64).unwrap();
    launch!(add_kernel[1, 64, stream](&a, &b, &mut c)).unwrap();
    stream.synchronize().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    let inside = stream.clone();
    stream
        .add_callback(move || {
            let mut c = c;
            let _ = send.send(launch!(add_kernel[1, 64, inside](&a, &b, &mut c)));
        })
        .unwrap();
    stream.synchronize().unwrap();
    let result = receive
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    assert_eq!(result, Err(Error::CalledFromCallback));
}
