//! Simulated streams: a worker thread per stream runs its operations in order.
//!
//! CUDA's implicit synchronisation is kept: work queued on a device's legacy
//! default stream waits for the work already queued on that device's blocking
//! streams (made without the non-blocking flag, and every per-thread default
//! stream), and work queued on a blocking stream waits for the work already
//! queued on the legacy default stream. Non-blocking streams do neither.
//!
//! So is the rule CUDA derives from it for captures: while a blocking stream
//! of a device captures, any use of the device's legacy default stream (a
//! query, a wait, work queued on it) would synchronise with the capture; CUDA
//! refuses it with `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT` and invalidates the
//! capture, whose end then fails with `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`.

use super::super::{status, DriverError, GraphNodeKind, StreamHandle, MAX_DEVICES};
use super::capture::{union, Capture, Membership, Work};
use super::errors::{capture_error, launch_failed};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

/// One queued operation; an `Err` is a failure reported by the next synchronize.
pub(crate) type Operation = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// How a stream takes part in implicit synchronisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
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
    state: Mutex<State>,
    changed: Condvar,
}

/// What a stream's queue holds.
enum Item {
    /// Work, run outside the stream's lock.
    Run(Operation),
    /// A marker (an event record), applied under the stream's lock the moment
    /// the stream reaches it, so that whoever sees the marker also sees the
    /// work before it finished.
    Mark(Box<dyn FnOnce() + Send>),
}

#[derive(Default)]
struct State {
    queue: VecDeque<Item>,
    running: bool,
    closing: bool,
    /// The first failure since the last synchronize.
    failure: Option<String>,
    /// The capture the stream takes part in: what is queued becomes nodes.
    capture: Option<Membership>,
}

fn registry() -> &'static Mutex<Vec<Weak<SimStream>>> {
    static STREAMS: OnceLock<Mutex<Vec<Weak<SimStream>>>> = OnceLock::new();
    STREAMS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Every live stream of `device`.
fn streams_of(device: usize) -> Vec<Arc<SimStream>> {
    let streams = registry().lock().unwrap_or_else(|e| e.into_inner());
    streams
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|s| s.device == device)
        .collect()
}

/// A point in one stream that work in another stream can wait for.
#[derive(Clone, Default)]
pub(crate) struct Fence(Arc<(Mutex<bool>, Condvar)>);

impl Fence {
    pub(crate) fn signal(&self) {
        let (reached, changed) = &*self.0;
        *reached.lock().unwrap_or_else(|e| e.into_inner()) = true;
        changed.notify_all();
    }

