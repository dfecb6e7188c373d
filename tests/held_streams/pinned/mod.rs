//! Pinned memory and asynchronous copies: the host cannot read, write or free
//! a pinned buffer while a copy that touches it is in flight, and copies on
//! different streams that touch one buffer are ordered by it. Each test holds
//! a stream with a callback released by a timer, so the copies are still
//! pending when the host reaches for the buffer.

mod batches;

use crate::common;

use common::hold;
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, DeviceBuffer, Error, MappedBuffer, PinnedBuffer, Stream};
use std::time::{Duration, Instant};

#[test]
fn a_round_trip_needs_no_explicit_synchronize() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let data: Vec<f32> = (0..10_000).map(|i| i as f32 * 0.5).collect();
    let input = PinnedBuffer::from_slice(&data).unwrap();
    let mut device = DeviceBuffer::<f32>::zeroed_on(data.len(), &stream).unwrap();
    device.copy_from_pinned(&input, &stream).unwrap();
    let mut output = PinnedBuffer::<f32>::new(data.len()).unwrap();
    device.copy_to_pinned(&mut output, &stream).unwrap();
    assert_eq!(
        output.as_slice().unwrap(),
        &data[..],
        "as_slice waits for the copy"
    );
}

#[test]
fn reading_waits_for_a_copy_into_the_buffer() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed_on(4096, &stream).unwrap();
    launch!(fill[16, 256, stream](42u32, &mut device)).unwrap();
    stream.synchronize().unwrap();
    let mut pinned = PinnedBuffer::<u32>::new(4096).unwrap();
    let start = Instant::now();
    let timer = hold(&stream, 300);
    device.copy_to_pinned(&mut pinned, &stream).unwrap();
    assert!(
        !pinned.is_idle().unwrap(),
        "the copy is held behind the callback"
    );
    let values = pinned.as_slice().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_slice waited for the held copy"
    );
    assert!(values.iter().all(|&v| v == 42), "and then saw its result");
    timer.join().unwrap();
}

#[test]
fn writing_waits_for_a_copy_out_of_the_buffer() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut pinned = PinnedBuffer::from_slice(&vec![1u64; 4096]).unwrap();
    let mut device = DeviceBuffer::<u64>::zeroed_on(4096, &stream).unwrap();
    let timer = hold(&stream, 300);
    device.copy_from_pinned(&pinned, &stream).unwrap();
    // Overwriting the buffer now would race with the held copy: as_mut_slice waits.
    pinned.as_mut_slice().unwrap().fill(2);
    timer.join().unwrap();
    assert_eq!(
        device.copy_to_host_sync(&stream).unwrap(),
        vec![1; 4096],
        "the device read the old values"
    );
    assert_eq!(pinned.as_slice().unwrap(), &vec![2; 4096][..]);
}

#[test]
fn dropping_waits_for_pending_copies() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed_on(1 << 16, &stream).unwrap();
    launch!(fill[256, 256, stream](5u32, &mut device)).unwrap();
    let mut pinned = PinnedBuffer::<u32>::new(1 << 16).unwrap();
    let timer = hold(&stream, 200);
    device.copy_to_pinned(&mut pinned, &stream).unwrap();
    let start = Instant::now();
    drop(pinned);
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "drop waited for the held copy"
    );
    timer.join().unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn copies_on_two_streams_are_ordered_by_the_buffer() {
    let _turn = common::one_at_a_time();
    let (first, second) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut source = DeviceBuffer::<u32>::zeroed_on(4096, &first).unwrap();
    launch!(fill[16, 256, first](77u32, &mut source)).unwrap();
    let mut pinned = PinnedBuffer::<u32>::new(4096).unwrap();
    let timer = hold(&first, 200);
    source.copy_to_pinned(&mut pinned, &first).unwrap(); // held on `first`
    let mut destination = DeviceBuffer::<u32>::zeroed_on(4096, &second).unwrap();
    destination.copy_from_pinned(&pinned, &second).unwrap(); // must wait for it
    assert_eq!(
        destination.copy_to_host_sync(&second).unwrap(),
        vec![77; 4096]
    );
    timer.join().unwrap();
}

