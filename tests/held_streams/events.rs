//! Events and stream callbacks: flags, every error, queries and timing (all
//! of events' timing but across devices, which is `multi_device/peer.rs`,
//! and inside a capture, which is `graphs`), and callbacks in stream order
//! with panics reported.

use crate::common;

use gpu_kernels::fill;
use gpu_runtime::{
    current_stream, get_elapsed_time, launch, DeviceBuffer, Error, Event, EventOptions, Stream,
    StreamOptions,
};
use std::sync::{Arc, Mutex};

#[test]
fn event_errors_are_named() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let (start, end) = (Event::new().unwrap(), Event::new().unwrap());
    assert_eq!(
        Event::elapsed_ms(&start, &end).unwrap_err(),
        Error::EventNotRecorded { which: "start" }
    );
    start.record_on(&stream).unwrap();
    assert_eq!(
        Event::elapsed_ms(&start, &end).unwrap_err(),
        Error::EventNotRecorded { which: "end" }
    );
    end.record_on(&stream).unwrap();
    assert!(Event::elapsed_ms(&start, &end).unwrap() >= 0.0);

    let untimed = Event::with_options(EventOptions::new().timing(false)).unwrap();
    untimed.record_on(&stream).unwrap();
    assert_eq!(
        Event::elapsed_ms(&untimed, &end).unwrap_err(),
        Error::EventTimingDisabled { which: "start" }
    );
    let err = get_elapsed_time(&start, &untimed).unwrap_err();
    assert_eq!(err, Error::EventTimingDisabled { which: "end" });
    assert!(err.to_string().contains("timing disabled"));

    let err = Event::with_options(EventOptions::new().interprocess(true))
        .err()
        .unwrap();
    assert!(matches!(err, Error::InvalidEventOptions { .. }), "{err:?}");
    assert!(err.to_string().contains("timing disabled"), "{err}");
    let ipc = Event::with_options(EventOptions::new().interprocess(true).timing(false)).unwrap();
    ipc.record_on(&stream).unwrap();
    ipc.synchronize().unwrap();
}

#[test]
fn elapsed_time_waits_for_an_unfinished_end_event() {
    let _turn = common::one_at_a_time();
    let stream = Stream::with_options(StreamOptions::new().priority(0)).unwrap();
    let start = Event::with_options(EventOptions::new().blocking_sync(true)).unwrap();
    start.record_on(&stream).unwrap();
    // A callback that holds the stream until the test lets it go: the end
    // event cannot complete before that.
    let (release, gate) = std::sync::mpsc::channel::<()>();
    stream
        .add_callback(move || {
            let _ = gate.recv_timeout(std::time::Duration::from_secs(10));
        })
        .unwrap();
    let end = stream.record().unwrap();
    assert!(
        !end.is_done().unwrap(),
        "the stream is held by the callback"
    );
    // The hold's 50 ms start once the start event has completed, so that a
    // slow machine reaching it late cannot shorten the time measured.
    start.synchronize().unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        release.send(()).unwrap();
    });
    let ms = Event::elapsed_ms(&start, &end).unwrap(); // waits instead of failing
    releaser.join().unwrap();
    assert!(end.is_done().unwrap());
    assert!(
        ms >= 45.0,
        "{ms} ms: the held stream took at least the 50 ms hold"
    );
    // Recording on the current stream.
    let e = Event::new().unwrap();
    e.record().unwrap();
    current_stream().unwrap().synchronize().unwrap();
    assert!(e.is_done().unwrap());
}

#[test]
fn stream_priorities_are_accepted() {
    let _turn = common::one_at_a_time();
    let (least, greatest) = Stream::priority_range().unwrap();
    assert!(greatest <= least);
    for priority in [least, greatest] {
        let s = Stream::with_options(StreamOptions::new().priority(priority)).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed_on(100, &s).unwrap();
        launch!(fill[1, 128, s](7u32, &mut x)).unwrap();
        assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![7; 100]);
    }
    let blocking = Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
    blocking.synchronize().unwrap();
}

