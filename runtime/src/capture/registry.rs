//! Per device: the captures in progress, which device-wide work and the
//! legacy default stream ask.
//!
//! A device-wide wait (`Device::synchronize`, releasing pool memory) cannot
//! complete while a capture lasts: its streams' work only runs when the
//! graph is launched.
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
//! Where several captures are under way, an error names the oldest (the
//! smallest number), whatever order they registered in.

use super::record::InProgress;
use crate::backend::MAX_DEVICES;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Per device: the captures in progress.
static IN_PROGRESS: [Mutex<Vec<Arc<dyn InProgress>>>; MAX_DEVICES] =
    [const { Mutex::new(Vec::new()) }; MAX_DEVICES];

/// Per device: how many `IN_PROGRESS` holds, read without the lock on every
/// use of the legacy default stream.
static COUNT: [AtomicUsize; MAX_DEVICES] = [const { AtomicUsize::new(0) }; MAX_DEVICES];

/// Why a use of the legacy default stream is refused.
const LEGACY: &str = "it would use the device's legacy default stream, which synchronises implicitly with blocking streams, and a blocking stream of the device captures (CUDA refuses this with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and invalidates the capture); capture on a non-blocking stream (`Stream::new`), or queue this work on another stream";

/// Why a device-wide wait is refused.
const DEVICE_WIDE: &str = "a device-wide wait would wait for the capturing streams, whose work only runs when the graph is launched; end the capture first";

fn in_progress(ordinal: usize) -> MutexGuard<'static, Vec<Arc<dyn InProgress>>> {
    IN_PROGRESS[ordinal]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Records that `capture` of device `ordinal` is under way.
pub(crate) fn began(ordinal: usize, capture: Arc<dyn InProgress>) {
    let mut captures = in_progress(ordinal);
    captures.push(capture);
    COUNT[ordinal].store(captures.len(), Ordering::Release);
}

/// Records that capture `id` of device `ordinal` is over.
pub(crate) fn ended(ordinal: usize, id: u64) {
    let mut captures = in_progress(ordinal);
    captures.retain(|capture| capture.id() != id);
    COUNT[ordinal].store(captures.len(), Ordering::Release);
}

/// An error if a capture is in progress on device `ordinal`: a device-wide
/// wait, `operation`, cannot complete while one lasts.
pub(crate) fn refuse_device_wide(ordinal: usize, operation: &'static str) -> Result<()> {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    match in_progress(ordinal).iter().min_by_key(|c| c.id()) {
        Some(capture) => Err(Error::InCapture {
            operation,
            stream: capture.origin().to_string(),
            capture: capture.id(),
            reason: DEVICE_WIDE,
        }),
        None => Ok(()),
    }
}

/// The oldest capture with a blocking stream of device `ordinal`, with that
/// stream's description: what keeps the legacy default stream from being
/// used now.
fn legacy_blocked(ordinal: usize) -> Option<(Arc<dyn InProgress>, String)> {
    in_progress(ordinal)
        .iter()
        .filter(|capture| !capture.has_ended())
        .filter_map(|capture| Some((Arc::clone(capture), capture.blocking_member()?)))
        .min_by_key(|(capture, _)| capture.id())
}

/// The capture that keeps device `ordinal`'s legacy default stream from
/// being used now, if any.
pub(crate) fn legacy_blocker(ordinal: usize) -> Option<Arc<dyn InProgress>> {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return None;
    }
    legacy_blocked(ordinal).map(|(capture, _)| capture)
}

/// An error naming `operation` and the capture if a blocking stream of
/// device `ordinal` captures: `operation` would use its legacy default stream.
#[inline]
pub(crate) fn refuse_legacy_use(ordinal: usize, operation: &'static str) -> Result<()> {
    if COUNT[ordinal].load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    refuse_legacy_slow(ordinal, operation)
}

#[inline(never)]
fn refuse_legacy_slow(ordinal: usize, operation: &'static str) -> Result<()> {
    match legacy_blocked(ordinal) {
        Some((capture, stream)) => Err(Error::InCapture {
            operation,
            stream,
            capture: capture.id(),
            reason: LEGACY,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::Record;
    use super::*;

    fn named(result: Result<()>) -> (u64, String) {
        match result {
            Err(Error::InCapture {
                capture, stream, ..
            }) => (capture, stream),
            other => panic!("expected InCapture, got {other:?}"),
        }
    }

    /// Two captures may register in the other order than their numbers (the
    /// numbers are taken before the driver's begin, on two threads): a
    /// refusal still names the older, so a capture under way is never told
    /// that a younger one blocks it.
    #[test]
    fn a_refusal_names_the_oldest_capture() {
        let ordinal = MAX_DEVICES - 1; // no other test captures on it
        let older = Arc::new(Record::new("stream a".to_string(), ordinal));
        let younger = Arc::new(Record::new("stream b".to_string(), ordinal));
        younger.add_member(&"stream b".to_string(), true);
        older.add_member(&"stream a".to_string(), false);
        older.add_member(&"stream c".to_string(), true);
        began(ordinal, Arc::clone(&younger) as Arc<dyn InProgress>);
        began(ordinal, Arc::clone(&older) as Arc<dyn InProgress>);
        let device_wide = named(refuse_device_wide(ordinal, "Device::synchronize"));
        assert_eq!(device_wide, (older.id, "stream a".to_string()));
        // The legacy default stream: the blocking stream of the older capture.
        let legacy = named(refuse_legacy_use(ordinal, "Stream::synchronize"));
        assert_eq!(legacy, (older.id, "stream c".to_string()));
        older.remove_member(&"stream c".to_string());
        let legacy = named(refuse_legacy_use(ordinal, "Stream::synchronize"));
        assert_eq!(legacy, (younger.id, "stream b".to_string()));
        ended(ordinal, older.id);
        let (capture, _) = named(refuse_device_wide(ordinal, "Device::synchronize"));
        assert_eq!(capture, younger.id);
        younger.end();
        assert!(refuse_legacy_use(ordinal, "Stream::synchronize").is_ok());
        assert!(legacy_blocker(ordinal).is_none());
        ended(ordinal, younger.id);
        assert!(refuse_device_wide(ordinal, "Device::synchronize").is_ok());
    }
}
