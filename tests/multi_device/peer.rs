//! Peer copies and their ordering across devices, peer access for launches,
//! events and pipelines across devices.

use super::{blocks, devices, filled, streams_of};
use crate::common::{hold, one_at_a_time, size};
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, DeviceBuffer, Error, Event, PinnedBuffer, Pipeline, Stream};
use std::time::{Duration, Instant};

pub fn peer_copies_carry_data_around_every_device() {
    let devices = devices();
    let streams = streams_of(&devices);
    let n = size(1 << 20, 1 << 12);
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut current = DeviceBuffer::to_device_sync(&data, &streams[0]).unwrap();
    // Device 0 -> 1 -> ... -> last -> 0, each copy on the destination's stream.
    for (i, stream) in streams.iter().enumerate().skip(1).chain([(0, &streams[0])]) {
        let mut next = DeviceBuffer::<f32>::zeroed_on(n, stream).unwrap();
        next.copy_from_device(&current, stream).unwrap();
        assert_eq!(next.device(), i);
        current = next;
    }
    assert_eq!(current.copy_to_host_sync(&streams[0]).unwrap(), data);
    // clone_on, on the source's stream this time.
    let copy = current.clone_on(&streams[1]).unwrap();
    assert_eq!(copy.device(), devices[1].ordinal());
    assert_eq!(copy.copy_to_host_sync(&streams[1]).unwrap(), data);
}

pub fn a_peer_copy_waits_for_the_kernel_writing_its_source() {
    // Timed: in a process of its own, where no other test's module load
    // (the driver compiling a large PTX module, on a machine whose compile
    // cache is cold) can hold the host meanwhile.
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut source = filled(n, 0.0, &s0);
    let mut target = filled(n, -1.0, &s1);
    let held = hold(&s0, 300);
    launch!(fill[blocks(n), 256, s0](5.0f32, &mut source)).unwrap();
    // On device 1's stream: without the ordering it would copy the zeros now.
    target.copy_from_device(&source, &s1).unwrap();
    let start = Instant::now();
    assert_eq!(target.copy_to_host_sync(&s1).unwrap(), vec![5.0; n]);
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "the copy waited for device 0's kernel"
    );
    held.join().unwrap();
}

/// A copy to another device is queued, not waited for: `clone_on` (and
/// `copy_from_device`) return while the source's stream is still held, the
/// destination stream waits on the device, and the copy holds what the
/// source's kernel wrote once the hold ends (CuPy queues such copies too).
pub fn a_copy_between_devices_is_queued_not_waited_for() {
    // Timed: in a process of its own, where no other test's module load
    // (the driver compiling a large PTX module, on a machine whose compile
    // cache is cold) can hold the host meanwhile.
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut source = filled(n, 0.0, &s0);
    let mut into = filled(n, -1.0, &s1);
    // Held until released below, or for 20 s: a copy that waited on the
    // host for `s0` returns only then, with `s0` done.
    let (release, gate) = std::sync::mpsc::channel::<()>();
    s0.add_callback(move || {
        let _ = gate.recv_timeout(Duration::from_secs(20));
    })
    .unwrap();
    launch!(fill[blocks(n), 256, s0](5.0f32, &mut source)).unwrap();
    let cloned = source.clone_on(&s1).unwrap();
    into.copy_from_device(&source, &s1).unwrap();
    let source_done = s0.is_done().unwrap();
    let copies_done = s1.is_done().unwrap();
    release.send(()).unwrap();
    assert!(
        !source_done,
        "the copies waited on the host for the source's stream"
    );
    assert!(
        !copies_done,
        "the copies ran before their source was written"
    );
    assert_eq!(cloned.copy_to_host_sync(&s1).unwrap(), vec![5.0; n]);
    assert_eq!(into.copy_to_host_sync(&s1).unwrap(), vec![5.0; n]);
}

pub fn a_buffer_written_by_a_peer_copy_is_read_after_it() {
    let _turn = one_at_a_time();
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let source = filled(n, 3.0, &s0);
    let mut target = filled(n, 0.0, &s1);
    let ones = filled(n, 1.0, &s1);
    let mut out = filled(n, 0.0, &s1);
    let held = hold(&s0, 300);
    // The copy into device 1's buffer runs on device 0's held stream; the
    // kernel on device 1 must wait for it.
    target.copy_from_device(&source, &s0).unwrap();
    launch!(add_kernel[blocks(n), 256, s1](&target, &ones, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&s1).unwrap(), vec![4.0; n]);
    held.join().unwrap();
    // Dropping `target` now frees it on device 1 after the copy on device 0.
    drop(target);
    devices[1].synchronize().unwrap();
}

