//! Simulated streams: a worker thread per stream runs its operations in order.

use crate::driver::{self, CUstream, Status};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

/// One queued operation; an `Err` is a failure reported by the next synchronize.
pub(crate) type Operation = Box<dyn FnOnce() -> Result<(), String> + Send>;

pub(crate) struct SimStream {
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
}

fn registry() -> &'static Mutex<Vec<Weak<SimStream>>> {
    static STREAMS: OnceLock<Mutex<Vec<Weak<SimStream>>>> = OnceLock::new();
    STREAMS.get_or_init(|| Mutex::new(Vec::new()))
}

impl SimStream {
    fn new() -> Arc<SimStream> {
        let stream = Arc::new(SimStream {
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

    /// Queues `operation` after everything queued so far.
    pub(crate) fn enqueue(&self, operation: Operation) {
        self.lock().queue.push_back(Item::Run(operation));
        self.changed.notify_all();
    }

    /// Queues a marker after everything queued so far (see [`Item::Mark`]).
    pub(crate) fn enqueue_mark(&self, mark: Box<dyn FnOnce() + Send>) {
        self.lock().queue.push_back(Item::Mark(mark));
        self.changed.notify_all();
    }

    /// Waits until the queue is empty and idle; returns and clears the first failure.
    pub(crate) fn synchronize(&self) -> Result<(), String> {
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

/// The legacy default stream: one, shared by all host threads.
fn legacy() -> &'static Arc<SimStream> {
    static LEGACY: OnceLock<Arc<SimStream>> = OnceLock::new();
    LEGACY.get_or_init(SimStream::new)
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
    /// The calling thread's per-thread default stream.
    static PER_THREAD: PerThread = PerThread(SimStream::new());
}

/// Runs `f` with the stream a handle names.
pub(crate) fn with<R>(handle: CUstream, f: impl FnOnce(&Arc<SimStream>) -> R) -> R {
    match handle as usize {
        driver::LEGACY_DEFAULT_STREAM => f(legacy()),
        driver::PER_THREAD_DEFAULT_STREAM => PER_THREAD.with(|s| f(&s.0)),
        _ => {
            // SAFETY: other handles come from `create`, which leaked one strong
            // count that `destroy` gives back; the handle is live until then.
            // `ManuallyDrop` borrows it as an `Arc` without touching the count.
            let stream =
                std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle as *const SimStream) });
            f(&stream)
        }
    }
}

pub(crate) fn create() -> CUstream {
    Arc::into_raw(SimStream::new()) as CUstream
}

pub(crate) fn destroy(handle: CUstream) -> Status {
    if matches!(
        handle as usize,
        driver::LEGACY_DEFAULT_STREAM | driver::PER_THREAD_DEFAULT_STREAM
    ) {
        return driver::SUCCESS;
    }
    // SAFETY: the count leaked by `create`, given back once.
    let stream = unsafe { Arc::from_raw(handle as *const SimStream) };
    // The worker finishes what is queued, then exits.
    stream.close();
    driver::SUCCESS
}

pub(crate) fn synchronize(handle: CUstream) -> Status {
    match with(handle, |s| s.synchronize()) {
        Ok(()) => driver::SUCCESS,
        Err(message) => super::report(message, driver::ERROR_LAUNCH_FAILED),
    }
}

pub(crate) fn query(handle: CUstream) -> Status {
    if with(handle, |s| s.is_idle()) {
        driver::SUCCESS
    } else {
        driver::ERROR_NOT_READY
    }
}

/// Waits for every stream, as `cuCtxSynchronize` does. A failure is
/// reported here and left for its stream's own `synchronize` too.
pub(crate) fn synchronize_all() -> Status {
    let streams: Vec<Arc<SimStream>> = {
        let streams = registry().lock().unwrap_or_else(|e| e.into_inner());
        streams.iter().filter_map(Weak::upgrade).collect()
    };
    let mut status = driver::SUCCESS;
    for stream in streams {
        if let Some(message) = stream.wait_idle().failure.clone() {
            status = super::report(message, driver::ERROR_LAUNCH_FAILED);
        }
    }
    status
}

/// Waits for every stream without reporting failures (for `cuMemFree`).
pub(crate) fn wait_all() {
    let streams: Vec<Arc<SimStream>> = {
        let streams = registry().lock().unwrap_or_else(|e| e.into_inner());
        streams.iter().filter_map(Weak::upgrade).collect()
    };
    for stream in streams {
        drop(stream.wait_idle());
    }
}

/// Queues a marker on the stream `handle` names.
pub(crate) fn enqueue_mark(handle: CUstream, mark: Box<dyn FnOnce() + Send>) -> Status {
    with(handle, |s| s.enqueue_mark(mark));
    driver::SUCCESS
}

/// Queues `operation` on the stream `handle` names.
pub(crate) fn enqueue(handle: CUstream, operation: Operation) -> Status {
    with(handle, |s| s.enqueue(operation));
    driver::SUCCESS
}