#[test]
fn ranges_and_lengths_are_checked() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let pinned = PinnedBuffer::<f32>::new(100).unwrap();
    let mut device = DeviceBuffer::<f32>::zeroed_on(40, &stream).unwrap();
    let err = device
        .view_mut()
        .copy_from_pinned(&pinned, 70, &stream)
        .unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "pinned range",
            destination: 100,
            source: 110
        }
    );
    device
        .view_mut()
        .copy_from_pinned(&pinned, 60, &stream)
        .unwrap();
    let err = device.copy_from_pinned(&pinned, &stream).unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "copy from pinned memory",
            destination: 40,
            source: 100
        }
    );
    let empty = PinnedBuffer::<f32>::new(0).unwrap();
    assert!(empty.is_empty() && empty.as_slice().unwrap().is_empty());
}

#[test]
fn a_kernel_reads_and_writes_mapped_memory_in_place() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let n = 10_000;
    let a = MappedBuffer::mapped_from_slice(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let b = DeviceBuffer::to_device_sync(&vec![0.5f32; n], &stream).unwrap();
    let mut c = MappedBuffer::<f32>::new_mapped(n).unwrap();
    launch!(add_kernel[n.div_ceil(256), 256, stream](a.device_view(), &b, c.device_view_mut()))
        .unwrap();
    // No synchronize and no copy: reading waits for the kernel that wrote it.
    let c = c.as_slice().unwrap();
    assert!(
        c.iter().enumerate().all(|(i, &v)| v == i as f32 + 0.5),
        "the kernel wrote host memory through the mapping"
    );
}

#[test]
fn the_host_waits_for_a_kernel_using_mapped_memory() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let mut out = MappedBuffer::<u32>::new_mapped(4096).unwrap();
    // A first launch loads the module (JIT-compiled on a GPU): not while held.
    launch!(fill[16, 256, stream](1u32, out.device_view_mut())).unwrap();
    stream.synchronize().unwrap();
    let timer = hold(&stream, 300);
    let start = Instant::now();
    launch!(fill[16, 256, stream](9u32, out.device_view_mut())).unwrap();
    assert!(
        !out.is_idle().unwrap(),
        "the kernel is held behind the callback"
    );
    assert!(
        out.as_slice().unwrap().iter().all(|&v| v == 9),
        "as_slice waited for the kernel"
    );
    assert!(start.elapsed() >= Duration::from_millis(250));
    timer.join().unwrap();

    // Writing the host side waits for a kernel still reading it.
    let mut device = DeviceBuffer::<f32>::zeroed_on(4096, &stream).unwrap();
    let mut input = MappedBuffer::mapped_from_slice(&vec![1.0f32; 4096]).unwrap();
    let zeros = DeviceBuffer::<f32>::zeroed_on(4096, &stream).unwrap();
    let timer = hold(&stream, 300);
    launch!(add_kernel[16, 256, stream](input.device_view(), &zeros, &mut device)).unwrap();
    input.as_mut_slice().unwrap().fill(2.0);
    timer.join().unwrap();
    assert_eq!(
        device.copy_to_host_sync(&stream).unwrap(),
        vec![1.0; 4096],
        "the kernel read the old values"
    );
}

#[test]
fn kernels_on_mapped_memory_are_ordered_after_copies_into_it() {
    let _turn = common::one_at_a_time();
    let (first, second) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut source = DeviceBuffer::<f32>::zeroed_on(4096, &first).unwrap();
    launch!(fill[16, 256, first](3.0f32, &mut source)).unwrap();
    let mut mapped = MappedBuffer::<f32>::new_mapped(4096).unwrap();
    let timer = hold(&first, 200);
    source.copy_to_pinned(&mut mapped, &first).unwrap(); // held on `first`
    let ones = DeviceBuffer::to_device_sync(&vec![1.0f32; 4096], &second).unwrap();
    let mut sum = DeviceBuffer::<f32>::zeroed_on(4096, &second).unwrap();
    // Reads the mapped buffer on `second`: must wait for the copy on `first`.
    launch!(add_kernel[16, 256, second](mapped.device_view(), &ones, &mut sum)).unwrap();
    assert_eq!(sum.copy_to_host_sync(&second).unwrap(), vec![4.0; 4096]);
    timer.join().unwrap();
    // A device-to-device copy from the mapping is tracked too.
    let mut copy = DeviceBuffer::<f32>::zeroed_on(4096, &second).unwrap();
    copy.copy_from_device(mapped.device_view(), &second)
        .unwrap();
    assert_eq!(copy.copy_to_host_sync(&second).unwrap(), vec![3.0; 4096]);
    let empty = MappedBuffer::<f32>::new_mapped(0).unwrap();
    assert!(empty.device_view().is_empty());
    assert_eq!(format!("{empty:?}"), "MappedBuffer<f32>[0]");
}
