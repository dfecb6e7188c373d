//! [`Done`]: a future that completes when streams reach a point, woken by the
//! driver rather than polled.
//!
//! Creating one queues a driver callback on each stream
//! ([`Driver::stream_add_callback`](crate::backend)). When a stream reaches
//! it, the callback stores the status of the work before it and wakes the
//! task that last polled the future, through the [`Waker`] that poll stored.
//! Nothing polls the device and no thread blocks, so any executor works
//! (tokio, async-std, `futures::executor`, a hand-written one).
//!
//! The callback is CUDA's `cuStreamAddCallback` rather than
//! `cuLaunchHostFunc`: a host function is never called once a kernel has
//! faulted, so a future woken by one would never complete after a fault;
//! the callback is called exactly once in every case, with the error, and
//! the future completes with [`Error::KernelFailed`](crate::Error::KernelFailed).

use crate::backend::{driver, DriverError, StreamHandle, MAX_DEVICES};
use crate::callback::while_in_callback;
use crate::device::Device;
use crate::error::Result;
use crate::stream::{Event, Stream, WAITS};
use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Turns a stream's status at the callback into the future's result (on the
/// task that polls, not on the driver's thread).
pub(crate) type Finish = Box<dyn FnOnce(i32) -> Result<()> + Send>;

/// What the driver's callback and the future share.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The status the callback was called with, once it was.
    status: Option<i32>,
    /// The waker of the task that polled last.
    waker: Option<Waker>,
}

/// One stream's callback and what to make of its status.
struct Part {
    shared: Arc<Shared>,
    finish: Option<Finish>,
}

/// A future that completes when the streams it was made for have reached
/// the point where it was made: the work queued on them before it has
/// finished. Made by [`Stream::async_done`](crate::Stream::async_done) and
/// [`Event::async_done`](crate::Event::async_done), and joined by
/// [`Done::all`].
///
/// Its output is what `synchronize` would have returned: a kernel that
/// failed, or a stream callback that panicked, is an error. It works with any
/// executor; dropping it before it completes is fine.
#[must_use = "a future does nothing unless awaited"]
pub struct Done {
    parts: Vec<Part>,
}

impl Done {
    /// A future that is complete already, with `result`.
    pub(crate) fn ready(result: Result<()>) -> Done {
        let shared = Arc::new(Shared::default());
        shared.lock().status = Some(0);
        Done {
            parts: vec![Part {
                shared,
                finish: Some(Box::new(move |_| result)),
            }],
        }
    }

    /// A future for the point the stream `handle` has reached now; `finish`
    /// turns the status into the result.
    pub(crate) fn on_stream(handle: StreamHandle, finish: Finish) -> Result<Done, DriverError> {
        let shared = Arc::new(Shared::default());
        let user_data = Arc::into_raw(Arc::clone(&shared)) as *mut c_void;
        // SAFETY: `completed` takes back the count leaked for it exactly once,
        // touches no CUDA API (a waker that calls the runtime is refused
        // there: `while_in_callback`), and `Shared` is `Send + Sync`.
        let queued = unsafe { driver().stream_add_callback(handle, completed, user_data) };
        if let Err(e) = queued {
            // SAFETY: the driver refused the callback, so it will never run:
            // the count is still ours.
            drop(unsafe { Arc::from_raw(user_data as *const Shared) });
            return Err(e);
        }
        Ok(Done {
            parts: vec![Part {
                shared,
                finish: Some(finish),
            }],
        })
    }

