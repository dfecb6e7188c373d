//! Managed memory (`ManagedBuffer`): kernels and the host use it in place,
//! the tracking orders the host's accesses after the device work they would
//! race with, prefetch and advice, and the refusals (oversubscription,
//! captures, bad locations). Ported cases are named after Numba's
//! `numba/cuda/tests/cudadrv/test_managed_alloc.py` and CuPy's
//! `tests/cupy_tests/cuda_tests/test_memory.py`.

use crate::common;

use common::{blocks, hold};
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, Advice, Device, DeviceBuffer, Error, Location, ManagedBuffer, Stream};
use std::time::{Duration, Instant};

/// Numba's `test_managed_alloc_driver_undersubscribe`: managed memory well
/// under the device's free memory is allocated, zeroed, and usable from the
/// host and a kernel.
#[test]
fn numba_test_managed_alloc_driver_undersubscribe() {
    let device = Device::current().unwrap();
    let (free, _) = device.memory_info().unwrap();
    // A quarter of the free memory, at most 1 GiB (the zeroing touches it all).
    let len = (free / 4).min(1 << 30) / 4;
    let mut data = ManagedBuffer::<u32>::new(len).unwrap();
    assert_eq!(data.len(), len);
    {
        let host = data.as_mut_slice().unwrap();
        assert_eq!((host[0], host[len - 1]), (0, 0), "allocated zeroed");
        host[len - 1] = 7;
    }
    let stream = Stream::new().unwrap();
    launch!(fill[blocks(1024), 256, stream](3u32, &mut data)).unwrap();
    let host = data.as_slice().unwrap();
    assert_eq!(host[len - 1], 7, "the kernel wrote only its first elements");
    assert!(host[..1024].iter().all(|&v| v == 3));
}

/// Numba's `test_managed_alloc_driver_oversubscribe` expects CUDA to hand
/// out more managed memory than the device has. Here the request is refused
/// before the driver sees it, naming the bytes asked for and free (README:
/// managed memory never oversubscribes the device).
#[test]
fn numba_test_managed_alloc_driver_oversubscribe() {
    let device = Device::current().unwrap();
    let (free, _) = device.memory_info().unwrap();
    let len = free / 4 + (1 << 28);
    match ManagedBuffer::<u32>::new(len) {
        Err(Error::OutOfMemory {
            requested,
            free: said_free,
            ..
        }) => {
            assert_eq!(requested, len * 4);
            assert!(said_free < requested && said_free > 0, "{said_free}");
            let message = ManagedBuffer::<u32>::new(len).unwrap_err().to_string();
            assert!(message.contains(&requested.to_string()), "{message}");
        }
        other => panic!("expected Error::OutOfMemory, got {other:?}"),
    }
}

/// Numba's `test_managed_array_attach_global`: memory attached globally is
/// written by a kernel on a stream that is not the current one, and the host
/// reads the result without a synchronise: `as_slice` waits for the kernel,
/// held behind a callback here.
#[test]
fn numba_test_managed_array_attach_global() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut data = ManagedBuffer::<f32>::new(4096).unwrap();
    launch!(fill[blocks(4096), 256, stream](1.5f32, &mut data)).unwrap();
    stream.synchronize().unwrap();
    let start = Instant::now();
    let timer = hold(&stream, 300);
    launch!(fill[blocks(4096), 256, stream](2.5f32, &mut data)).unwrap();
    let host = data.as_slice().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_slice waited for the held kernel"
    );
    assert!(host.iter().all(|&v| v == 2.5), "and then saw what it wrote");
    timer.join().unwrap();
}

