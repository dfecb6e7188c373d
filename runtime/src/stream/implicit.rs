//! The legacy default stream's implicit synchronisation meeting a capture.
//!
//! Work on a device's legacy default stream waits for the device's blocking
//! streams, and they wait for it. While a blocking stream captures, its work
//! only runs when the graph is launched, so any use of the legacy default
//! stream (a query, a wait, an event record, work queued on it) would
//! synchronise with a capture: CUDA refuses it with
//! `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT` and invalidates the capture, in every
//! capture mode. The runtime refuses it first, with [`Error::InCapture`]
//! naming the capture and the operation, and the capture goes on.
//!
//! Each device keeps the blocking streams that take part in a capture now
//! (the stream that began it and those that joined it), with their capture
//! seen through [`CaptureEnd`], so that this module needs no stream type.

/// What this module needs of a capture.
pub(crate) trait CaptureEnd: Send + Sync {
    /// The capture's number.
    fn id(&self) -> u64;
    /// Whether it has ended.
    fn has_ended(&self) -> bool;
    /// Runs `work` once it has ended.
    fn after_end(&self, work: Box<dyn FnOnce() + Send>);
}

use crate::backend::MAX_DEVICES;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A blocking stream in a capture: its id, its description, its capture.
type Member = (u64, String, Arc<dyn CaptureEnd>);

/// Per device: the blocking streams capturing now.
static MEMBERS: [Mutex<Vec<Member>>; MAX_DEVICES] = [const { Mutex::new(Vec::new()) }; MAX_DEVICES];

/// Per device: how many `MEMBERS` holds, read without the lock on every use
/// of the legacy default stream.
static COUNT: [AtomicUsize; MAX_DEVICES] = [const { AtomicUsize::new(0) }; MAX_DEVICES];

/// Why a use of the legacy default stream is refused.
const REASON: &str = "it would use the device's legacy default stream, which synchronises implicitly with blocking streams, and a blocking stream of the device captures (CUDA refuses this with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and invalidates the capture); capture on a non-blocking stream (`Stream::new`), or queue this work on another stream";

fn members(ordinal: usize) -> MutexGuard<'static, Vec<Member>> {
    MEMBERS[ordinal].lock().unwrap_or_else(|e| e.into_inner())
}

/// Records that the blocking stream `id` (described) of `ordinal` takes part in `capture`.
pub(super) fn blocking_joined(
    ordinal: usize,
    id: u64,
    stream: String,
    capture: Arc<dyn CaptureEnd>,
) {
    let mut members = members(ordinal);
    members.push((id, stream, capture));
    COUNT[ordinal].store(members.len(), Ordering::Release);
}

/// Records that stream `id` of `ordinal` left its capture (nothing if it
/// was not a blocking member).
pub(super) fn left(ordinal: usize, id: u64) {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return;
    }
    let mut members = members(ordinal);
    members.retain(|(member, _, _)| *member != id);
    COUNT[ordinal].store(members.len(), Ordering::Release);
}

/// The capture that keeps device `ordinal`'s legacy default stream from
/// being used now, if any (the oldest, where several do).
pub(crate) fn blocking_capture(ordinal: usize) -> Option<Arc<dyn CaptureEnd>> {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return None;
    }
    members(ordinal)
        .iter()
        .filter(|(_, _, capture)| !capture.has_ended())
        .min_by_key(|(_, _, capture)| capture.id())
        .map(|(_, _, capture)| Arc::clone(capture))
}

/// An error naming `operation` and the capture if a blocking stream of
/// device `ordinal` captures: `operation` would use its legacy default stream.
#[inline]
pub(super) fn refuse_legacy_use(ordinal: usize, operation: &'static str) -> Result<()> {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    refuse_slow(ordinal, operation)
}

#[inline(never)]
fn refuse_slow(ordinal: usize, operation: &'static str) -> Result<()> {
    let members = members(ordinal);
    match members
        .iter()
        .filter(|(_, _, capture)| !capture.has_ended())
        .min_by_key(|(_, _, capture)| capture.id())
    {
        Some((_, stream, capture)) => Err(Error::InCapture {
            operation,
            stream: stream.clone(),
            capture: capture.id(),
            reason: REASON,
        }),
        None => Ok(()),
    }
}
