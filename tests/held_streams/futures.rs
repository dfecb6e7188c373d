//! Futures for stream and event completion: woken by the driver's callback
//! (each future is polled a handful of times, never in a loop), usable from a
//! single-threaded tokio runtime with many streams at once and from a
//! hand-written executor, and carrying the errors `synchronize` reports.

use crate::common;

use common::{hold, one_at_a_time, size};
use gpu_kernels::{busy, fill};
use gpu_runtime::{launch, DeviceBuffer, Done, Error, PinnedBuffer, Pipeline, Stream};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// A future that counts how often it is polled.
struct Counted<F> {
    inner: F,
    polls: Arc<AtomicUsize>,
}

impl<F: Future + Unpin> Future for Counted<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, Ordering::Relaxed);
        Pin::new(&mut self.inner).poll(cx)
    }
}

fn single_threaded() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn a_single_threaded_runtime_awaits_64_streams_at_once() {
    let _turn = one_at_a_time();
    let n = size(1 << 16, 1 << 10);
    let streams: Vec<Stream> = (0..64).map(|_| Stream::new().unwrap()).collect();
    let mut buffers: Vec<DeviceBuffer<u32>> = streams
        .iter()
        .map(|s| DeviceBuffer::<u32>::zeroed_on(n, s).unwrap())
        .collect();
    // Every stream is held until all futures exist, so none is done early.
    // The clock starts before the holds: each is released 200 ms after it
    // was made, however long the launches below take (slow under a sanitizer).
    let start = Instant::now();
    let holds: Vec<_> = streams.iter().map(|s| hold(s, 200)).collect();
    for (i, (s, b)) in streams.iter().zip(&mut buffers).enumerate() {
        launch!(fill[n.div_ceil(256), 256, s](i as u32 + 1, b)).unwrap();
    }
    // Recorded before the futures: complete once they are (the stream itself
    // is done only when the callback that wakes a future has returned).
    let filled: Vec<_> = streams.iter().map(|s| s.record().unwrap()).collect();
    let polls: Vec<Arc<AtomicUsize>> = (0..64).map(|_| Arc::default()).collect();
    let runtime = single_threaded();
    let finished = runtime.block_on(async {
        let tasks: Vec<_> = streams
            .iter()
            .zip(&polls)
            .enumerate()
            .map(|(i, (s, polls))| {
                let done = Counted {
                    inner: s.async_done().unwrap(),
                    polls: Arc::clone(polls),
                };
                tokio::spawn(async move {
                    done.await.unwrap();
                    (i, Instant::now())
                })
            })
            .collect();
        let mut finished = Vec::new();
        for t in tasks {
            finished.push(t.await.unwrap());
        }
        finished
    });
    for (i, at) in finished {
        assert!(
            at - start >= Duration::from_millis(200),
            "stream {i} was held: its future completed after the hold"
        );
        // Done: the work queued before the future has finished.
        assert!(filled[i].is_done().unwrap());
        assert_eq!(
            buffers[i].copy_to_host_sync(&streams[i]).unwrap(),
            vec![i as u32 + 1; n]
        );
    }
    for (i, p) in polls.iter().enumerate() {
        let p = p.load(Ordering::Relaxed);
        assert!(
            (1..=3).contains(&p),
            "future {i} was polled {p} times: woken once by the driver, not polled in a loop"
        );
    }
    for h in holds {
        h.join().unwrap();
    }
}

/// A kernel on `stream` that runs for about `ms` milliseconds. (A kernel,
/// not a blocking callback: on a GPU the driver may run the callbacks of all
/// streams on one thread, so a blocked callback would hold up the futures'.)
fn long_kernel(stream: &Stream, ms: f64) -> (DeviceBuffer<f32>, DeviceBuffer<f32>, u32) {
    let n = size(1 << 16, 1 << 10);
    let x = DeviceBuffer::to_device_sync(&vec![0.5f32; n], stream).unwrap();
    let mut out = DeviceBuffer::<f32>::device_array(n).unwrap();
    let rounds = gpu_kernels::busy_rounds_lasting(ms, &x, &mut out, stream).unwrap();
    (x, out, rounds)
}

#[test]
fn a_future_waits_for_the_work_queued_before_it_and_not_after() {
    let _turn = one_at_a_time();
    let s = Stream::new().unwrap();
    let (x, mut out, rounds) = long_kernel(&s, 400.0);
    let n = x.len();
    let mut first = DeviceBuffer::<f32>::device_array(n).unwrap();
    launch!(fill[n.div_ceil(256), 256, s](7.0f32, &mut first)).unwrap();
    let done = s.async_done().unwrap();
    launch!(busy[n.div_ceil(256), 256, s](&x, rounds, &mut out)).unwrap();
    single_threaded().block_on(done).unwrap();
    assert!(
        !s.is_done().unwrap(),
        "the future completed before the kernel queued after it finished"
    );
    s.synchronize().unwrap();
    assert_eq!(first.copy_to_host_sync(&s).unwrap(), vec![7.0; n]);
}