    pub(crate) fn wait(&self) {
        let (reached, changed) = &*self.0;
        let mut reached = reached.lock().unwrap_or_else(|e| e.into_inner());
        while !*reached {
            reached = changed.wait(reached).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl SimStream {
    fn new(device: usize, kind: Kind, priority: i32) -> Arc<SimStream> {
        let stream = Arc::new(SimStream {
            device,
            kind,
            priority,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let worker = Arc::clone(&stream);
        std::thread::Builder::new()
            .name("gpu-sim-stream".into())
            .spawn(move || worker.work())
            .expect("the simulator can start a stream thread");
        let mut streams = registry().lock().unwrap_or_else(|e| e.into_inner());
        streams.retain(|s| s.strong_count() > 0);
        streams.push(Arc::downgrade(&stream));
        stream
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn work(self: Arc<Self>) {
        loop {
            let operation = {
                let mut state = self.lock();
                loop {
                    match state.queue.pop_front() {
                        Some(Item::Run(op)) => {
                            state.running = true;
                            break op;
                        }
                        Some(Item::Mark(mark)) => {
                            mark();
                            self.changed.notify_all();
                            continue;
                        }
                        None => {}
                    }
                    if state.closing {
                        return;
                    }
                    state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(operation))
                .unwrap_or_else(|_| Err("a simulator operation panicked".to_string()));
            let mut state = self.lock();
            state.running = false;
            if let Err(message) = outcome {
                state.failure.get_or_insert(message);
            }
            self.changed.notify_all();
        }
    }

    fn push(&self, item: Item) {
        self.lock().queue.push_back(item);
        self.changed.notify_all();
    }

    /// A fence after everything queued here so far.
    fn fence(&self) -> Fence {
        let fence = Fence::default();
        let signal = fence.clone();
        self.push(Item::Mark(Box::new(move || signal.signal())));
        fence
    }

    /// Makes what is queued here next wait for what CUDA's implicit
    /// synchronisation orders it after (see the module documentation).
    fn order_implicitly(&self) {
        let waits: Vec<Fence> = match self.kind {
            Kind::NonBlocking => return,
            Kind::Blocking => match LEGACY[self.device].get() {
                Some(legacy) if !legacy.is_idle() => vec![legacy.fence()],
                _ => return,
            },
            Kind::Legacy => streams_of(self.device)
                .into_iter()
                .filter(|s| s.kind == Kind::Blocking && !s.is_idle())
                .map(|s| s.fence())
                .collect(),
        };
        for fence in waits {
            self.push(Item::Run(Box::new(move || {
                fence.wait();
                Ok(())
            })));
        }
    }

    /// On the legacy default stream: an error, as CUDA's
    /// `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`, if a blocking stream of the
    /// device captures; that capture is invalidated, as CUDA does.
    fn refuse_implicit(&self, call: &'static str) -> Result<(), DriverError> {
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

    /// Queues `operation` after everything queued so far; on a capturing
    /// stream, an error (it cannot run again at each replay).
    fn enqueue(&self, operation: Operation) -> Result<(), DriverError> {
        self.refuse_implicit("the simulator")?;
        if let Some(membership) = &self.lock().capture {
            return Err(capture_error(
                "the simulator",
                status::STREAM_CAPTURE_UNSUPPORTED,
                format!(
                    "this operation cannot be captured (capture {})",
                    membership.capture.id
                ),
            ));
        }
        self.order_implicitly();
        self.push(Item::Run(operation));
        Ok(())
    }

    /// Queues `work`, or captures it as a node of kind `kind` (`label`: a
    /// kernel's name).
    fn submit(
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
        self.enqueue(Box::new(move || work()))
    }

    /// Queues a marker after everything queued so far (see [`Item::Mark`]).
    fn enqueue_mark(&self, mark: Box<dyn FnOnce() + Send>) -> Result<(), DriverError> {
        self.refuse_implicit("cuEventRecord")?;
        self.order_implicitly();
        self.push(Item::Mark(mark));
        Ok(())
    }

    /// Waits until the queue is empty and idle; returns and clears the first failure.
    fn synchronize(&self) -> Result<(), String> {
        self.wait_idle().failure.take().map_or(Ok(()), Err)
    }

    /// Waits until the queue is empty and idle, leaving any failure for the
    /// stream's own `synchronize` to report.
    fn wait_idle(&self) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.lock();
        while state.running || !state.queue.is_empty() {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state
    }

    fn is_idle(&self) -> bool {
        let state = self.lock();
        !state.running && state.queue.is_empty()
    }

    fn close(&self) {
        self.lock().closing = true;
        self.changed.notify_all();
    }
}

/// Each device's legacy default stream: one, shared by all host threads.
static LEGACY: [OnceLock<Arc<SimStream>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

fn legacy(device: usize) -> &'static Arc<SimStream> {
    LEGACY[device].get_or_init(|| SimStream::new(device, Kind::Legacy, 0))
}

/// A per-thread default stream, closed when its host thread ends (its worker
/// holds a reference of its own, so dropping ours alone would not stop it).
struct PerThread(Arc<SimStream>);

impl Drop for PerThread {
    fn drop(&mut self) {
        self.0.close();
    }
}

thread_local! {
    /// The calling thread's per-thread default stream of each device.
    static PER_THREAD: RefCell<Vec<Option<PerThread>>> = const { RefCell::new(Vec::new()) };
}

fn per_thread(device: usize) -> Arc<SimStream> {
    PER_THREAD.with(|streams| {
        let mut streams = streams.borrow_mut();
        if streams.len() <= device {
            streams.resize_with(device + 1, || None);
        }
        let own = streams[device]
            .get_or_insert_with(|| PerThread(SimStream::new(device, Kind::Blocking, 0)));
        Arc::clone(&own.0)
    })
}

/// Runs `f` with the stream a handle names; the default streams are those of
/// the handle's device.
fn with<R>(handle: StreamHandle, f: impl FnOnce(&Arc<SimStream>) -> R) -> R {
    match handle.raw {
        StreamHandle::LEGACY_RAW => f(legacy(handle.device)),
        StreamHandle::PER_THREAD_RAW => f(&per_thread(handle.device)),
        raw => {
            // SAFETY: other handles come from `create`, which leaked one strong
            // count that `destroy` gives back; the handle is live until then.
            // `ManuallyDrop` borrows it as an `Arc` without touching the count.
            let stream =
                std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(raw as *const SimStream) });
            f(&stream)
        }
    }
}

/// An error, as CUDA's `CUDA_ERROR_INVALID_VALUE`, if `handle` names a
/// created stream of another device than the device it says: the CUDA
/// backend makes the handle's device current, and CUDA refuses copies and
/// memsets on a stream of another context than the current one
/// (`cuMemcpyHtoDAsync` on two H200s). Only a handle made wrong (a foreign
/// stream wrapped with the wrong device) gets there.
pub(crate) fn check_device(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    let device = device_of(handle);
    if device == handle.device {
        return Ok(());
    }
    Err(super::errors::invalid_value(
        call,
        format!(
            "the stream belongs to device {device} and the call acts on device {}",
            handle.device
        ),
    ))
}

/// What tells the stream `handle` names apart from every other stream alive
/// (the per-thread default streams of two threads too): its address.
pub(crate) fn identity(handle: StreamHandle) -> usize {
    with(handle, |s| Arc::as_ptr(s) as usize)
}

/// The device a stream belongs to.
pub(crate) fn device_of(handle: StreamHandle) -> usize {
    with(handle, |s| s.device)
}

pub(crate) fn create(device: usize, blocking: bool, priority: i32) -> StreamHandle {
    let kind = if blocking {
        Kind::Blocking
    } else {
        Kind::NonBlocking
    };
    StreamHandle {
        raw: Arc::into_raw(SimStream::new(device, kind, priority)) as usize,
        device,
    }
}

/// Whether the stream is non-blocking, and its priority.
pub(crate) fn properties(handle: StreamHandle) -> (bool, i32) {
    with(handle, |s| (s.kind == Kind::NonBlocking, s.priority))
}

pub(crate) fn destroy(handle: StreamHandle) {
    if matches!(
        handle.raw,
        StreamHandle::LEGACY_RAW | StreamHandle::PER_THREAD_RAW
    ) {
        return;
    }
    // SAFETY: the count leaked by `create`, given back once.
    let stream = unsafe { Arc::from_raw(handle.raw as *const SimStream) };
    // The worker finishes what is queued, then exits.
    stream.close();
}

pub(crate) fn synchronize(handle: StreamHandle) -> Result<(), DriverError> {
    refuse_in_capture(handle, "cuStreamSynchronize")?;
    refuse_implicit(handle, "cuStreamSynchronize")?;
    with(handle, |s| s.synchronize()).map_err(|m| launch_failed("cuStreamSynchronize", m))
}

pub(crate) fn is_idle(handle: StreamHandle) -> Result<bool, DriverError> {
    refuse_in_capture(handle, "cuStreamQuery")?;
    refuse_implicit(handle, "cuStreamQuery")?;
    Ok(with(handle, |s| s.is_idle()))
}

/// An error if the stream captures, as CUDA refuses to wait for a capture.
fn refuse_in_capture(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    match membership(handle) {
        Some(m) => Err(capture_error(
            call,
            status::STREAM_CAPTURE_UNSUPPORTED,
            format!("the stream captures (capture {})", m.capture.id),
        )),
        None => Ok(()),
    }
}

/// On the legacy default stream `handle` names: an error, as CUDA's
/// `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`, if a blocking stream of its device
/// captures (see the module documentation).
pub(crate) fn refuse_implicit(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    with(handle, |s| s.refuse_implicit(call))
}

/// Waits for every stream of `device`, as `cuCtxSynchronize` does. A failure
/// is reported here and left for its stream's own `synchronize` too.
pub(crate) fn synchronize_device(device: usize) -> Result<(), DriverError> {
    let mut first = Ok(());
    for stream in streams_of(device) {
        if let Some(message) = stream.wait_idle().failure.clone() {
            if first.is_ok() {
                first = Err(launch_failed("cuCtxSynchronize", message));
            }
        }
    }
    first
}

/// Queues a marker on the stream `handle` names.
pub(crate) fn enqueue_mark(
    handle: StreamHandle,
    mark: Box<dyn FnOnce() + Send>,
) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue_mark(mark))
}

/// Queues `operation` on the stream `handle` names; an error on a capturing
/// stream.
pub(crate) fn enqueue(handle: StreamHandle, operation: Operation) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(operation))
}

/// Queues `report` on the stream `handle` names, called with whether work on
/// the stream failed since its last synchronize; an error on a capturing
/// stream.
pub(crate) fn enqueue_reporting(
    handle: StreamHandle,
    report: Box<dyn FnOnce(bool) + Send>,
) -> Result<(), DriverError> {
    with(handle, |s| {
        let stream = Arc::downgrade(s);
        s.enqueue(Box::new(move || {
            let failed = stream.upgrade().is_some_and(|s| s.lock().failure.is_some());
            report(failed);
            Ok(())
        }))
    })
}

/// Queues `work` on the stream `handle` names, or captures it as a node
/// (`label`: a kernel's name).
pub(crate) fn submit(
    handle: StreamHandle,
    kind: GraphNodeKind,
    label: &'static str,
    work: Work,
) -> Result<(), DriverError> {
    with(handle, |s| s.submit(kind, label, work))
}

/// The capture the stream takes part in, with its tail.
pub(crate) fn membership(handle: StreamHandle) -> Option<Membership> {
    with(handle, |s| s.lock().capture.clone())
}

/// Adds a node without work (an allocation, a free) to the capture of a
/// capturing stream, after its tail; `None` if the stream is not capturing.
pub(crate) fn capture_marker(handle: StreamHandle, kind: GraphNodeKind) -> Option<Arc<Capture>> {
    with(handle, |s| {
        let mut state = s.lock();
        let membership = state.capture.as_mut()?;
        let node = membership.capture.add(kind, "", None, &membership.tail);
        membership.tail = vec![node];
        Some(Arc::clone(&membership.capture))
    })
}

/// Makes the stream depend on `tail` of `capture`: it joins the capture, or,
/// already in it, adds `tail` to its own (an event wait inside a capture).
pub(crate) fn join(
    handle: StreamHandle,
    capture: &Arc<Capture>,
    tail: &[usize],
) -> Result<(), DriverError> {
    with(handle, |s| {
        let mut state = s.lock();
        match &mut state.capture {
            Some(membership) if Arc::ptr_eq(&membership.capture, capture) => {
                union(&mut membership.tail, tail);
                Ok(())
            }
            Some(membership) => Err(capture_error(
                "cuStreamWaitEvent",
                status::STREAM_CAPTURE_MERGE,
                format!(
                    "the stream captures into capture {} and the event was recorded in capture {}",
                    membership.capture.id, capture.id
                ),
            )),
            None if s.kind == Kind::Legacy => Err(capture_error(
                "cuStreamWaitEvent",
                status::STREAM_CAPTURE_UNSUPPORTED,
                "the legacy default stream cannot join a capture".into(),
            )),
            None => {
                state.capture = Some(Membership {
                    capture: Arc::clone(capture),
                    tail: tail.to_vec(),
                });
                Ok(())
            }
        }
    })
}

/// Starts a capture on the stream.
pub(crate) fn begin_capture(handle: StreamHandle) -> Result<(), DriverError> {
    with(handle, |s| {
        if s.kind == Kind::Legacy {
            return Err(capture_error(
                "cuStreamBeginCapture",
                status::STREAM_CAPTURE_UNSUPPORTED,
                "the legacy default stream cannot be captured".into(),
            ));
        }
        let mut state = s.lock();
        if let Some(membership) = &state.capture {
            return Err(capture_error(
                "cuStreamBeginCapture",
                status::INVALID_VALUE,
                format!(
                    "the stream already captures (capture {})",
                    membership.capture.id
                ),
            ));
        }
        state.capture = Some(Membership {
            capture: Capture::new(Arc::as_ptr(s) as usize),
            tail: Vec::new(),
        });
        Ok(())
    })
}

/// Ends the capture begun on the stream: every stream leaves it, and its
/// nodes are returned. Streams that joined it must have been joined back.
pub(crate) fn end_capture(handle: StreamHandle) -> Result<Arc<Capture>, DriverError> {
    let (capture, tail, device) = with(handle, |s| {
        let state = s.lock();
        match &state.capture {
            Some(m) if m.capture.origin == Arc::as_ptr(s) as usize => {
                Ok((Arc::clone(&m.capture), m.tail.clone(), s.device))
            }
            _ => Err(capture_error(
                "cuStreamEndCapture",
                status::STREAM_CAPTURE_UNMATCHED,
                "the stream did not begin a capture".into(),
            )),
        }
    })?;
    let mut unjoined = 0;
    for stream in streams_of(device) {
        let mut state = stream.lock();
        let joined = match &state.capture {
            Some(m) if Arc::ptr_eq(&m.capture, &capture) => capture.is_joined(&m.tail, &tail),
            _ => continue,
        };
        if !joined {
            unjoined += 1;
        }
        state.capture = None;
    }
    capture
        .ended
        .store(true, std::sync::atomic::Ordering::Release);
    if capture
        .invalidated
        .load(std::sync::atomic::Ordering::Acquire)
    {
        return Err(capture_error(
            "cuStreamEndCapture",
            status::STREAM_CAPTURE_INVALIDATED,
            format!(
                "capture {} was invalidated by a use of the legacy default stream while a blocking stream captured",
                capture.id
            ),
        ));
    }
    if unjoined > 0 {
        return Err(capture_error(
            "cuStreamEndCapture",
            status::STREAM_CAPTURE_UNJOINED,
            format!("{unjoined} stream(s) forked into the capture were not joined back into the stream that began it"),
        ));
    }
    Ok(capture)
}
