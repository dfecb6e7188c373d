//! Simulated streams: a worker thread per stream runs its operations in order.
//!
//! CUDA's implicit synchronisation is kept: work queued on a device's legacy
//! default stream waits for the work already queued on that device's blocking
//! streams (made without the non-blocking flag, and every per-thread default
//! stream), and work queued on a blocking stream waits for the work already
//! queued on the legacy default stream. Non-blocking streams do neither.
//!
//! # No deadlock
//!
//! Every wait is for a point queued *before* the waiting work: an implicit
//! synchronisation waits for a [`Fence`] pushed onto the other stream at
//! submit time (a snapshot of what it had queued then, pushed only if it
//! had anything: a worker that has exited is never given one); an event wait
//! waits for the event's latest record, which is in its stream's queue
//! before the event names it; a synchronize waits for a fence pushed at its
//! call. As every item waits only for items queued earlier, no cycle of
//! waits can form. The [watchdog](super::watchdog) is the backstop: waits
//! that can never end become errors ([`super::fence`]).
//!
//! # Faults
//!
//! A failed operation is a fault of the stream's device ([`super::fault`]):
//! the device's streams then skip their queued work (as a GPU does after a
//! kernel fault), but still apply markers, so that nothing waiting for a
//! point of them hangs, and call completion callbacks, with the failure.

mod capture;
mod handles;
#[cfg(test)]
mod tests;

pub(crate) use capture::{begin_capture, capture_marker, end_capture, join, membership};
pub(crate) use handles::{
    check_device, create, destroy, device_of, is_idle, properties, synchronize, synchronize_device,
};

use super::super::{status, DriverError, GraphNodeKind, StreamHandle};
use super::capture::{Membership, Work};
use super::errors::capture_error;
use super::fault;
use super::fence::{note_progress, Fence, Running};
use handles::{legacy_if_started, streams_of, with};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// One queued operation.
pub(crate) type Operation = Box<dyn FnOnce() -> Result<(), Failure> + Send>;

/// How an operation failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A fault (a kernel's): the device refuses every later call.
    Fault(String),
    /// An error that the stream's next synchronize reports, once, and that
    /// leaves the device usable (a collective's: NCCL's errors do not end
    /// the CUDA context).
    Once(String),
}

/// How a stream takes part in implicit synchronisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A device's legacy default stream.
    Legacy,
    /// Synchronises with the legacy default stream.
    Blocking,
    /// Made with the non-blocking flag.
    NonBlocking,
}

pub(crate) struct SimStream {
    device: usize,
    kind: Kind,
    priority: i32,
    /// The stream's name in reports, set once the stream has its address.
    name: OnceLock<Arc<str>>,
    state: Mutex<State>,
    changed: Condvar,
}

/// What a stream's queue holds.
enum Item {
    /// Work, run outside the stream's lock; skipped once the device faulted.
    Run(Operation),
    /// A wait for a point of another stream; skipped once the device faulted.
    Wait(Fence),
    /// A completion callback, called outside the lock with whether work
    /// before it failed; called also after a fault (CUDA's
    /// `cuStreamAddCallback`).
    Report(Box<dyn FnOnce(bool) + Send>),
    /// A marker (an event record, a fence), applied under the stream's lock
    /// the moment the stream reaches it, so that whoever sees the marker also
    /// sees the work before it finished; applied also after a fault.
    Mark(Box<dyn FnOnce() + Send>),
}

#[derive(Default)]
struct State {
    queue: VecDeque<Item>,
    /// The worker runs an item outside the lock.
    busy: bool,
    closing: bool,
    /// The worker has ended: the queue is empty and stays so.
    exited: bool,
    /// The first [`Failure::Once`] since the last synchronize.
    failure: Option<String>,
    /// The capture the stream takes part in: what is queued becomes nodes.
    capture: Option<Membership>,
}

impl State {
    fn is_idle(&self) -> bool {
        !self.busy && self.queue.is_empty()
    }
}

