//! The details of CuPy's and Numba's stream semantics that a port relies on:
//! streams as hash keys, stream properties read back, the legacy default
//! stream's implicit synchronisation, streams dropped inside callbacks.
//!
//! Tests that hold a stream observe other streams with non-blocking queries
//! only until they release the hold (themselves, or by a timer where they
//! block): on a GPU, host callbacks may share one driver thread, so one held
//! callback can hold back another stream's callbacks (but not its kernels
//! and events).

use crate::common;

use common::{hold, one_at_a_time};
use gpu_kernels::fill;
use gpu_runtime::{
    launch, Device, DeviceBuffer, Event, EventOptions, Stream, StreamKind, StreamOptions,
};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

#[test]
// A `Stream` holds mutable bookkeeping behind its `Arc`, which this lint sees,
// but its `Hash` and `Eq` read only what is fixed at creation (see `Stream`).
#[allow(clippy::mutable_key_type)]
fn streams_key_hash_maps() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut per_stream: HashMap<Stream, u32> = HashMap::new();
    *per_stream.entry(s1.clone()).or_default() += 1;
    *per_stream.entry(s2.clone()).or_default() += 1;
    *per_stream.entry(s1.clone()).or_default() += 1;
    *per_stream.entry(Stream::null()).or_default() += 1;
    *per_stream.entry(Stream::null()).or_default() += 1;
    assert_eq!(per_stream[&s1], 2);
    assert_eq!(per_stream[&s2], 1);
    assert_eq!(per_stream[&Stream::null()], 2);
    let mut seen: HashSet<Stream> = HashSet::new();
    seen.insert(Stream::per_thread());
    let other_thread = std::thread::spawn(Stream::per_thread).join().unwrap();
    assert!(
        seen.insert(other_thread),
        "another thread's per-thread stream is another key"
    );
    assert!(!seen.insert(Stream::per_thread()));
}

#[test]
fn stream_properties_can_be_read_back() {
    let _turn = one_at_a_time();
    let s = Stream::new().unwrap();
    assert_eq!(s.kind(), StreamKind::Owned);
    assert!(s.is_owned());
    assert!(s.is_non_blocking().unwrap());
    assert_eq!(s.priority().unwrap(), 0);

    let (least, greatest) = Stream::priority_range().unwrap();
    let urgent =
        Stream::with_options(StreamOptions::new().non_blocking(false).priority(greatest)).unwrap();
    assert!(!urgent.is_non_blocking().unwrap());
    assert_eq!(urgent.priority().unwrap(), greatest);
    let clamped = Stream::with_options(StreamOptions::new().priority(least + 100)).unwrap();
    assert_eq!(
        clamped.priority().unwrap(),
        least,
        "priorities are clamped to the range"
    );

    let null = Stream::null();
    assert_eq!(null.kind(), StreamKind::LegacyDefault);
    assert!(!null.is_non_blocking().unwrap() && !null.is_owned());
    assert_eq!(Stream::per_thread().kind(), StreamKind::PerThreadDefault);

    // Another library's stream: flags asked of the driver.
    let device = Device::current().unwrap();
    // SAFETY: `urgent` is a live stream of `device` and outlives `wrapped`.
    let wrapped = unsafe { Stream::from_external(urgent.as_raw(), device) };
    assert_eq!(wrapped.kind(), StreamKind::External);
    assert!(!wrapped.is_owned());
    assert!(!wrapped.is_non_blocking().unwrap());
    assert_eq!(wrapped.priority().unwrap(), greatest);
    assert_eq!(wrapped, urgent);
}

/// An event recorded on `stream` after a small kernel, queued now.
fn mark(stream: &Stream, x: &mut DeviceBuffer<u32>) -> Event {
    launch!(fill[1, 32, stream](1u32, &mut *x)).unwrap();
    let event = Event::with_options(EventOptions::new().timing(false)).unwrap();
    event.record_on(stream).unwrap();
    event
}

/// Whether `event` completes within `within`, polling without blocking.
fn completes_within(event: &Event, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if event.is_done().unwrap() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    event.is_done().unwrap()
}

