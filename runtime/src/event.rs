//! Events: points in a stream, for ordering streams and timing work.

use crate::device::{self, Device};
use crate::driver::{self, CUevent};
use crate::error::{Error, Result};
use crate::stream::Stream;

/// A marker recorded into a stream. Another stream can wait for it, the host
/// can wait for it, and two recorded events give the time between them.
pub struct Event {
    raw: CUevent,
    ordinal: usize,
}

// SAFETY: the event handle is only passed to the driver, which is thread-safe.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    /// A new event on the current device, with timing.
    pub fn new() -> Result<Event> {
        let device = Device::current()?;
        device.state()?;
        Ok(Event {
            raw: driver::event_create(0)?,
            ordinal: device.ordinal(),
        })
    }

    pub(crate) fn as_raw(&self) -> CUevent {
        self.raw
    }

    /// Records the event at the current end of `stream`.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        stream.device_state()?;
        match driver::event_record(self.raw, stream.as_raw()) {
            driver::SUCCESS => Ok(()),
            code => Err(stream.error("cuEventRecord", code)),
        }
    }

    /// Waits until the work before the event's record point has finished.
    pub fn synchronize(&self) -> Result<()> {
        let state = device::state(self.ordinal)?;
        match driver::event_synchronize(self.raw) {
            driver::SUCCESS => Ok(()),
            code => Err(state.error("cuEventSynchronize", code)),
        }
    }

    /// Whether the work before the record point has finished.
    pub fn is_done(&self) -> Result<bool> {
        let state = device::state(self.ordinal)?;
        match driver::event_query(self.raw) {
            driver::SUCCESS => Ok(true),
            driver::ERROR_NOT_READY => Ok(false),
            code => Err(state.error("cuEventQuery", code)),
        }
    }

    /// Milliseconds between two recorded events. Waits for `end` to complete
    /// first, rather than failing as CUDA does when it has not.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        end.synchronize()?;
        let (code, ms) = driver::event_elapsed_ms(start.raw, end.raw);
        driver::check("cuEventElapsedTime", code).map_err(Error::Driver)?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if device::state(self.ordinal).is_ok() {
            // Destroying a pending event is allowed: the driver frees it later.
            let _ = driver::event_destroy(self.raw);
        }
    }
}
