//! A simulated stream: its queue of work, the worker thread that runs it,
//! the registry of every stream, each device's legacy default stream, and
//! the waits of CUDA's implicit synchronisation (see the parent module).

use super::super::super::{status, DriverError, GraphNodeKind, MAX_DEVICES};
use super::super::capture::{Membership, Work};
use super::super::errors::capture_error;
use super::super::fault;
use super::super::fence::{note_progress, Fence, Running};
use super::super::watchdog;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

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
    pub(super) device: usize,
    pub(super) kind: Kind,
    pub(super) priority: i32,
    /// The stream's name in reports, set once the stream has its address.
    name: OnceLock<Arc<str>>,
    state: Mutex<State>,
    changed: Condvar,
}

/// What a stream's queue holds.
pub(super) enum Item {
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
pub(super) struct State {
    queue: VecDeque<Item>,
    /// The worker runs an item outside the lock.
    busy: bool,
    closing: bool,
    /// The worker has ended: the queue is empty and stays so.
    exited: bool,
    /// The first [`Failure::Once`] since the last synchronize.
    pub(super) failure: Option<String>,
    /// The capture the stream takes part in: what is queued becomes nodes.
    pub(super) capture: Option<Membership>,
}

impl State {
    fn is_idle(&self) -> bool {
        !self.busy && self.queue.is_empty()
    }
}

impl SimStream {
    /// A stream and its worker; `name` names it in reports (`None`: by its
    /// handle, as the runtime prints streams).
    pub(super) fn new(
        device: usize,
        kind: Kind,
        priority: i32,
        name: Option<String>,
    ) -> Arc<SimStream> {
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
        register(&stream);
        stream
    }

    /// The stream's name in reports.
    pub(crate) fn name(&self) -> Arc<str> {
        Arc::clone(self.name.get().expect("named at creation"))
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
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
    pub(super) fn push(&self, items: impl IntoIterator<Item = Item>) {
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
    pub(super) fn fence_if_busy(&self, what: &'static str) -> Option<Fence> {
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

    /// On the legacy default stream: an error, as CUDA's
    /// `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`, if a blocking stream of the
    /// device captures; that capture is invalidated, as CUDA does.
    pub(super) fn refuse_implicit(&self, call: &'static str) -> Result<(), DriverError> {
        if self.kind != Kind::Legacy {
            return Ok(());
        }
        for stream in streams_of(self.device) {
            if stream.kind != Kind::Blocking {
                continue;
            }
            if let Some(membership) = &stream.lock().capture {
                let capture = &membership.capture;
                capture
                    .invalidated
                    .store(true, std::sync::atomic::Ordering::Release);
                return Err(capture_error(
                    call,
                    status::STREAM_CAPTURE_IMPLICIT,
                    format!(
                        "the legacy default stream would synchronise with a blocking stream that captures (capture {}, now invalidated)",
                        capture.id
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Queues `item`; on a capturing stream, an error (it cannot run again
    /// at each replay).
    pub(super) fn enqueue(&self, item: Item) -> Result<(), DriverError> {
        self.refuse_implicit("the simulator")?;
        self.refuse_capture()?;
        self.push([item]);
        Ok(())
    }

    /// An error if the stream captures: what is queued now would run once,
    /// not at each replay.
    pub(super) fn refuse_capture(&self) -> Result<(), DriverError> {
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

    /// Queues `work`, or captures it as a node of kind `kind` (`label`: a
    /// kernel's name).
    pub(super) fn submit(
        &self,
        kind: GraphNodeKind,
        label: &'static str,
        work: Work,
    ) -> Result<(), DriverError> {
        {
            let mut state = self.lock();
            if let Some(membership) = &mut state.capture {
                if membership
                    .capture
                    .invalidated
                    .load(std::sync::atomic::Ordering::Acquire)
                {
                    return Err(capture_error(
                        "the simulator",
                        status::STREAM_CAPTURE_INVALIDATED,
                        format!("capture {} was invalidated", membership.capture.id),
                    ));
                }
                let node = membership
                    .capture
                    .add(kind, label, Some(work), &membership.tail);
                membership.tail = vec![node];
                return Ok(());
            }
        }
        self.enqueue(Item::Run(Box::new(move || work().map_err(Failure::Fault))))
    }

    /// Waits for a fence after everything queued so far, as the host
    /// thread's `call`; an error if the watchdog gave up on the wait.
    pub(super) fn wait_for_queued(&self, call: &'static str) -> Result<(), String> {
        match self.fence_if_busy("the end of its queued work") {
            Some(fence) => fence.wait(|| host_waiter(call)),
            None => Ok(()),
        }
    }

    /// Whether everything queued has finished.
    pub(super) fn is_idle(&self) -> bool {
        self.lock().is_idle()
    }

    pub(super) fn close(&self) {
        self.lock().closing = true;
        self.changed.notify_all();
    }
}

/// The calling host thread, waiting in `call`, as reports name it.
pub(crate) fn host_waiter(call: &'static str) -> String {
    format!("host thread {} in {call}", thread_name())
}

fn registry() -> &'static Mutex<Vec<Weak<SimStream>>> {
    static STREAMS: OnceLock<Mutex<Vec<Weak<SimStream>>>> = OnceLock::new();
    STREAMS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Adds a new stream to the registry.
pub(super) fn register(stream: &Arc<SimStream>) {
    let mut streams = registry().lock().unwrap_or_else(|e| e.into_inner());
    streams.retain(|s| s.strong_count() > 0);
    streams.push(Arc::downgrade(stream));
    drop(streams);
    watchdog::start_for_streams();
}

/// Every live stream of `device`.
pub(super) fn streams_of(device: usize) -> Vec<Arc<SimStream>> {
    let streams = registry().lock().unwrap_or_else(|e| e.into_inner());
    streams
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|s| s.device == device)
        .collect()
}

/// The calling thread's name, as reports name it.
pub(super) fn thread_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) => format!("`{name}`"),
        None => format!("{:?}", thread.id()),
    }
}

/// Each device's legacy default stream: one, shared by all host threads.
static LEGACY: [OnceLock<Arc<SimStream>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

pub(super) fn legacy(device: usize) -> &'static Arc<SimStream> {
    LEGACY[device].get_or_init(|| {
        SimStream::new(
            device,
            Kind::Legacy,
            0,
            Some(format!("the legacy default stream of device {device}")),
        )
    })
}

/// The legacy default stream of `device`, if anything used it yet.
pub(super) fn legacy_if_started(device: usize) -> Option<&'static Arc<SimStream>> {
    LEGACY[device].get()
}