/// How long a marker that must wait for a held stream is watched.
const WAITS: Duration = Duration::from_millis(200);
/// How long a marker that must not wait is given (it is watched until done).
const RUNS: Duration = Duration::from_secs(10);

/// Holds `held` with a callback, queues a marker on `other`, watches it for
/// up to `within` (until done), then releases the hold; says whether the
/// marker completed while `held` was held. Only this thread releases the
/// hold (the callback's own 30 s limit aside), so however slowly the machine
/// runs the test, a marker that completed did run past the hold.
fn ran_while_held(held: &Stream, other: &Stream, within: Duration) -> bool {
    let mut x = DeviceBuffer::<u32>::zeroed_on(32, other).unwrap();
    mark(other, &mut x).synchronize().unwrap(); // loads the module first
    let (release, gate) = std::sync::mpsc::channel::<()>();
    held.add_callback(move || {
        let _ = gate.recv_timeout(Duration::from_secs(30));
    })
    .unwrap();
    let marker = mark(other, &mut x);
    let ran = completes_within(&marker, within);
    let _ = release.send(());
    held.synchronize().unwrap();
    other.synchronize().unwrap();
    ran
}

#[test]
fn legacy_stream_work_waits_for_blocking_streams() {
    let _turn = one_at_a_time();
    for round in 0..3 {
        let blocking = Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
        assert!(
            !ran_while_held(&blocking, &Stream::null(), WAITS),
            "round {round}: the legacy stream ran past a held blocking stream"
        );
    }
}

#[test]
fn blocking_streams_wait_for_the_legacy_stream() {
    let _turn = one_at_a_time();
    for round in 0..3 {
        let blocking = Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
        assert!(
            !ran_while_held(&Stream::null(), &blocking, WAITS),
            "round {round}: a blocking stream ran past the held legacy stream"
        );
    }
}

#[test]
fn the_per_thread_stream_and_the_legacy_stream_wait_for_each_other() {
    let _turn = one_at_a_time();
    for round in 0..3 {
        assert!(
            !ran_while_held(&Stream::per_thread(), &Stream::null(), WAITS),
            "round {round}: the legacy stream ran past the held per-thread stream"
        );
        assert!(
            !ran_while_held(&Stream::null(), &Stream::per_thread(), WAITS),
            "round {round}: the per-thread stream ran past the held legacy stream"
        );
    }
}

#[test]
fn non_blocking_streams_do_not_wait_for_the_legacy_stream() {
    let _turn = one_at_a_time();
    for round in 0..3 {
        let free = Stream::new().unwrap();
        assert!(
            ran_while_held(&Stream::null(), &free, RUNS),
            "round {round}: a non-blocking stream waited for the legacy stream"
        );
        assert!(
            ran_while_held(&free, &Stream::null(), RUNS),
            "round {round}: the legacy stream waited for a non-blocking stream"
        );
    }
}

#[test]
fn data_filled_on_the_per_thread_stream_reads_back_through_the_legacy_stream() {
    let _turn = one_at_a_time();
    for _ in 0..5 {
        let own = Stream::per_thread();
        let mut x = DeviceBuffer::<u32>::zeroed_on(3, &own).unwrap();
        let held = hold(&own, 100);
        launch!(fill[1, 3, own](7u32, &mut x)).unwrap();
        assert_eq!(x.copy_to_host_sync(&Stream::null()).unwrap(), vec![7, 7, 7]);
        held.join().unwrap();
    }
}

