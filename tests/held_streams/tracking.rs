//! Device buffers cannot race across streams: each use on a new stream waits,
//! on the device, for the conflicting uses on other streams. Each test holds
//! the first stream with a callback released by a timer, so that without the
//! tracking the later stream would run first and see the wrong data.

use crate::common;

use common::{blocks, filled, hold, one_at_a_time, size};
use gpu_kernels::{add_kernel, fill};
use gpu_ops::sum_on;
use gpu_runtime::{launch, Device, DeviceBuffer, Error, PinnedBuffer, Pipeline, Stream};
use std::time::{Duration, Instant};

#[test]
fn a_copy_on_another_stream_returns_what_the_kernel_wrote() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &s1);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](5.0f32, &mut x)).unwrap();
    let start = Instant::now();
    let seen = x.copy_to_host_sync(&s2).unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "the copy waited for the kernel on s1"
    );
    assert_eq!(
        seen,
        vec![5.0; n],
        "the copy on s2 saw the kernel's write on s1"
    );
    held.join().unwrap();
}

#[test]
fn a_kernel_on_another_stream_reads_after_the_writer() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &s1);
    let ones = filled(n, 1.0, &s2);
    let mut out = filled(n, -1.0, &s2);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](7.0f32, &mut x)).unwrap();
    launch!(add_kernel[blocks(n), 256, s2](&x, &ones, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&s2).unwrap(), vec![8.0; n]);
    held.join().unwrap();
}

#[test]
fn a_writer_waits_for_readers_on_two_other_streams() {
    let _turn = one_at_a_time();
    let (s1, s2, s3) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Stream::new().unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 2.0, &s3);
    let ones = filled(n, 1.0, &s3);
    let (mut out1, mut out2) = (filled(n, 0.0, &s1), filled(n, 0.0, &s2));
    let held1 = hold(&s1, 300);
    let held2 = hold(&s2, 300);
    launch!(add_kernel[blocks(n), 256, s1](&x, &ones, &mut out1)).unwrap();
    launch!(add_kernel[blocks(n), 256, s2](&x, &ones, &mut out2)).unwrap();
    // The writer on a third stream must wait for both readers.
    launch!(fill[blocks(n), 256, s3](99.0f32, &mut x)).unwrap();
    assert_eq!(
        out1.copy_to_host_sync(&s3).unwrap(),
        vec![3.0; n],
        "reader 1 saw the old data"
    );
    assert_eq!(
        out2.copy_to_host_sync(&s3).unwrap(),
        vec![3.0; n],
        "reader 2 saw the old data"
    );
    assert_eq!(x.copy_to_host_sync(&s1).unwrap(), vec![99.0; n]);
    held1.join().unwrap();
    held2.join().unwrap();
}

#[test]
fn a_buffer_handed_across_four_streams_in_turn() {
    let _turn = one_at_a_time();
    let streams: Vec<Stream> = (0..4).map(|_| Stream::new().unwrap()).collect();
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &streams[0]);
    let ones = filled(n, 1.0, &streams[0]);
    let mut scratch = filled(n, 0.0, &streams[0]);
    let holds: Vec<_> = streams.iter().map(|s| hold(s, 100)).collect();
    for s in &streams {
        // x = x + 1 on this stream: after the previous stream's update.
        launch!(add_kernel[blocks(n), 256, s](&x, &ones, &mut scratch)).unwrap();
        x.copy_from_device(&scratch, s).unwrap();
    }
    assert_eq!(x.copy_to_host_sync(&streams[0]).unwrap(), vec![4.0; n]);
    for h in holds {
        h.join().unwrap();
    }
}

#[test]
fn zeroed_memory_read_on_another_stream_is_zero() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 20, 1 << 14);
    // Leave non-zero bytes in the pool for the next allocation to find.
    let mut dirty = DeviceBuffer::<u8>::zeroed_on(n, &s1).unwrap();
    dirty.fill(171, &s1).unwrap();
    drop(dirty);
    let held = hold(&s1, 300);
    let flags = DeviceBuffer::<bool>::zeroed_on(n, &s1).unwrap();
    let seen = flags.copy_to_host_sync(&s2).unwrap();
    assert!(seen.iter().all(|&b| !b), "every flag reads false");
    held.join().unwrap();
}