    /// One future for all of `futures`: it completes when every one has;
    /// its result is the first error among them, in their order.
    pub fn all(futures: impl IntoIterator<Item = Done>) -> Done {
        Done {
            parts: futures.into_iter().flat_map(|d| d.parts).collect(),
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The driver's callback: stores the status and wakes the task.
unsafe extern "C" fn completed(_stream: *mut c_void, status: i32, user_data: *mut c_void) {
    // SAFETY: `user_data` is the count `on_stream` leaked for this call alone.
    let shared = unsafe { Arc::from_raw(user_data as *const Shared) };
    let waker = {
        let mut state = shared.lock();
        state.status = Some(status);
        state.waker.take()
    };
    if let Some(waker) = waker {
        // A waker that polls in place would run the runtime on the driver's
        // thread: its calls are refused there, as in any stream callback.
        while_in_callback(|| waker.wake());
    }
}

impl Future for Done {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let mut pending = false;
        for part in &self.parts {
            let mut state = part.shared.lock();
            if state.status.is_none() {
                pending = true;
                match &state.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => state.waker = Some(cx.waker().clone()),
                }
            }
        }
        if pending {
            return Poll::Pending;
        }
        let mut result = Ok(());
        for part in &mut self.parts {
            let status = part.shared.lock().status.unwrap_or(0);
            let finish = part
                .finish
                .take()
                .expect("a `Done` future was polled again after it completed");
            let outcome = finish(status);
            if result.is_ok() {
                result = outcome;
            }
        }
        Poll::Ready(result)
    }
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self
            .parts
            .iter()
            .filter(|p| p.shared.lock().status.is_none())
            .count();
        write!(
            f,
            "Done {{ waiting for {waiting} of {} streams }}",
            self.parts.len()
        )
    }
}

impl Stream {
    /// A future that completes when the work queued on the stream so far has
    /// finished (Numba's `stream.async_done()`), with what
    /// [`synchronize`](Stream::synchronize) would return then: an error names
    /// a kernel that failed or a callback that panicked. The driver wakes the
    /// awaiting task from a stream callback; nothing polls, and any executor
    /// can await it.
    ///
    /// The callback is itself work on the stream: when the future completes,
    /// everything queued before it has finished, but
    /// [`is_done`](Stream::is_done) may answer `false` for the moment the
    /// callback takes to return (as Numba's future, also woken from a stream
    /// callback, does). An event recorded before `async_done` is complete.
    ///
    /// ```no_run
    /// # async fn f() -> gpu_runtime::Result<()> {
    /// let stream = gpu_runtime::Stream::new()?;
    /// // ... queue work on `stream` ...
    /// stream.async_done()?.await?;
    /// # Ok(()) }
    /// ```
    pub fn async_done(&self) -> Result<Done> {
        self.device_state("Stream::async_done")?;
        self.refuse_in_capture("async_done", WAITS)?;
        let stream = self.clone();
        Done::on_stream(
            self.handle(),
            Box::new(move |status| stream.completed_with(status)),
        )
        .map_err(|e| self.error(e))
    }

    /// What `synchronize` reports when the stream has reached a callback
    /// called with `status`.
    fn completed_with(&self, status: i32) -> Result<()> {
        if status != 0 {
            return Err(self.error(driver().status_error(
                self.device(),
                "cuStreamAddCallback",
                status,
            )));
        }
        self.take_callback_panics()
    }
}

/// Per device: streams that only wait for events, for [`Event::async_done`];
/// each is taken for one future and given back when it completes.
static WAITERS: [Mutex<Vec<Stream>>; MAX_DEVICES] = [const { Mutex::new(Vec::new()) }; MAX_DEVICES];

impl Event {
    /// A future that completes when the work before the event's latest
    /// record point has finished (at once for an event never recorded). A
    /// stream of the event's device that only waits for events carries the
    /// driver's callback, so the future does not wait for work queued after
    /// the event on the stream it was recorded on.
    pub fn async_done(&self) -> Result<Done> {
        self.refuse_captured("Event::async_done")?;
        if !self.is_recorded() {
            return Ok(Done::ready(Ok(())));
        }
        let waiters = &WAITERS[self.device()];
        let taken = waiters.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let waiter = match taken {
            Some(waiter) => waiter,
            None => Stream::on_device(Device::get(self.device())?)?,
        };
        waiter.wait_event(self)?;
        waiter.device_state("Event::async_done")?;
        let handle = waiter.handle();
        let on_waiter = waiter.clone();
        // Given back once the future has seen the event complete, so that no
        // two futures share a waiter at once (the later one would wait for
        // the earlier one's event too).
        Done::on_stream(
            handle,
            Box::new(move |status| {
                let result = waiter.completed_with(status);
                WAITERS[waiter.device()]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(waiter);
                result
            }),
        )
        .map_err(|e| on_waiter.error(e))
    }
}