#[test]
fn streams_dropped_inside_their_own_callback_are_destroyed() {
    // It counts the process's threads and deferred releases: in a process
    // of its own, where no other test starts or ends streams or threads.
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let threads = || -> Option<usize> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
    };
    // Drops this thread's handle of a new stream before the stream runs the
    // callback that drops the other: a gate callback ahead of it waits for
    // the drop (without it, a stream that reached the callback first would
    // leave the last handle, and the release, to this thread).
    let last_handle_dropped_in_a_callback = || {
        let stream = Stream::new().unwrap();
        let (open, gate) = std::sync::mpsc::channel::<()>();
        stream
            .add_callback(move || {
                let _ = gate.recv_timeout(Duration::from_secs(10));
            })
            .unwrap();
        let last = stream.clone();
        stream.add_callback(move || drop(last)).unwrap();
        drop(stream);
        open.send(()).unwrap();
    };
    // Warm up: the release thread, the first stream.
    last_handle_dropped_in_a_callback();
    let start = Instant::now();
    while gpu_runtime::__private::deferred_releases_completed() < 1
        && start.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let before_releases = gpu_runtime::__private::deferred_releases_completed();
    std::thread::sleep(Duration::from_millis(200));
    let before_threads = threads();
    for _ in 0..20 {
        last_handle_dropped_in_a_callback();
    }
    let start = Instant::now();
    while gpu_runtime::__private::deferred_releases_completed() < before_releases + 20
        && start.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        gpu_runtime::__private::deferred_releases_completed() >= before_releases + 20,
        "20 streams whose last handle was dropped in a callback were released"
    );
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        // Each simulated stream is a worker thread: none may be left running.
        // (The runtime's own threads may still be ending: wait for the
        // count to settle rather than read it once.)
        let before = before_threads.unwrap();
        let start = Instant::now();
        while threads().unwrap() > before && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let after = threads().unwrap();
        assert!(
            after <= before,
            "{after} threads now, {before} before the 20 streams"
        );
    }
}

/// Runs `work` on `threads` threads at once; fails the test, rather than
/// hanging it, if they have not all finished within a minute.
fn on_threads_within_a_minute(threads: usize, work: impl Fn(usize) + Send + Sync + 'static) {
    let work = std::sync::Arc::new(work);
    let (done, finished) = std::sync::mpsc::channel();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (work, done) = (work.clone(), done.clone());
            std::thread::spawn(move || {
                work(t);
                let _ = done.send(());
            })
        })
        .collect();
    for _ in 0..threads {
        if finished.recv_timeout(Duration::from_secs(60)).is_err() {
            // A thread that panicked dropped its sender: report its panic.
            for handle in handles.into_iter().filter(|h| h.is_finished()) {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            panic!("the threads did not finish within a minute: a deadlock");
        }
    }
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Threads each copy to the device on the legacy default stream, then back
/// on their own blocking stream, 2000 times. All re-record the legacy
/// stream's one ordering event; the simulator deadlocked (4 threads: in 8
/// runs of 8; 2 threads: 2 of 12) when a wait could name a record queued
/// after it (issue 21, item 9).
#[test]
fn threads_alternating_the_legacy_stream_and_their_blocking_streams_do_not_deadlock() {
    let _turn = one_at_a_time();
    on_threads_within_a_minute(4, |t| {
        let own = Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
        for i in 0..2000u32 {
            let x = DeviceBuffer::from_host_sync(&[i, t as u32, i]).unwrap();
            assert_eq!(x.copy_to_host_sync(&own).unwrap(), vec![i, t as u32, i]);
        }
    });
}

/// CuPy's `TestExternalStream.test_get_and_add_callback` and
/// `test_launch_host_func`, on four threads at once: arrays made on the
/// legacy default stream are read back on a blocking stream made elsewhere
/// and wrapped (`cudaStreamCreate`'s streams are blocking), each followed by
/// a callback; the callbacks run in order. The simulator deadlocked in 6
/// runs of 8.
#[test]
fn cupys_external_stream_callbacks_on_four_threads_do_not_deadlock() {
    let _turn = one_at_a_time();
    on_threads_within_a_minute(4, |_| {
        let made_elsewhere =
            Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap();
        let device = Device::current().unwrap();
        // SAFETY: `made_elsewhere` is a live stream of `device` and outlives
        // `stream`.
        let stream = unsafe { Stream::from_external(made_elsewhere.as_raw(), device) };
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for i in 0..1000u32 {
            let array = DeviceBuffer::from_host_sync(&[i; 6]).unwrap();
            assert_eq!(array.copy_to_host_sync(&stream).unwrap(), vec![i; 6]);
            let seen = seen.clone();
            stream
                .add_callback(move || seen.lock().unwrap().push(i))
                .unwrap();
        }
        stream.synchronize().unwrap();
        assert_eq!(*seen.lock().unwrap(), (0..1000).collect::<Vec<u32>>());
    });
}