/// CuPy's `test_malloc_managed`: managed memory written on the host is read
/// by a kernel in place, and the kernel's output is read back on the host.
#[test]
fn cupy_test_malloc_managed() {
    let stream = Stream::new().unwrap();
    let a = ManagedBuffer::from_slice(&(0..1000).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let b = ManagedBuffer::from_slice(&vec![0.5f32; 1000]).unwrap();
    let mut c = ManagedBuffer::<f32>::new(1000).unwrap();
    launch!(add_kernel[blocks(1000), 256, stream](&a, &b, &mut c)).unwrap();
    let sums = c.as_slice().unwrap();
    assert!(sums.iter().enumerate().all(|(i, &v)| v == i as f32 + 0.5));
    // A device buffer and a managed one mix in one launch.
    let d = DeviceBuffer::from_host_sync(&vec![1.0f32; 1000]).unwrap();
    launch!(add_kernel[blocks(1000), 256, stream](&a, &d, &mut c)).unwrap();
    assert_eq!(c.as_slice().unwrap()[999], 1000.0);
}

/// CuPy's `test_prefetch`: prefetching to the device and back to the host
/// changes no value; it is ordered after the kernel writing the memory.
#[test]
fn cupy_test_prefetch() {
    let stream = Stream::new().unwrap();
    let mut data = ManagedBuffer::<u32>::new(1 << 16).unwrap();
    launch!(fill[blocks(1 << 16), 256, stream](9u32, &mut data)).unwrap();
    let device = data.device();
    data.prefetch_to(Location::Device(device), &stream).unwrap();
    data.prefetch_to(Location::Host, &stream).unwrap();
    assert!(data.as_slice().unwrap().iter().all(|&v| v == 9));
    // On another stream: ordered after the writer on the first.
    let other = Stream::new().unwrap();
    launch!(fill[blocks(1 << 16), 256, stream](4u32, &mut data)).unwrap();
    data.prefetch_to(Location::Device(device), &other).unwrap();
    assert!(data.as_slice().unwrap().iter().all(|&v| v == 4));
}

/// CuPy's `test_advise`: each advice is accepted, set and cleared, and
/// changes no value.
#[test]
fn cupy_test_advise() {
    let data = ManagedBuffer::from_slice(&[1u64, 2, 3]).unwrap();
    let device = Location::Device(data.device());
    for advice in [
        Advice::ReadMostly,
        Advice::PreferredLocation(device),
        Advice::PreferredLocation(Location::Host),
        Advice::AccessedBy(device),
        Advice::AccessedBy(Location::Host),
    ] {
        data.advise(advice).unwrap();
        data.clear_advice(advice).unwrap();
    }
    assert_eq!(data.as_slice().unwrap(), &[1, 2, 3]);
}

#[test]
fn a_location_naming_a_missing_device_is_refused() {
    let stream = Stream::new().unwrap();
    let data = ManagedBuffer::<u32>::new(16).unwrap();
    let missing = gpu_runtime::MAX_DEVICES + 1;
    assert!(matches!(
        data.prefetch_to(Location::Device(missing), &stream),
        Err(Error::InvalidDevice { .. })
    ));
    assert!(matches!(
        data.advise(Advice::AccessedBy(Location::Device(missing))),
        Err(Error::InvalidDevice { .. })
    ));
}

/// Writing on the host waits for the kernels still reading the buffer: the
/// kernel reads the old values, the host's write lands after.
#[test]
fn writing_on_the_host_waits_for_a_kernel_reading() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut a = ManagedBuffer::from_slice(&vec![1.0f32; 4096]).unwrap();
    let b = DeviceBuffer::from_host_sync(&vec![1.0f32; 4096]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed_on(4096, &stream).unwrap();
    stream.synchronize().unwrap();
    let start = Instant::now();
    let timer = hold(&stream, 300);
    launch!(add_kernel[blocks(4096), 256, stream](&a, &b, &mut c)).unwrap();
    a.as_mut_slice().unwrap().fill(100.0);
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_mut_slice waited for the held kernel reading the buffer"
    );
    let sums = c.copy_to_host_sync(&stream).unwrap();
    assert!(
        sums.iter().all(|&v| v == 2.0),
        "the kernel read the old values"
    );
    timer.join().unwrap();
}

/// A kernel on one stream writes, a kernel on another reads: the tracking
/// orders the second after the first, as for device buffers.
#[test]
fn kernels_on_two_streams_are_ordered_by_the_tracking() {
    let _turn = common::one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut a = ManagedBuffer::<f32>::new(4096).unwrap();
    let b = DeviceBuffer::from_host_sync(&vec![1.0f32; 4096]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed_on(4096, &s2).unwrap();
    s2.synchronize().unwrap();
    let timer = hold(&s1, 200);
    launch!(fill[blocks(4096), 256, s1](5.0f32, &mut a)).unwrap();
    launch!(add_kernel[blocks(4096), 256, s2](&a, &b, &mut c)).unwrap();
    let sums = c.copy_to_host_sync(&s2).unwrap();
    assert!(
        sums.iter().all(|&v| v == 6.0),
        "the read saw the held write"
    );
    timer.join().unwrap();
}

/// Dropping the buffer waits for the kernel writing it before freeing it.
#[test]
fn dropping_waits_for_the_kernel_using_the_buffer() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut data = ManagedBuffer::<u32>::new(4096).unwrap();
    launch!(fill[blocks(4096), 256, stream](1u32, &mut data)).unwrap();
    stream.synchronize().unwrap();
    let start = Instant::now();
    let timer = hold(&stream, 300);
    launch!(fill[blocks(4096), 256, stream](2u32, &mut data)).unwrap();
    drop(data);
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "the drop waited"
    );
    timer.join().unwrap();
    stream.synchronize().unwrap();
}

