//! Streams: ordered queues of device work.

use crate::device::{self, Device, DeviceState};
use crate::driver::{self, CUstream};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::launch::KernelFunction;
use std::fmt;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// `CU_STREAM_NON_BLOCKING`: no implicit synchronisation with the legacy default stream.
const NON_BLOCKING: u32 = 1;

/// A queue of device work that runs in issue order. Work on different streams
/// may overlap.
///
/// `Stream` is a handle: clones refer to the same stream, and two handles are
/// equal when they refer to the same driver stream. The driver stream is
/// destroyed when the last handle is dropped (after its queued work, which the
/// driver lets finish).
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

struct StreamInner {
    raw: CUstream,
    ordinal: usize,
    owned: bool,
    /// The kernel most recently launched here, for error reports.
    last_kernel: AtomicPtr<KernelFunction>,
}

// SAFETY: the stream handle is only passed to the driver, which is thread-safe;
// the other fields are plain data or atomics.
unsafe impl Send for StreamInner {}
// SAFETY: as above.
unsafe impl Sync for StreamInner {}

impl Stream {
    /// A new stream on the current device that does not synchronise with the
    /// legacy default stream (`CU_STREAM_NON_BLOCKING`, which `cust` drops).
    pub fn new() -> Result<Stream> {
        Stream::on_device(Device::current()?)
    }

    /// A new non-blocking stream on `device`.
    pub fn on_device(device: Device) -> Result<Stream> {
        device.state()?;
        let raw = driver::stream_create(NON_BLOCKING, 0)?;
        Ok(Stream::from_parts(raw, device.ordinal(), true))
    }

    pub(crate) fn legacy_default(ordinal: usize) -> Stream {
        Stream::from_parts(std::ptr::null_mut(), ordinal, false)
    }

    fn from_parts(raw: CUstream, ordinal: usize, owned: bool) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                raw,
                ordinal,
                owned,
                last_kernel: AtomicPtr::new(std::ptr::null_mut()),
            }),
        }
    }

    /// The ordinal of the device the stream belongs to.
    pub fn device(&self) -> usize {
        self.inner.ordinal
    }

    pub(crate) fn device_state(&self) -> Result<&'static DeviceState> {
        device::state(self.inner.ordinal)
    }

    /// The driver handle, for interoperation with other CUDA libraries.
    pub fn as_raw(&self) -> CUstream {
        self.inner.raw
    }

    /// Waits until all work queued on the stream has finished. A kernel that
    /// failed is named in the error.
    pub fn synchronize(&self) -> Result<()> {
        self.device_state()?;
        match driver::stream_synchronize(self.inner.raw) {
            driver::SUCCESS => Ok(()),
            code => Err(self.error("cuStreamSynchronize", code)),
        }
    }

    /// Whether all work queued on the stream has finished.
    pub fn is_done(&self) -> Result<bool> {
        self.device_state()?;
        match driver::stream_query(self.inner.raw) {
            driver::SUCCESS => Ok(true),
            driver::ERROR_NOT_READY => Ok(false),
            code => Err(self.error("cuStreamQuery", code)),
        }
    }

    /// Makes work queued on this stream after this call wait until `event`
    /// has completed. The event is only borrowed: it can be waited on again.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device_state()?;
        match driver::stream_wait_event(self.inner.raw, event.as_raw()) {
            driver::SUCCESS => Ok(()),
            code => Err(self.error("cuStreamWaitEvent", code)),
        }
    }

    /// Records a new event at this point of the stream.
    pub fn record(&self) -> Result<Event> {
        let event = Event::new()?;
        event.record(self)?;
        Ok(event)
    }

    pub(crate) fn note_launch(&self, kernel: &'static KernelFunction, device: &DeviceState) {
        let ptr = kernel as *const KernelFunction as *mut KernelFunction;
        self.inner.last_kernel.store(ptr, Ordering::Relaxed);
        device.last_kernel.store(ptr, Ordering::Relaxed);
    }

    /// The kernel most recently launched on this stream.
    pub fn last_kernel(&self) -> Option<&'static str> {
        let ptr = self.inner.last_kernel.load(Ordering::Relaxed);
        (!ptr.is_null()).then(|| KernelFunction::name_of(ptr))
    }

    /// Maps a failed status of an operation on this stream to an error that
    /// names the stream's last kernel when a kernel fault surfaced.
    pub(crate) fn error(&self, call: &'static str, code: driver::Status) -> Error {
        let err = driver::check(call, code).expect_err("called with a failure");
        if driver::is_kernel_fault(code) {
            let ptr = self.inner.last_kernel.load(Ordering::Relaxed);
            let kernel = if ptr.is_null() {
                device::state(self.inner.ordinal)
                    .map(|d| d.last_kernel_name())
                    .unwrap_or("<unknown>")
            } else {
                KernelFunction::name_of(ptr)
            };
            Error::KernelFailed {
                kernel,
                context: format!("{call} on {self}"),
                driver: err,
            }
        } else {
            Error::Driver(err)
        }
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        self.inner.raw == other.inner.raw && self.inner.ordinal == other.inner.ordinal
    }
}

impl Eq for Stream {}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<Stream {:#x} (device {})>",
            self.inner.raw as usize, self.inner.ordinal
        )
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        if self.owned && device::state(self.ordinal).is_ok() {
            // The driver releases the stream once its queued work completes.
            // A failure here (a context lost to a kernel fault) leaves nothing to do.
            let _ = driver::stream_destroy(self.raw);
        }
    }
}

/// The calling thread's current stream: the legacy default stream of the
/// current device.
pub fn current_stream() -> Result<Stream> {
    Ok(Device::current()?.legacy_default_stream().clone())
}
