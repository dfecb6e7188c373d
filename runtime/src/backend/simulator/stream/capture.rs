//! A stream's part in graph capture: joining a capture, beginning and
//! ending one. While a stream captures, what is queued on it becomes nodes
//! of the capture ([`super::super::capture`]) instead of running.

use super::super::super::{status, DriverError, GraphNodeKind, StreamHandle};
use super::super::capture::{union, Capture, Membership};
use super::super::errors::capture_error;
use super::lookup::with;
use super::queue::{streams_of, Kind};
use std::sync::Arc;

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