#[test]
fn a_sum_on_one_stream_read_on_another() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = 4096usize;
    let x = DeviceBuffer::to_device_sync(&vec![1u32; n], &s1).unwrap();
    let warm = sum_on(&x, &s1).unwrap(); // loads the kernels
    assert_eq!(warm.copy_to_host_sync(&s1).unwrap(), n as u64);
    let held = hold(&s1, 300);
    let total = sum_on(&x, &s1).unwrap();
    assert_eq!(total.copy_to_host_sync(&s2).unwrap(), n as u64);
    held.join().unwrap();
}

#[test]
fn pipeline_staging_buffers_read_on_another_stream_hold_written_data() {
    let other = Stream::new().unwrap();
    let streams = [Stream::new().unwrap(), Stream::new().unwrap()];
    let n = 4096usize;
    // Leave NaN bytes where the staging buffers may be allocated.
    let mut dirty = DeviceBuffer::<f32>::zeroed_on(n / 4, &streams[0]).unwrap();
    dirty.fill(f32::NAN, &streams[0]).unwrap();
    dirty.free_sync().unwrap();
    let input = PinnedBuffer::from_slice(&vec![3.0f32; n]).unwrap();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let mut pipeline = Pipeline::new(&streams).unwrap();
    let (mut inputs_seen, mut outputs_seen) = (Vec::new(), Vec::new());
    pipeline
        .run(&input, &mut output, 4, None, |stream, x, out| {
            // Read both staging buffers on another stream before the kernel runs.
            inputs_seen.extend(x.copy_to_host_sync(&other)?);
            outputs_seen.push(out.as_view().copy_to_host_sync(&other)?);
            launch!(add_kernel[blocks(x.len()), 256, stream](x, x, out))
        })
        .unwrap();
    assert_eq!(
        inputs_seen,
        vec![3.0; n],
        "the input staging holds the copied chunk"
    );
    for first_use in &outputs_seen[..2] {
        assert!(
            first_use.iter().all(|&v| v == 0.0),
            "each stream's output staging starts zeroed"
        );
    }
    assert_eq!(output.as_slice().unwrap(), &vec![6.0; n][..]);
}

#[test]
fn the_per_thread_default_stream_belongs_to_its_thread() {
    let mine = Stream::per_thread();
    let same = Stream::per_thread();
    assert_eq!(mine, same);
    std::thread::spawn(move || {
        assert_ne!(
            mine,
            Stream::per_thread(),
            "another thread's per-thread stream is another stream"
        );
        match mine.synchronize() {
            Err(Error::PerThreadStreamOnOtherThread { .. }) => {}
            other => panic!("expected PerThreadStreamOnOtherThread, got {other:?}"),
        }
        let mut x = DeviceBuffer::<f32>::device_array(16).unwrap();
        let refused = launch!(fill[1, 16, mine](1.0f32, &mut x));
        assert!(
            matches!(refused, Err(Error::PerThreadStreamOnOtherThread { .. })),
            "{refused:?}"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn a_write_on_another_threads_per_thread_stream_is_waited_for() {
    let _turn = one_at_a_time();
    let reader = Stream::new().unwrap();
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &reader);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let own = Stream::per_thread();
                let warm = filled(16, 0.0, &own);
                drop(warm);
                let held = hold(&own, 300);
                launch!(fill[blocks(n), 256, own](4.0f32, &mut x)).unwrap();
                held.join().unwrap();
            })
            // Joined by its handle: this waits for the thread to have ended, the
            // driver's teardown of its per-thread stream included (the scope's
            // own join returns once the closure has). compute-sanitizer can
            // deadlock a stream destroyed while that teardown runs
            // (scripts/sanitizer-probes/thread_exit_overlap.cu).
            .join()
            .unwrap();
    });
    // The writer's thread is gone; its per-thread stream cannot be recorded on
    // from here, and the tracking orders the read through the legacy stream.
    assert_eq!(x.copy_to_host_sync(&reader).unwrap(), vec![4.0; n]);
}