/// The Day 7 pipeline over streams of every device: the pinned buffers'
/// tracking records its events on each stream's own device.
pub fn a_pipeline_spreads_its_chunks_over_every_device() {
    let devices = devices();
    let streams: Vec<Stream> = (0..2).flat_map(|_| streams_of(&devices)).collect();
    let n = size(1 << 20, 1 << 12);
    let input = PinnedBuffer::from_slice(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let mut pipeline = Pipeline::new(&streams).unwrap();
    pipeline
        .run(&input, &mut output, 4 * streams.len(), None, |s, x, out| {
            launch!(gpu_kernels::saxpy[x.len().div_ceil(256), 256, s](2.0f32, x, x, out))
        })
        .unwrap();
    let expected: Vec<f32> = (0..n).map(|i| 3.0 * i as f32).collect();
    assert_eq!(output.as_slice().unwrap(), &expected[..]);
}

pub fn events_of_two_devices_have_no_elapsed_time_between_them() {
    let devices = devices();
    let streams = streams_of(&devices);
    let (start, end) = (streams[0].record().unwrap(), streams[1].record().unwrap());
    let err = Event::elapsed_ms(&start, &end).unwrap_err();
    assert_eq!(
        err,
        Error::EventsOfTwoDevices {
            start_device: 0,
            end_device: 1
        }
    );
    // Device 1 waits for an event of device 0; device 0 times the whole.
    streams[1].wait_event(&start).unwrap();
    let done_on_1 = streams[1].record().unwrap();
    streams[0].wait_event(&done_on_1).unwrap();
    let end_on_0 = streams[0].record().unwrap();
    assert!(Event::elapsed_ms(&start, &end_on_0).unwrap() >= 0.0);
}

pub fn copies_need_a_stream_of_one_of_their_devices() {
    let devices = devices();
    let streams = streams_of(&devices);
    let a = filled(16, 1.0, &streams[0]);
    let mut b = filled(16, 0.0, &streams[0]);
    match b.copy_from_device(&a, &streams[1]) {
        Err(Error::DeviceMismatch {
            buffer_device: 0,
            stream_device: 1,
        }) => {}
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
    if devices.len() >= 3 {
        let mut c = filled(16, 0.0, &streams[1]);
        let err = c.copy_from_device(&a, &streams[2]).unwrap_err();
        assert_eq!(
            err,
            Error::PeerCopyOnOtherDevice {
                source_device: 0,
                destination_device: 1,
                stream_device: 2
            }
        );
        assert!(
            err.to_string().contains("use a stream of either device"),
            "{err}"
        );
    }
    let mut short = filled(8, 0.0, &streams[1]);
    assert!(matches!(
        short.copy_from_device(&a, &streams[1]),
        Err(Error::LengthMismatch {
            destination: 8,
            source: 16,
            ..
        })
    ));
}

/// The one test that enables peer access (it stays on for the process).
pub fn launches_use_another_devices_buffer_only_with_peer_access() {
    let devices = devices();
    let (d0, d1) = (devices[0], devices[1]);
    let (s0, s1) = (
        Stream::on_device(d0).unwrap(),
        Stream::on_device(d1).unwrap(),
    );
    let n = 1024;
    let on0 = filled(n, 1.0, &s0);
    let on1 = filled(n, 2.0, &s1);
    let mut out0 = filled(n, 0.0, &s0);
    let mut out1 = filled(n, 0.0, &s1);
    let err = launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongDevice {
                parameter: "b",
                buffer_device: 1,
                stream_device: 0,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("argument `b` is on device 1 but the stream is on device 0")
            && message.contains("enable_peer_access"),
        "{message}"
    );
    assert!(
        d0.can_access_peer(d0).unwrap(),
        "a device reaches its own memory"
    );
    if !d1.can_access_peer(d0).unwrap() {
        // No peer link on this machine: the error says so.
        assert_eq!(
            d1.enable_peer_access(d0).unwrap_err(),
            Error::PeerAccessUnsupported { device: 1, peer: 0 }
        );
        return;
    }
    d1.enable_peer_access(d0).unwrap();
    d1.enable_peer_access(d0).unwrap(); // again: no error
    assert!(d1.peer_access_enabled(d0));
    assert!(!d0.peer_access_enabled(d1), "peer access is one way");
    // Device 1 reads device 0's buffer, and writes one of device 0 too.
    launch!(add_kernel[blocks(n), 256, s1](&on0, &on1, &mut out1)).unwrap();
    assert_eq!(out1.copy_to_host_sync(&s1).unwrap(), vec![3.0; n]);
    launch!(add_kernel[blocks(n), 256, s1](&on1, &on1, &mut out0)).unwrap();
    assert_eq!(
        out0.copy_to_host_sync(&s0).unwrap(),
        vec![4.0; n],
        "read on device 0 after device 1's kernel"
    );
    // The other direction is still refused.
    assert!(launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).is_err());
    d0.enable_peer_access(d1).unwrap();
    launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).unwrap();
    assert_eq!(out0.copy_to_host_sync(&s0).unwrap(), vec![3.0; n]);
    // Once pools grant access, writes from the other device still land, by
    // kernels and by peer copies (a driver bug reported on Turing with driver
    // 590 dropped them: NVIDIA bug 6098762).
    launch!(add_kernel[blocks(n), 256, s0](&on0, &on0, &mut out1)).unwrap();
    assert_eq!(out1.copy_to_host_sync(&s1).unwrap(), vec![2.0; n]);
    out1.copy_from_device(&on0, &s0).unwrap();
    assert_eq!(out1.copy_to_host_sync(&s1).unwrap(), vec![1.0; n]);
    out0.copy_from_device(&on1, &s1).unwrap();
    assert_eq!(out0.copy_to_host_sync(&s0).unwrap(), vec![2.0; n]);
}

/// `gpu_ops::matmul` multiplies buffers of its stream's device only (peer
/// access or not): one of another device is an error naming it, before
/// any work is queued.
pub fn matmul_refuses_another_devices_buffer() {
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let (a, b) = (filled(6, 1.0, &s0), filled(6, 1.0, &s1));
    let err = gpu_ops::matmul_on(&a, (2, 3), &b, (3, 2), &s0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                operation: "gpu_ops::matmul",
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("`b` is on device 1, but the stream is on device 0"),
        "{message}"
    );
    let message = gpu_ops::matmul_on(&a, (2, 3), &b, (3, 2), &s1)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`a` is on device 0, but the stream is on device 1"),
        "{message}"
    );
    // Both on device 1: the product, [[3, 3], [3, 3]].
    let a1 = filled(6, 1.0, &s1);
    let c = gpu_ops::matmul_on(&a1, (2, 3), &b, (3, 2), &s1).unwrap();
    assert_eq!(c.copy_to_host_sync(&s1).unwrap(), vec![3.0; 4]);
}
