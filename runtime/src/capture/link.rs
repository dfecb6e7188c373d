//! A stream's and an event's links to the capture they take part in, and
//! the rules of waiting for an event across captures.

use super::record::Record;
use crate::backend::EventHandle;
use crate::error::{Error, Result};
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A stream's part in a capture: the capture, and an untimed event recorded
/// just before the stream entered it, which marks where its real work ends
/// (what streams outside the capture wait for).
pub(crate) struct Link<S> {
    membership: Mutex<Option<(Arc<Record<S>>, EventHandle)>>,
    /// Whether `membership` holds one: read without the lock on every
    /// tracked access, so work outside captures pays one load.
    capturing: AtomicBool,
}

impl<S: Clone + PartialEq + Display> Link<S> {
    /// In no capture.
    pub(crate) const fn new() -> Self {
        Link {
            membership: Mutex::new(None),
            capturing: AtomicBool::new(false),
        }
    }

    /// The capture the stream takes part in now, if any: outside captures,
    /// one load (every launch and tracked access asks).
    #[inline]
    pub(crate) fn active(&self) -> Option<Arc<Record<S>>> {
        if !self.capturing.load(Ordering::Acquire) {
            return None;
        }
        self.active_member()
    }

    /// As [`active`](Self::active), once the stream joined a capture.
    #[inline(never)]
    fn active_member(&self) -> Option<Arc<Record<S>>> {
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
    pub(crate) fn enter(&self, capture: &Arc<Record<S>>, before: EventHandle) {
        *lock(&self.membership) = Some((Arc::clone(capture), before));
        self.capturing.store(true, Ordering::Release);
    }

    /// Leaves the capture; returns it and the event to destroy.
    pub(crate) fn leave(&self) -> Option<(Arc<Record<S>>, EventHandle)> {
        self.capturing.store(false, Ordering::Release);
        lock(&self.membership).take()
    }
}

/// How a stream waits for an event.
pub(crate) enum EventWait<S> {
    /// As outside captures, or inside one capture (a graph edge).
    Plain,
    /// The stream joins the capture the event was recorded in.
    Fork(Arc<Record<S>>),
    /// Not possible, for the reason the error gives.
    Refused(Error),
}

/// How `stream`, in capture `mine` if any, waits for an event whose latest
/// record was made in capture `theirs`, if any.
pub(crate) fn event_wait<S: Clone + PartialEq + Display>(
    stream: &impl Display,
    mine: Option<Arc<Record<S>>>,
    theirs: Option<Arc<Record<S>>>,
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

/// An event's link: the capture its latest record was made in, if it was.
/// In a capture the record is a point of the graph being built, which
/// streams waiting for the event join; it never completes as such.
pub(crate) struct Mark<S>(Mutex<Option<Arc<Record<S>>>>);

impl<S> Mark<S> {
    /// Never recorded in a capture.
    pub(crate) const fn new() -> Self {
        Mark(Mutex::new(None))
    }

    /// The latest record was made in `capture`, or outside captures.
    pub(crate) fn recorded_in(&self, capture: Option<Arc<Record<S>>>) {
        *lock(&self.0) = capture;
    }

    /// The capture the latest record was made in, if it was.
    pub(crate) fn capture(&self) -> Option<Arc<Record<S>>> {
        lock(&self.0).clone()
    }

    /// An error if the latest record was captured: it marks a point of a
    /// graph, not work that completes, so `operation` cannot wait for it.
    pub(crate) fn refuse_captured(&self, operation: &'static str) -> Result<()> {
        match &*lock(&self.0) {
            Some(capture) => Err(Error::InCapture {
                operation,
                stream: "an event recorded in the capture".into(),
                capture: capture.id,
                reason: "the record marks a point of the graph being built, not work that completes; record the event outside the capture (e.g. after launching the graph)",
            }),
            None => Ok(()),
        }
    }
}
