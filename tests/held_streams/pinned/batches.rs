//! Batches of copies between a pinned buffer and device memory
//! (`PinnedBuffer::copies_to_device`, `copies_from_device`): tracked by one
//! event per stream when the batch ends, so the host still cannot read, write
//! or free the buffer while a copy of the batch is in flight, also when the
//! batch's closure fails or panics. Each test holds its streams with
//! callbacks released by a timer, so the copies are still pending when the
//! host reaches for the buffer.

use crate::common;

use common::{hold, one_at_a_time};
use gpu_kernels::fill;
use gpu_runtime::{launch, DeviceBuffer, Error, PinnedBuffer, Stream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

const N: usize = 8192;

fn streams() -> [Stream; 2] {
    [Stream::new().unwrap(), Stream::new().unwrap()]
}

#[test]
fn copies_out_of_a_buffer_are_tracked_when_the_batch_ends() {
    let _turn = one_at_a_time();
    let streams = streams();
    let data: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut host = PinnedBuffer::from_slice(&data).unwrap();
    let mut halves = [
        DeviceBuffer::<f32>::zeroed_on(N / 2, &streams[0]).unwrap(),
        DeviceBuffer::<f32>::zeroed_on(N / 2, &streams[1]).unwrap(),
    ];
    for s in &streams {
        s.synchronize().unwrap();
    }
    let timers: Vec<_> = streams.iter().map(|s| hold(s, 300)).collect();
    let start = Instant::now();
    host.copies_to_device(|copies| {
        for (i, (half, stream)) in halves.iter_mut().zip(&streams).enumerate() {
            copies.copy(i * (N / 2), half.view_mut(), stream)?;
        }
        Ok(())
    })
    .unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "the batch only queues"
    );
    assert!(!host.is_idle().unwrap(), "the copies are held");
    host.as_mut_slice().unwrap().fill(-1.0);
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "writing the buffer waited for the batch's copies"
    );
    for t in timers {
        t.join().unwrap();
    }
    let copied: Vec<f32> = halves
        .iter()
        .zip(&streams)
        .flat_map(|(half, s)| half.copy_to_host_sync(s).unwrap())
        .collect();
    assert_eq!(
        copied, data,
        "the copies read the buffer before it was overwritten"
    );
}

#[test]
fn copies_into_a_buffer_are_tracked_when_the_batch_ends() {
    let _turn = one_at_a_time();
    let streams = streams();
    let mut halves = [
        DeviceBuffer::<u32>::zeroed_on(N / 2, &streams[0]).unwrap(),
        DeviceBuffer::<u32>::zeroed_on(N / 2, &streams[1]).unwrap(),
    ];
    for (i, (half, s)) in halves.iter_mut().zip(&streams).enumerate() {
        launch!(fill[N / 2 / 256, 256, s](7 + i as u32, half)).unwrap();
        s.synchronize().unwrap();
    }
    let mut host = PinnedBuffer::<u32>::new(N).unwrap();
    let timers: Vec<_> = streams.iter().map(|s| hold(s, 300)).collect();
    let start = Instant::now();
    host.copies_from_device(|copies| {
        for (i, (half, stream)) in halves.iter().zip(&streams).enumerate() {
            copies.copy(half.view(), i * (N / 2), stream)?;
        }
        Ok(())
    })
    .unwrap();
    assert!(!host.is_idle().unwrap(), "the copies are held");
    let values = host.as_slice().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "reading the buffer waited for the batch's copies"
    );
    assert!(values[..N / 2].iter().all(|&v| v == 7), "first half");
    assert!(values[N / 2..].iter().all(|&v| v == 8), "second half");
    for t in timers {
        t.join().unwrap();
    }
}

#[test]
fn a_failing_batch_returns_its_error_and_still_tracks_its_copies() {
    let _turn = one_at_a_time();
    let [stream, _] = streams();
    let mut host = PinnedBuffer::from_slice(&vec![3u64; N]).unwrap();
    let mut device = DeviceBuffer::<u64>::zeroed_on(N, &stream).unwrap();
    stream.synchronize().unwrap();
    let timer = hold(&stream, 300);
    let start = Instant::now();
    let err = host
        .copies_to_device(|copies| -> gpu_runtime::Result<()> {
            copies.copy(0, device.view_mut(), &stream)?;
            Err(Error::InvalidArgument {
                operation: "the test's batch",
                reason: "it fails after queueing a copy".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            operation: "the test's batch",
            ..
        }
    ));
    host.as_mut_slice().unwrap().fill(0);
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "writing the buffer waited for the failed batch's copy"
    );
    timer.join().unwrap();
    assert_eq!(device.copy_to_host_sync(&stream).unwrap(), vec![3u64; N]);
}

#[test]
fn a_panicking_batch_still_tracks_its_copies() {
    let _turn = one_at_a_time();
    let [stream, _] = streams();
    let mut device = DeviceBuffer::<u32>::zeroed_on(N, &stream).unwrap();
    launch!(fill[N / 256, 256, stream](5u32, &mut device)).unwrap();
    stream.synchronize().unwrap();
    let mut host = PinnedBuffer::<u32>::new(N).unwrap();
    let timer = hold(&stream, 300);
    let start = Instant::now();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        host.copies_from_device(|copies| -> gpu_runtime::Result<()> {
            copies.copy(device.view(), 0, &stream)?;
            panic!("the batch's closure panics after queueing a copy");
        })
    }));
    assert!(panicked.is_err());
    let values = host.as_slice().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "reading the buffer waited for the panicked batch's copy"
    );
    assert!(values.iter().all(|&v| v == 5));
    timer.join().unwrap();
}

#[test]
fn a_copy_past_the_buffer_is_an_error_and_queues_nothing() {
    let [stream, _] = streams();
    let host = PinnedBuffer::<f32>::new(100).unwrap();
    let mut device = DeviceBuffer::<f32>::zeroed_on(60, &stream).unwrap();
    let err = host
        .copies_to_device(|copies| copies.copy(50, device.view_mut(), &stream))
        .unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "pinned range",
            destination: 100,
            source: 110,
        }
    );
    assert!(host.is_idle().unwrap());
    let mut host = PinnedBuffer::<f32>::new(100).unwrap();
    let err = host
        .copies_from_device(|copies| copies.copy(device.view(), usize::MAX, &stream))
        .unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { .. }), "{err}");
    assert!(host.is_idle().unwrap());
}