impl SimStream {
    /// A stream and its worker; `name` names it in reports (`None`: by its
    /// handle, as the runtime prints streams).
    fn new(device: usize, kind: Kind, priority: i32, name: Option<String>) -> Arc<SimStream> {
        let stream = Arc::new(SimStream {
            device,
            kind,
            priority,
            name: OnceLock::new(),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let name = name.unwrap_or_else(|| {
            format!(
                "<Stream {} (device {device})>",
                Arc::as_ptr(&stream) as usize
            )
        });
        let _ = stream.name.set(name.into());
        let worker = Arc::clone(&stream);
        std::thread::Builder::new()
            .name("gpu-sim-stream".into())
            .spawn(move || worker.work())
            .expect("the simulator can start a stream thread");
        handles::register(&stream);
        stream
    }

    /// The stream's name in reports.
    pub(crate) fn name(&self) -> Arc<str> {
        Arc::clone(self.name.get().expect("named at creation"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn work(self: Arc<Self>) {
        loop {
            let item = {
                let mut state = self.lock();
                loop {
                    match state.queue.pop_front() {
                        Some(Item::Mark(mark)) => {
                            mark();
                            self.changed.notify_all();
                            note_progress();
                            continue;
                        }
                        Some(item) => {
                            state.busy = true;
                            break item;
                        }
                        None => {}
                    }
                    if state.closing {
                        state.exited = true;
                        self.changed.notify_all();
                        return;
                    }
                    state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            };
            let failure = self.run(item);
            let mut state = self.lock();
            state.busy = false;
            if let Some(message) = failure {
                state.failure.get_or_insert(message);
            }
            drop(state);
            self.changed.notify_all();
            note_progress();
        }
    }

    /// Runs one item outside the lock; returns a [`Failure::Once`] message.
    fn run(&self, item: Item) -> Option<String> {
        let faulted = fault::is_faulted(self.device);
        match item {
            // Dropped unrun: a GPU runs nothing more after a fault.
            Item::Run(_) | Item::Wait(_) if faulted => None,
            Item::Run(operation) => {
                let _running = Running::start();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(operation))
                    .unwrap_or_else(|_| {
                        Err(Failure::Fault("a simulator operation panicked".to_string()))
                    });
                match outcome {
                    Ok(()) => None,
                    Err(Failure::Fault(message)) => {
                        fault::record(self.device, message);
                        None
                    }
                    Err(Failure::Once(message)) => Some(message),
                }
            }
            Item::Wait(fence) => {
                if let Err(report) = fence.wait(|| self.name().to_string()) {
                    fault::record(self.device, report);
                }
                None
            }
            Item::Report(report) => {
                let failed = faulted || self.lock().failure.is_some();
                let _running = Running::start();
                // A panic in a callback is the callback's to report; the
                // stream goes on.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report(failed)));
                None
            }
            Item::Mark(_) => unreachable!("markers are applied under the lock"),
        }
    }

    /// Appends `items` to the queue, after the waits implicit synchronisation
    /// asks for (see the module documentation), all under one lock.
    fn push(&self, items: impl IntoIterator<Item = Item>) {
        let waits = self.implicit_waits();
        let mut state = self.lock();
        if state.exited {
            // Unreachable through a handle (a destroyed stream is not named
            // again); markers and callbacks are still honoured.
            drop(state);
            for item in items {
                match item {
                    Item::Mark(mark) => mark(),
                    Item::Report(report) => report(fault::is_faulted(self.device)),
                    _ => {}
                }
            }
            return;
        }
        state.queue.extend(waits.into_iter().map(Item::Wait));
        state.queue.extend(items);
        drop(state);
        self.changed.notify_all();
    }

    /// A fence after everything queued here so far, or `None` if nothing is
    /// queued or running (checked under the same lock as the push, so a
    /// worker about to exit is never given one).
    fn fence_if_busy(&self, what: &'static str) -> Option<Fence> {
        let mut state = self.lock();
        if state.is_idle() {
            return None;
        }
        let fence = Fence::new(self.name(), what);
        let signal = fence.clone();
        state
            .queue
            .push_back(Item::Mark(Box::new(move || signal.signal())));
        drop(state);
        self.changed.notify_all();
        Some(fence)
    }

    /// The points of other streams that work queued here now must wait for:
    /// a snapshot of what they have queued so far.
    fn implicit_waits(&self) -> Vec<Fence> {
        match self.kind {
            Kind::NonBlocking => Vec::new(),
            Kind::Blocking => legacy_if_started(self.device)
                .and_then(|legacy| {
                    legacy.fence_if_busy("its work queued before this (implicit synchronisation of a blocking stream with the legacy default stream)")
                })
                .into_iter()
                .collect(),
            Kind::Legacy => streams_of(self.device)
                .into_iter()
                .filter(|s| s.kind == Kind::Blocking)
                .filter_map(|s| {
                    s.fence_if_busy("its work queued before this (implicit synchronisation of the legacy default stream with blocking streams)")
                })
                .collect(),
        }
    }

    /// Queues `item`; on a capturing stream, an error (it cannot run again
    /// at each replay).
    fn enqueue(&self, item: Item) -> Result<(), DriverError> {
        self.refuse_capture()?;
        self.push([item]);
        Ok(())
    }

    /// An error if the stream captures: what is queued now would run once,
    /// not at each replay.
    fn refuse_capture(&self) -> Result<(), DriverError> {
        match &self.lock().capture {
            Some(membership) => Err(capture_error(
                "the simulator",
                status::STREAM_CAPTURE_UNSUPPORTED,
                format!(
                    "this operation cannot be captured (capture {})",
                    membership.capture.id
                ),
            )),
            None => Ok(()),
        }
    }

    /// Queues `work`, or captures it as a node of kind `kind`.
    fn submit(&self, kind: GraphNodeKind, work: Work) -> Result<(), DriverError> {
        {
            let mut state = self.lock();
            if let Some(membership) = &mut state.capture {
                let node = membership.capture.add(kind, Some(work), &membership.tail);
                membership.tail = vec![node];
                return Ok(());
            }
        }
        self.enqueue(Item::Run(Box::new(move || work().map_err(Failure::Fault))))
    }

    /// Waits for a fence after everything queued so far, as the host
    /// thread's `call`; an error if the watchdog gave up on the wait.
    fn wait_for_queued(&self, call: &'static str) -> Result<(), String> {
        match self.fence_if_busy("the end of its queued work") {
            Some(fence) => fence.wait(|| host_waiter(call)),
            None => Ok(()),
        }
    }

    /// Whether everything queued has finished.
    fn is_idle(&self) -> bool {
        self.lock().is_idle()
    }

    fn close(&self) {
        self.lock().closing = true;
        self.changed.notify_all();
    }
}

/// The calling host thread, waiting in `call`, as reports name it.
pub(crate) fn host_waiter(call: &'static str) -> String {
    format!("host thread {} in {call}", handles::thread_name())
}

/// Queues a marker on the stream `handle` names, after everything queued so
/// far; returns a fence reached right after the marker is applied.
pub(crate) fn enqueue_mark(
    handle: StreamHandle,
    what: &'static str,
    mark: Box<dyn FnOnce() + Send>,
) -> Fence {
    with(handle, |s| {
        let fence = Fence::new(s.name(), what);
        let signal = fence.clone();
        s.push([Item::Mark(Box::new(move || {
            mark();
            signal.signal();
        }))]);
        fence
    })
}

/// Queues a wait for `fence` on the stream `handle` names; an error on a
/// capturing stream.
pub(crate) fn enqueue_wait(handle: StreamHandle, fence: Fence) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Wait(fence)))
}

/// Queues `operation` on the stream `handle` names, after a wait for
/// `after` (a point queued before); an error on a capturing stream.
pub(crate) fn enqueue_after(
    handle: StreamHandle,
    after: Option<Fence>,
    operation: Operation,
) -> Result<(), DriverError> {
    with(handle, |s| {
        s.refuse_capture()?;
        s.push(
            after
                .map(Item::Wait)
                .into_iter()
                .chain([Item::Run(operation)]),
        );
        Ok(())
    })
}

/// The name of the stream `handle` names, as reports give it.
pub(crate) fn name(handle: StreamHandle) -> Arc<str> {
    with(handle, |s| s.name())
}

/// Queues `operation` on the stream `handle` names; an error on a capturing
/// stream.
pub(crate) fn enqueue(handle: StreamHandle, operation: Operation) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Run(operation)))
}

/// Queues `report` on the stream `handle` names, called with whether work on
/// the stream failed before it (its device faulted, or an error since its
/// last synchronize); an error on a capturing stream.
pub(crate) fn enqueue_reporting(
    handle: StreamHandle,
    report: Box<dyn FnOnce(bool) + Send>,
) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Report(report)))
}

/// Queues `work` on the stream `handle` names, or captures it as a node.
pub(crate) fn submit(
    handle: StreamHandle,
    kind: GraphNodeKind,
    work: Work,
) -> Result<(), DriverError> {
    with(handle, |s| s.submit(kind, work))
}