#[test]
fn callbacks_fire_in_stream_order_and_panics_are_reported() {
    let _turn = common::one_at_a_time();
    let stream = Stream::new().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let n = common::size(1 << 22, 1 << 14);
    let mut x = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    for i in 0..100u32 {
        if i % 10 == 0 {
            launch!(fill[n / 256, 256, stream](i as f32, &mut x)).unwrap();
        }
        let log = Arc::clone(&log);
        stream
            .add_callback(move || log.lock().unwrap().push(i))
            .unwrap();
    }
    stream.synchronize().unwrap();
    assert_eq!(*log.lock().unwrap(), (0..100).collect::<Vec<u32>>());

    // A panic is caught, later callbacks still run, and synchronize reports it.
    let after = Arc::new(Mutex::new(false));
    stream
        .add_callback(|| panic!("callback number 100 failed"))
        .unwrap();
    let flag = Arc::clone(&after);
    stream
        .add_callback(move || *flag.lock().unwrap() = true)
        .unwrap();
    let err = stream.synchronize().unwrap_err();
    match &err {
        Error::CallbackPanicked { messages, .. } => {
            assert_eq!(messages, &["callback number 100 failed"])
        }
        other => panic!("expected CallbackPanicked, got {other:?}"),
    }
    assert!(*after.lock().unwrap());
    stream.synchronize().unwrap(); // reported once

    // CUDA calls inside a callback are refused, not attempted.
    let seen = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&seen);
    stream
        .add_callback(move || *slot.lock().unwrap() = Some(Stream::new().map(|_| ())))
        .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        seen.lock().unwrap().take(),
        Some(Err(Error::CalledFromCallback))
    );
}

/// A callback's panic on the per-thread default stream is reported by the
/// stream's next synchronize, through whichever handle of it: each
/// `Stream::per_thread()` call makes a new handle, and the panic queued
/// through one used to be kept by that handle alone, so a synchronize
/// through another returned `Ok`.
#[test]
fn a_callback_panic_on_the_per_thread_stream_is_reported_through_any_handle() {
    std::thread::spawn(|| {
        Stream::per_thread()
            .add_callback(|| panic!("per-thread callback failed"))
            .unwrap();
        match Stream::per_thread().synchronize() {
            Err(Error::CallbackPanicked { messages, .. }) => {
                assert_eq!(messages, ["per-thread callback failed"])
            }
            other => panic!("expected CallbackPanicked, got {other:?}"),
        }
        Stream::per_thread().synchronize().unwrap(); // reported once
    })
    .join()
    .unwrap();
}

#[test]
fn stream_and_event_queries_and_timing() {
    let stream = Stream::new().unwrap();
    let n = common::size(1 << 24, 1 << 16);
    let mut x = DeviceBuffer::<f32>::device_array(n).unwrap();
    let start = Event::new().unwrap();
    start.record_on(&stream).unwrap();
    for _ in 0..50 {
        launch!(fill[n / 256, 256, stream](1.0f32, &mut x)).unwrap();
    }
    let end = stream.record().unwrap();
    let ms = Event::elapsed_ms(&start, &end).unwrap();
    assert!(end.is_done().unwrap(), "elapsed_ms waits for the end event");
    assert!(stream.is_done().unwrap());
    assert!(ms > 0.0 && ms.is_finite(), "{ms} ms");
    assert_eq!(
        stream.to_string(),
        format!("<Stream {} (device 0)>", stream.as_raw() as usize)
    );
    let null = Stream::null();
    assert_eq!(null.to_string(), "<Stream 0 (device -1)>");
    assert_eq!(Stream::per_thread().to_string(), "<Stream 2 (device -1)>");
    null.synchronize().unwrap();
    Stream::per_thread().synchronize().unwrap();
    gpu_runtime::synchronize().unwrap();
}