#[test]
fn a_buffer_dropped_inside_a_callback_is_freed() {
    // The measure is the pool's used bytes, in a process of its own so that
    // no other test's allocation moves them. (Not the device's free memory:
    // on an H100 it stayed 96 MiB lower after this test while the pool's
    // used and reserved bytes were both back at 0, memory the driver holds
    // outside the pool, not the buffer.)
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let device = Device::current().unwrap();
    let pool = device.memory_pool();
    let stream = Stream::new().unwrap();
    let used = || pool.stats().unwrap().used_bytes;
    let before = used();
    let bytes = 64 << 20;
    let buffer = DeviceBuffer::<u8>::zeroed_on(bytes, &stream).unwrap();
    stream.synchronize().unwrap();
    assert!(
        used() >= before + bytes as u64,
        "the buffer is the pool's: {} used bytes after allocating, {before} before",
        used()
    );
    let releases = gpu_runtime::__private::deferred_releases_completed();
    stream.add_callback(move || drop(buffer)).unwrap();
    stream.synchronize().unwrap();
    // The release thread frees it, in stream order: wait for that release
    // to have run, then for the free to reach the pool.
    let start = Instant::now();
    while gpu_runtime::__private::deferred_releases_completed() == releases {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the release thread did not run the buffer's release within 10 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    while used() > before {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the pool still counts {} used bytes 10 s after the drop ({before} before)",
            used()
        );
        device.synchronize().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Numba's `cuda.to_device(data, stream=stream)`: the host data is the
/// caller's again when the call returns, and the copy is ordered on the
/// stream (queued behind work already there), for that stream's later work
/// and, through the tracking, for other streams'.
#[test]
fn to_device_hands_the_data_back_at_once_and_orders_the_copy_on_its_stream() {
    let _turn = one_at_a_time();
    let stream = Stream::new().unwrap();
    let n = 4099;
    let mut data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let expected = data.clone();
    // The stream is busy: the copy queues behind that work.
    let held = hold(&stream, 200);
    let x = DeviceBuffer::to_device(&data, &stream).unwrap();
    data.fill(-1.0);
    drop(data);
    let mut twice = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    launch!(add_kernel[blocks(n), 256, stream](&x, &x, &mut twice)).unwrap();
    // Another stream, on another thread, reads after the copy.
    let seen = std::thread::scope(|scope| {
        scope
            .spawn(|| x.copy_to_host_sync(&Stream::new().unwrap()).unwrap())
            .join()
            .unwrap()
    });
    assert_eq!(seen, expected);
    let doubled: Vec<f32> = expected.iter().map(|v| 2.0 * v).collect();
    assert_eq!(twice.copy_to_host_sync(&stream).unwrap(), doubled);
    held.join().unwrap();
    // Into an existing buffer, of the wrong length: an error naming both.
    let mut y = DeviceBuffer::<f32>::zeroed_on(8, &stream).unwrap();
    match y.copy_from_host(&[1.0; 7], &stream) {
        Err(Error::LengthMismatch {
            destination: 8,
            source: 7,
            ..
        }) => {}
        other => panic!("expected a length mismatch, got {other:?}"),
    }
    y.copy_from_host(&[3.0; 8], &stream).unwrap();
    assert_eq!(y.copy_to_host_sync(&stream).unwrap(), vec![3.0; 8]);
}

#[test]
fn to_device_sync_has_completed_on_the_device_when_it_returns() {
    let _turn = one_at_a_time();
    let stream = Stream::new().unwrap();
    let data = vec![1.5f32; 4096];
    let warm = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    drop(warm);
    let held = hold(&stream, 300);
    let start = Instant::now();
    let x = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "the copy waited for the held stream"
    );
    assert!(stream.is_done().unwrap(), "nothing is left in flight");
    held.join().unwrap();
    // Other threads, on their own streams, see the data at once.
    let seen: Vec<Vec<f32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let own = Stream::new().unwrap();
                    x.copy_to_host_sync(&own).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(seen.iter().all(|v| v == &data));
}

#[test]
fn fill_and_zero_rewrite_a_buffer_in_place() {
    let stream = Stream::new().unwrap();
    for n in [1usize, 7, 1000, 4097] {
        let mut x = DeviceBuffer::<[u16; 3]>::zeroed_on(n, &stream).unwrap();
        let address = x.as_raw();
        x.fill([1, 2, 3], &stream).unwrap();
        assert_eq!(x.copy_to_host_sync(&stream).unwrap(), vec![[1, 2, 3]; n]);
        x.zero(&stream).unwrap();
        assert_eq!(x.copy_to_host_sync(&stream).unwrap(), vec![[0, 0, 0]; n]);
        assert_eq!(x.as_raw(), address, "the buffer was not reallocated");
    }
}

#[test]
fn empty_buffers_of_plain_numbers_skip_the_zeroing() {
    let stream = Stream::new().unwrap();
    let mut x = DeviceBuffer::<f32>::empty_on(1000, &stream).unwrap();
    launch!(fill[4, 256, stream](2.0f32, &mut x)).unwrap();
    assert_eq!(x.copy_to_host_sync(&stream).unwrap(), vec![2.0; 1000]);
}