#[test]
fn an_event_future_completes_at_the_event_not_at_the_streams_end() {
    let _turn = one_at_a_time();
    let s = Stream::new().unwrap();
    let (x, mut out, rounds) = long_kernel(&s, 400.0);
    let n = x.len();
    let event = s.record().unwrap();
    launch!(busy[n.div_ceil(256), 256, s](&x, rounds, &mut out)).unwrap();
    single_threaded()
        .block_on(event.async_done().unwrap())
        .unwrap();
    assert!(event.is_done().unwrap());
    assert!(
        !s.is_done().unwrap(),
        "the event's future waited for the work after the event"
    );
    s.synchronize().unwrap();
}

#[test]
fn two_event_futures_do_not_wait_for_each_other() {
    let _turn = one_at_a_time();
    let (slow, quick) = (Stream::new().unwrap(), Stream::new().unwrap());
    let (x, mut out, rounds) = long_kernel(&slow, 400.0);
    let n = x.len();
    launch!(busy[n.div_ceil(256), 256, slow](&x, rounds, &mut out)).unwrap();
    let late = slow.record().unwrap();
    let early = quick.record().unwrap();
    // The slow event's future first: the quick one's must not queue behind it.
    let late_done = late.async_done().unwrap();
    single_threaded()
        .block_on(early.async_done().unwrap())
        .unwrap();
    assert!(
        !late.is_done().unwrap(),
        "the quick event's future waited for the slow one's"
    );
    single_threaded().block_on(late_done).unwrap();
    assert!(late.is_done().unwrap());
}

#[test]
fn an_event_never_recorded_is_done_at_once() {
    let event = gpu_runtime::Event::new().unwrap();
    single_threaded()
        .block_on(event.async_done().unwrap())
        .unwrap();
}

#[test]
fn a_panicking_callback_is_the_futures_error() {
    let s = Stream::new().unwrap();
    s.add_callback(|| panic!("callback boom")).unwrap();
    let err = single_threaded()
        .block_on(s.async_done().unwrap())
        .unwrap_err();
    match err {
        Error::CallbackPanicked { messages, .. } => {
            assert_eq!(messages, vec!["callback boom".to_string()])
        }
        other => panic!("expected CallbackPanicked, got {other:?}"),
    }
    // Reported once, as by synchronize.
    s.synchronize().unwrap();
}

/// A minimal executor: parks the thread until the waker unparks it.
fn block_on<F: Future>(future: F) -> (F::Output, usize) {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, polls);
        }
        std::thread::park();
    }
}

#[test]
fn any_executor_drives_the_futures() {
    let _turn = one_at_a_time();
    let s = Stream::new().unwrap();
    let held = hold(&s, 200);
    let n = 4096;
    let mut x = DeviceBuffer::<f32>::zeroed_on(n, &s).unwrap();
    launch!(fill[n.div_ceil(256), 256, s](2.5f32, &mut x)).unwrap();
    let (result, polls) = block_on(s.async_done().unwrap());
    result.unwrap();
    // Parking can wake spuriously, but not once per microsecond as a loop would.
    assert!(polls <= 5, "polled {polls} times");
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![2.5; n]);
    held.join().unwrap();
}

#[test]
fn done_all_joins_futures_and_reports_the_first_error() {
    let (a, b) = (Stream::new().unwrap(), Stream::new().unwrap());
    b.add_callback(|| panic!("second")).unwrap();
    let all = Done::all([a.async_done().unwrap(), b.async_done().unwrap()]);
    let err = single_threaded().block_on(all).unwrap_err();
    assert!(err.to_string().contains("second"), "{err}");
    let none = Done::all([]);
    single_threaded().block_on(none).unwrap();
}

#[test]
fn the_async_pipeline_overlaps_one_batch_with_the_next() {
    let streams = [Stream::new().unwrap(), Stream::new().unwrap()];
    let n = size(1 << 20, 1 << 12);
    let inputs: Vec<PinnedBuffer<f32>> = (0..3)
        .map(|b| PinnedBuffer::from_slice(&vec![b as f32; n]).unwrap())
        .collect();
    let mut outputs: Vec<PinnedBuffer<f32>> =
        (0..3).map(|_| PinnedBuffer::new(n).unwrap()).collect();
    let expected = |b: usize| {
        let mut v = b as f32;
        for _ in 0..10 {
            v = v.mul_add(0.999, 0.001);
        }
        v
    };
    let mut pipeline = Pipeline::new(&streams).unwrap();
    let kernel = |s: &Stream,
                  x: gpu_runtime::DeviceView<'_, f32>,
                  out: gpu_runtime::DeviceViewMut<'_, f32>| {
        launch!(busy[x.len().div_ceil(256), 256, s](x, 10, out))
    };
    single_threaded().block_on(async {
        // Batch 0 through the one-call form.
        pipeline
            .run_async(&inputs[0], &mut outputs[0], 4, kernel)
            .await
            .unwrap();
        // Batch 1 queued, batch 2 queued behind it, then batch 1 awaited.
        let (first, rest) = outputs.split_at_mut(2);
        pipeline
            .run(&inputs[1], &mut first[1], 4, None, kernel)
            .unwrap();
        let batch1 = pipeline.async_done().unwrap();
        pipeline
            .run(&inputs[2], &mut rest[0], 4, None, kernel)
            .unwrap();
        batch1.await.unwrap();
        pipeline.async_done().unwrap().await.unwrap();
    });
    for (b, out) in outputs.iter().enumerate() {
        assert!(
            out.as_slice().unwrap().iter().all(|&v| v == expected(b)),
            "batch {b}"
        );
    }
}
