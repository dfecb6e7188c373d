//! Events: points in a stream, for ordering streams and timing work.

use super::{CaptureRecord, Stream};
use crate::backend::{driver, EventFlags, EventHandle};
use crate::callback::in_callback;
use crate::capture::Mark;
use crate::deferred::defer;
use crate::device::{self, Device};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How to create an event: [`Event::with_options`]. The default, as CuPy's,
/// records timing and waits by spinning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventOptions {
    blocking_sync: bool,
    timing: bool,
    interprocess: bool,
}

impl Default for EventOptions {
    fn default() -> Self {
        EventOptions {
            blocking_sync: false,
            timing: true,
            interprocess: false,
        }
    }
}

impl EventOptions {
    /// Timing on, spinning wait, not interprocess.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether [`Event::synchronize`] blocks the thread (yielding the CPU)
    /// rather than spinning.
    pub fn blocking_sync(mut self, on: bool) -> Self {
        self.blocking_sync = on;
        self
    }

    /// Whether the event records a timestamp, for [`Event::elapsed_ms`].
    /// Events without timing are cheaper to record and wait on.
    pub fn timing(mut self, on: bool) -> Self {
        self.timing = on;
        self
    }

    /// Whether the event can be shared with other processes. CUDA requires
    /// such events to have timing disabled.
    pub fn interprocess(mut self, on: bool) -> Self {
        self.interprocess = on;
        self
    }

    fn flags(self) -> Result<EventFlags> {
        if self.interprocess && self.timing {
            return Err(Error::InvalidEventOptions {
                reason: "an interprocess event must have timing disabled: add `.timing(false)`",
            });
        }
        Ok(EventFlags {
            blocking_sync: self.blocking_sync,
            timing: self.timing,
            interprocess: self.interprocess,
        })
    }
}

/// A marker recorded into a stream. Another stream can wait for it, the host
/// can wait for it, and two recorded events give the time between them.
pub struct Event {
    handle: EventHandle,
    ordinal: usize,
    timing: bool,
    recorded: AtomicBool,
    /// The capture the latest record was made in, if it was.
    captured: Mark<Stream>,
}

impl Event {
    /// A new event on the current device, with timing (CuPy's `cp.cuda.Event()`).
    pub fn new() -> Result<Event> {
        Event::with_options(EventOptions::new())
    }

    /// A new event on the current device with the given options.
    pub fn with_options(options: EventOptions) -> Result<Event> {
        Event::on_device(Device::current()?.ordinal(), options)
    }

    pub(crate) fn on_device(ordinal: usize, options: EventOptions) -> Result<Event> {
        let flags = options.flags()?;
        let state = device::state(ordinal)?;
        Ok(Event {
            handle: driver()
                .event_create(ordinal, flags)
                .map_err(|e| state.error(e))?,
            ordinal,
            timing: options.timing,
            recorded: AtomicBool::new(false),
            captured: Mark::new(),
        })
    }

    pub(crate) fn handle(&self) -> EventHandle {
        self.handle
    }

    /// The ordinal of the device the event belongs to.
    pub fn device(&self) -> usize {
        self.ordinal
    }

    /// Records the event at the current end of the calling thread's current
    /// stream (CuPy's `event.record()`).
    pub fn record(&self) -> Result<()> {
        self.record_on(&super::current_stream()?)
    }

    /// Records the event at the current end of `stream` (CuPy's
    /// `event.record(stream)`). The stream must belong to the event's device.
    pub fn record_on(&self, stream: &Stream) -> Result<()> {
        if stream.device() != self.ordinal {
            return Err(Error::EventOnOtherDevice {
                event_device: self.ordinal,
                stream_device: stream.device(),
            });
        }
        stream.device_state("Event::record_on")?;
        let capture = stream.active_capture();
        driver()
            .event_record(self.handle, stream.handle())
            .map_err(|e| stream.error(e))?;
        self.captured.recorded_in(capture);
        self.recorded.store(true, Ordering::Release);
        Ok(())
    }

    /// The capture the latest record was made in, if it was.
    pub(crate) fn captured_in(&self) -> Option<Arc<CaptureRecord>> {
        self.captured.capture()
    }

    /// An error if the latest record was captured: it marks a point of a
    /// graph, not work that completes.
    pub(crate) fn refuse_captured(&self, operation: &'static str) -> Result<()> {
        self.captured.refuse_captured(operation)
    }

    /// Whether the event has been recorded at least once.
    pub fn is_recorded(&self) -> bool {
        self.recorded.load(Ordering::Acquire)
    }

    /// Waits until the work before the event's record point has finished (at
    /// once for an event never recorded, as in CUDA).
    pub fn synchronize(&self) -> Result<()> {
        let state = device::state(self.ordinal)?;
        self.refuse_captured("Event::synchronize")?;
        driver()
            .event_synchronize(self.handle)
            .map_err(|e| state.error(e))
    }

    /// Whether the work before the record point has finished.
    pub fn is_done(&self) -> Result<bool> {
        let state = device::state(self.ordinal)?;
        self.refuse_captured("Event::is_done")?;
        driver()
            .event_is_done(self.handle)
            .map_err(|e| state.error(e))
    }

    /// Milliseconds between two recorded events of one device.
    ///
    /// When `end` has not completed yet, this waits for it; CUDA (and CuPy,
    /// which raises `CUDARuntimeError: cudaErrorNotReady`) fail instead. An
    /// event never recorded, or created without timing, is an error naming
    /// which of the two it is; so are events of two devices, which have no
    /// common clock (on the simulator too).
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        if start.ordinal != end.ordinal {
            return Err(Error::EventsOfTwoDevices {
                start_device: start.ordinal,
                end_device: end.ordinal,
            });
        }
        for (event, which) in [(start, "start"), (end, "end")] {
            event.refuse_captured("Event::elapsed_ms")?;
            if !event.timing {
                return Err(Error::EventTimingDisabled { which });
            }
            if !event.is_recorded() {
                return Err(Error::EventNotRecorded { which });
            }
        }
        end.synchronize()?;
        start.synchronize()?;
        let state = device::state(end.ordinal)?;
        driver()
            .event_elapsed_ms(start.handle, end.handle)
            .map_err(|e| state.error(e))
    }
}

/// Milliseconds between two recorded events (CuPy's `cp.cuda.get_elapsed_time`):
/// [`Event::elapsed_ms`].
pub fn get_elapsed_time(start: &Event, end: &Event) -> Result<f32> {
    Event::elapsed_ms(start, end)
}

impl Drop for Event {
    fn drop(&mut self) {
        let (handle, ordinal) = (self.handle, self.ordinal);
        let release = move || {
            if device::state(ordinal).is_ok() {
                // Destroying a pending event is allowed: the driver frees it later.
                let _ = driver().event_destroy(handle);
            }
        };
        if in_callback() {
            // CUDA calls are forbidden here: the release thread does it.
            defer(Box::new(release));
        } else {
            release();
        }
    }
}
