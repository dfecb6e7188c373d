//! What a pinned buffer knows of the device's accesses to it: the copies and
//! kernels in flight, each with the element range it touches and an event
//! recorded after it.

use crate::error::Result;
use crate::stream::Stream;
use crate::stream::{Event, EventOptions};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

/// Device accesses in flight that touch the buffer: the element range each
/// touches and an event recorded after it.
#[derive(Default)]
pub(super) struct Pending {
    /// The device reads the buffer: copies to the device, kernels reading a
    /// mapped buffer.
    reads: Vec<(Range<usize>, Event)>,
    /// The device writes the buffer: copies from the device, kernels writing
    /// a mapped buffer.
    writes: Vec<(Range<usize>, Event)>,
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

pub(super) fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pending {
    /// Makes `stream` wait for the in-flight device accesses that conflict
    /// with a new one on `range` (writes conflict with reads and writes,
    /// reads with writes).
    pub(super) fn order_before(
        &mut self,
        stream: &Stream,
        range: &Range<usize>,
        write: bool,
    ) -> Result<()> {
        // Completed accesses need no more tracking.
        self.reads.retain(|(_, e)| !e.is_done().unwrap_or(false));
        self.writes.retain(|(_, e)| !e.is_done().unwrap_or(false));
        let reads = if write { &self.reads[..] } else { &[][..] };
        for (other, event) in reads.iter().chain(&self.writes) {
            if overlaps(other, range) {
                stream.wait_event(event)?;
            }
        }
        Ok(())
    }

    /// Tracks an access to `range` just queued on `stream`, by an event after
    /// it. Without an event (creating or recording it failed), waits for the
    /// stream instead, so the access is over when this returns the error.
    pub(super) fn push_after(
        &mut self,
        stream: &Stream,
        range: Range<usize>,
        write: bool,
    ) -> Result<()> {
        // An event of the stream's device, which need not be the current one.
        let marker = Event::on_device(stream.device(), EventOptions::new().timing(false))
            .and_then(|marker| marker.record_on(stream).map(|()| marker));
        let marker = match marker {
            Ok(marker) => marker,
            Err(error) => {
                // If this fails too, the context is lost and runs no more work.
                let _ = stream.synchronize();
                return Err(error);
            }
        };
        if write {
            self.writes.push((range, marker));
        } else {
            self.reads.push((range, marker));
        }
        Ok(())
    }

    /// Whether every tracked access has completed.
    pub(super) fn is_idle(&self) -> Result<bool> {
        for (_, event) in self.reads.iter().chain(&self.writes) {
            if !event.is_done()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Waits for the device's writes (copies into the buffer, kernels writing
    /// it); they stay tracked until all have completed.
    pub(super) fn wait_for_writes(&mut self) -> Result<()> {
        for (_, event) in &self.writes {
            event.synchronize()?;
        }
        self.writes.clear();
        Ok(())
    }

    /// Waits for every device access; they stay tracked until all have completed.
    pub(super) fn wait_for_all(&mut self) -> Result<()> {
        for (_, event) in self.reads.iter().chain(&self.writes) {
            event.synchronize()?;
        }
        self.reads.clear();
        self.writes.clear();
        Ok(())
    }
}

/// Widens `queued` to cover `range` too.
pub(super) fn widen(queued: &mut Option<Range<usize>>, range: Range<usize>) {
    *queued = Some(match queued.take() {
        Some(q) => q.start.min(range.start)..q.end.max(range.end),
        None => range,
    });
}