/// Managed memory stays out of graph captures (the host could touch it
/// between the graph's launches); the capture goes on.
#[test]
fn a_capture_refuses_managed_memory_and_goes_on() {
    let stream = Stream::new().unwrap();
    let mut data = ManagedBuffer::<u32>::new(256).unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed_on(256, &stream).unwrap();
    let capture = stream.begin_capture().unwrap();
    match launch!(fill[1, 256, stream](1u32, &mut data)) {
        Err(Error::InCapture { operation, .. }) => {
            assert!(operation.contains("managed"), "{operation}")
        }
        other => panic!("expected Error::InCapture, got {other:?}"),
    }
    assert!(matches!(
        data.prefetch_to(Location::Host, &stream),
        Err(Error::InCapture { .. })
    ));
    launch!(fill[1, 256, stream](3u32, &mut device)).unwrap();
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&stream).unwrap();
    assert_eq!(device.copy_to_host_sync(&stream).unwrap(), vec![3; 256]);
    assert_eq!(data.as_slice().unwrap(), &[0; 256][..]);
}

#[test]
fn an_empty_buffer_has_empty_slices_and_takes_prefetch_and_advice() {
    let mut empty = ManagedBuffer::<f64>::new(0).unwrap();
    assert!(empty.as_slice().unwrap().is_empty());
    assert!(empty.as_mut_slice().unwrap().is_empty());
    let stream = Stream::new().unwrap();
    empty.prefetch_to(Location::Host, &stream).unwrap();
    empty.advise(Advice::ReadMostly).unwrap();
}

/// A copy from managed memory into a device buffer is tracked as a read.
#[test]
fn a_device_buffer_copies_from_managed_memory() {
    let stream = Stream::new().unwrap();
    let data = ManagedBuffer::from_slice(&[4i32, 5, 6]).unwrap();
    let mut device = DeviceBuffer::<i32>::zeroed_on(3, &stream).unwrap();
    device.copy_from_device(&data, &stream).unwrap();
    assert_eq!(device.copy_to_host_sync(&stream).unwrap(), vec![4, 5, 6]);
}

/// A device without concurrent managed access (Windows, GPUs before Pascal)
/// or without managed memory is refused with an error saying what it lacks,
/// before anything is allocated (simulated by `GPU_SIM_MANAGED_MEMORY`).
#[test]
fn a_device_without_concurrent_managed_access_is_refused() {
    use gpu_runtime::{Backend, BACKEND_ENV, SIM_MANAGED_MEMORY_ENV};
    for (support, lacks) in [
        ("host-exclusive", "CONCURRENT_MANAGED_ACCESS"),
        ("none", "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY"),
    ] {
        if std::env::var(SIM_MANAGED_MEMORY_ENV).as_deref() == Ok(support) {
            assert_eq!(gpu_runtime::backend(), Backend::Simulator);
            match ManagedBuffer::<u32>::new(16) {
                Err(Error::ManagedMemoryUnsupported { device: 0, reason }) => {
                    assert!(reason.contains(lacks), "{reason}")
                }
                other => panic!("expected Error::ManagedMemoryUnsupported, got {other:?}"),
            }
            return;
        }
    }
    if std::env::var(SIM_MANAGED_MEMORY_ENV).is_ok() {
        return;
    }
    for support in ["host-exclusive", "none"] {
        common::faults::in_own_process(&[
            (SIM_MANAGED_MEMORY_ENV, support),
            (BACKEND_ENV, "simulator"),
        ]);
    }
}

/// A kernel queued on another thread's per-thread default stream (which
/// this thread cannot record on) is waited for through the legacy default
/// stream: the host read still sees what it wrote. The other thread lives
/// on until the read is done.
#[test]
fn a_host_read_waits_for_another_threads_per_thread_stream() {
    let _turn = common::one_at_a_time();
    let (send, receive) = std::sync::mpsc::channel();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        let stream = Stream::per_thread();
        let mut data = ManagedBuffer::<u32>::new(4096).unwrap();
        let timer = hold(&stream, 200);
        launch!(fill[blocks(4096), 256, stream](8u32, &mut data)).unwrap();
        send.send(data).unwrap();
        finished.recv().unwrap();
        timer.join().unwrap();
        stream.synchronize().unwrap();
    });
    let data = receive.recv().unwrap();
    assert!(data.as_slice().unwrap().iter().all(|&v| v == 8));
    drop(data);
    done.send(()).unwrap();
    worker.join().unwrap();
}
