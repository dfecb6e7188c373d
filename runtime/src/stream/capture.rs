//! The state of one graph capture as the runtime sees it: which streams take
//! part, which kernel launches made which nodes, and what must wait until the
//! capture ends. Generic over the stream handle type, so that this module
//! does not depend on the stream module that uses it.

use crate::backend::{EventHandle, GraphNodeHandle};
use crate::error::Error;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A kernel launch captured as a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CapturedKernel {
    /// The node it made.
    pub(crate) node: GraphNodeHandle,
    /// The launched `KernelFunction`'s address: it tells kernels apart.
    pub(crate) function: usize,
    /// The kernel's name.
    pub(crate) name: &'static str,
}

/// One capture, from `begin` to its end, with streams of type `S`.
pub(crate) struct CaptureState<S> {
    /// Unique in the process; names the capture in errors.
    pub(crate) id: u64,
    /// The device of its streams.
    pub(crate) device: usize,
    /// The stream that began it and ends it.
    pub(crate) origin: S,
    /// Every other stream that joined it, in the order they joined.
    members: Mutex<Vec<S>>,
    /// The kernel launches captured, in order.
    kernels: Mutex<Vec<CapturedKernel>>,
    /// Work to do once the capture has ended (frees of memory whose last
    /// use is on a capturing stream but that the graph does not use).
    after_end: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    ended: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<S: Clone + PartialEq> CaptureState<S> {
    /// A capture begun on `origin` of `device`.
    pub(crate) fn new(origin: S, device: usize) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        CaptureState {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            device,
            origin,
            members: Mutex::new(Vec::new()),
            kernels: Mutex::new(Vec::new()),
            after_end: Mutex::new(Vec::new()),
            ended: AtomicBool::new(false),
        }
    }

    /// Whether the capture has ended (or was abandoned).
    pub(crate) fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Records that `stream` joined the capture.
    pub(crate) fn add_member(&self, stream: &S) {
        let mut members = lock(&self.members);
        if *stream != self.origin && !members.contains(stream) {
            members.push(stream.clone());
        }
    }

    /// Records a captured kernel launch.
    pub(crate) fn add_kernel(&self, kernel: CapturedKernel) {
        lock(&self.kernels).push(kernel);
    }

    /// Runs `work` once the capture has ended.
    pub(crate) fn after_end(&self, work: Box<dyn FnOnce() + Send>) {
        lock(&self.after_end).push(work);
    }

    /// Marks the capture ended; returns its members (origin excluded), its
    /// kernels and the work to do now.
    #[allow(clippy::type_complexity)]
    pub(crate) fn end(&self) -> (Vec<S>, Vec<CapturedKernel>, Vec<Box<dyn FnOnce() + Send>>) {
        self.ended.store(true, Ordering::Release);
        (
            std::mem::take(&mut *lock(&self.members)),
            std::mem::take(&mut *lock(&self.kernels)),
            std::mem::take(&mut *lock(&self.after_end)),
        )
    }

    /// The members so far (origin excluded).
    pub(crate) fn members(&self) -> Vec<S> {
        lock(&self.members).clone()
    }
}

impl<S: Clone + PartialEq + Send + Sync + 'static> super::implicit::CaptureEnd for CaptureState<S> {
    fn id(&self) -> u64 {
        self.id
    }

    fn has_ended(&self) -> bool {
        CaptureState::has_ended(self)
    }

    fn after_end(&self, work: Box<dyn FnOnce() + Send>) {
        CaptureState::after_end(self, work)
    }
}

/// A stream's part in a capture: the capture, and an untimed event recorded
/// just before the stream entered it, which marks where its real work ends
/// (what streams outside the capture wait for).
pub(crate) struct CaptureLink<S> {
    membership: Mutex<Option<(Arc<CaptureState<S>>, EventHandle)>>,
    /// Whether `membership` holds one: read without the lock on every
    /// tracked access, so work outside captures pays one load.
    capturing: AtomicBool,
}

impl<S: Clone + PartialEq> CaptureLink<S> {
    /// In no capture.
    pub(crate) const fn new() -> Self {
        CaptureLink {
            membership: Mutex::new(None),
            capturing: AtomicBool::new(false),
        }
    }

    /// The capture the stream takes part in now, if any: outside captures,
    /// one load (every launch and tracked access asks).
    #[inline]
    pub(crate) fn active(&self) -> Option<Arc<CaptureState<S>>> {
        if !self.capturing.load(Ordering::Acquire) {
            return None;
        }
        self.active_member()
    }

    /// As [`active`](Self::active), once the stream joined a capture.
    #[inline(never)]
    fn active_member(&self) -> Option<Arc<CaptureState<S>>> {
        lock(&self.membership)
            .as_ref()
            .filter(|(capture, _)| !capture.has_ended())
            .map(|(capture, _)| Arc::clone(capture))
    }

    /// The event recorded just before the stream entered its capture.
    pub(crate) fn before(&self) -> Option<EventHandle> {
        lock(&self.membership).as_ref().map(|(_, before)| *before)
    }

    /// Enters `capture`; `before` was recorded just before.
    pub(crate) fn enter(&self, capture: &Arc<CaptureState<S>>, before: EventHandle) {
        *lock(&self.membership) = Some((Arc::clone(capture), before));
        self.capturing.store(true, Ordering::Release);
    }

    /// Leaves the capture; returns the event to destroy.
    pub(crate) fn leave(&self) -> Option<EventHandle> {
        self.capturing.store(false, Ordering::Release);
        lock(&self.membership).take().map(|(_, before)| before)
    }
}

/// How a stream waits for an event.
pub(crate) enum EventWait<S> {
    /// As outside captures, or inside one capture (a graph edge).
    Plain,
    /// The stream joins the capture the event was recorded in.
    Fork(Arc<CaptureState<S>>),
    /// Not possible, for the reason the error gives.
    Refused(Error),
}

/// How `stream`, in capture `mine` if any, waits for an event whose latest
/// record was made in capture `theirs`, if any.
pub(crate) fn event_wait<S: Clone + PartialEq>(
    stream: &impl Display,
    mine: Option<Arc<CaptureState<S>>>,
    theirs: Option<Arc<CaptureState<S>>>,
) -> EventWait<S> {
    match (mine, theirs) {
        (_, Some(theirs)) if theirs.has_ended() => EventWait::Refused(Error::InCapture {
            operation: "wait_event",
            stream: "an event".into(),
            capture: theirs.id,
            reason: "the event was last recorded in a capture that has ended, so it marks no work; record it again",
        }),
        (Some(mine), Some(theirs)) if !Arc::ptr_eq(&mine, &theirs) => {
            EventWait::Refused(Error::Capture {
                capture: mine.id,
                reason: format!(
                    "{stream} captures it and cannot wait for an event recorded in capture {}",
                    theirs.id
                ),
            })
        }
        (Some(mine), None) => EventWait::Refused(Error::InCapture {
            operation: "wait_event",
            stream: stream.to_string(),
            capture: mine.id,
            reason: "the event was recorded outside the capture; record it on a stream of the capture, or make the stream wait for it before the capture begins",
        }),
        (None, Some(theirs)) => EventWait::Fork(theirs),
        _ => EventWait::Plain,
    }
}
