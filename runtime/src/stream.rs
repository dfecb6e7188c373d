//! Streams: ordered queues of device work.
//!
//! Besides the streams a program creates, each device has two default streams:
//!
//! - the **legacy default stream** ([`Stream::null`], CUDA's stream 0, CuPy's
//!   `Stream.null`): one per device, shared by every host thread, and
//!   *synchronising*: work on it waits for all earlier work on the device's
//!   blocking streams and they wait for it. Streams made by [`Stream::new`] are
//!   non-blocking, so they do not synchronise with it;
//! - the **per-thread default stream** ([`Stream::per_thread`], CuPy's
//!   `Stream.ptds`): one per host thread and device, an ordinary stream that
//!   does not synchronise with other streams.
//!
//! Which of the two is a thread's initial current stream is decided by the
//! environment variable [`PER_THREAD_DEFAULT_STREAM_ENV`](crate::PER_THREAD_DEFAULT_STREAM_ENV),
//! as `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM` does for CuPy.

use crate::device::{self, Device, DeviceState};
use crate::driver::{self, CUstream};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::launch::KernelFunction;
use std::ffi::c_void;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

/// `CU_STREAM_NON_BLOCKING`: no implicit synchronisation with the legacy default stream.
const NON_BLOCKING: u32 = 1;

/// How to create a stream: [`Stream::with_options`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamOptions {
    non_blocking: bool,
    priority: i32,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            non_blocking: true,
            priority: 0,
        }
    }
}

impl StreamOptions {
    /// Non-blocking, priority 0: what [`Stream::new`] makes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the stream skips implicit synchronisation with the legacy
    /// default stream (default `true`; `false` gives a blocking stream as
    /// CUDA's `cudaStreamCreate` and Numba's `cuda.stream()` make).
    pub fn non_blocking(mut self, non_blocking: bool) -> Self {
        self.non_blocking = non_blocking;
        self
    }

    /// The stream's priority: lower numbers run first. The device's range is
    /// [`Stream::priority_range`]; values outside it are clamped by CUDA.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

/// A queue of device work that runs in issue order. Work on different streams
/// may overlap.
///
/// `Stream` is a handle: clones refer to the same stream, and two handles are
/// equal when they refer to the same driver stream. A stream this crate made
/// is destroyed when the last handle is dropped (after its queued work, which
/// the driver lets finish).
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Owned,
    External,
    LegacyDefault,
    PerThreadDefault,
}

struct StreamInner {
    raw: CUstream,
    ordinal: usize,
    kind: Kind,
    /// The kernel most recently launched here, for error reports.
    last_kernel: AtomicPtr<KernelFunction>,
    /// Messages of callbacks that panicked, reported by the next `synchronize`.
    callback_panics: Arc<Mutex<Vec<String>>>,
}

// SAFETY: the stream handle is only passed to the driver, which is thread-safe;
// the other fields are plain data, atomics or behind a mutex.
unsafe impl Send for StreamInner {}
// SAFETY: as above.
unsafe impl Sync for StreamInner {}

impl Stream {
    /// A new non-blocking stream on the current device (CuPy's
    /// `cp.cuda.Stream(non_blocking=True)`; `cust` drops this flag, so the
    /// stream is created through the driver directly).
    pub fn new() -> Result<Stream> {
        Stream::with_options(StreamOptions::new())
    }

    /// A new stream on the current device with the given options.
    pub fn with_options(options: StreamOptions) -> Result<Stream> {
        Stream::on_device_with_options(Device::current()?, options)
    }

    /// A new non-blocking stream on `device`.
    pub fn on_device(device: Device) -> Result<Stream> {
        Stream::on_device_with_options(device, StreamOptions::new())
    }

    /// A new stream on `device` with the given options.
    pub fn on_device_with_options(device: Device, options: StreamOptions) -> Result<Stream> {
        device.state()?;
        let flags = if options.non_blocking {
            NON_BLOCKING
        } else {
            0
        };
        let raw = driver::stream_create(flags, options.priority)?;
        Ok(Stream::from_parts(raw, device.ordinal(), Kind::Owned))
    }

    /// The (least, greatest) priorities of streams on the current device; the
    /// greatest priority is the lowest number.
    pub fn priority_range() -> Result<(i32, i32)> {
        Device::current()?.state()?;
        Ok(driver::stream_priority_range()?)
    }

    /// The legacy default stream of the current device (CuPy's `Stream.null`).
    pub fn null() -> Stream {
        Stream::from_parts(
            driver::LEGACY_DEFAULT_STREAM as CUstream,
            device::current_ordinal(),
            Kind::LegacyDefault,
        )
    }

    /// The calling thread's per-thread default stream on the current device
    /// (CuPy's `Stream.ptds`).
    pub fn per_thread() -> Stream {
        Stream::from_parts(
            driver::PER_THREAD_DEFAULT_STREAM as CUstream,
            device::current_ordinal(),
            Kind::PerThreadDefault,
        )
    }

    /// Wraps a stream made by another library (CuPy's `ExternalStream`),
    /// without taking ownership: dropping the `Stream` leaves it alone.
    ///
    /// # Safety
    /// `raw` must be a live stream of `device`'s primary context, and must
    /// outlive every use of the returned `Stream` and its clones.
    pub unsafe fn from_external(raw: CUstream, device: Device) -> Stream {
        Stream::from_parts(raw, device.ordinal(), Kind::External)
    }

    pub(crate) fn from_parts(raw: CUstream, ordinal: usize, kind: Kind) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                raw,
                ordinal,
                kind,
                last_kernel: AtomicPtr::new(std::ptr::null_mut()),
                callback_panics: Arc::new(Mutex::new(Vec::new())),
            }),
        }
    }

    /// The ordinal of the device the stream belongs to.
    pub fn device(&self) -> usize {
        self.inner.ordinal
    }

    /// Whether this is one of the two default streams.
    pub fn is_default(&self) -> bool {
        matches!(
            self.inner.kind,
            Kind::LegacyDefault | Kind::PerThreadDefault
        )
    }

    pub(crate) fn device_state(&self) -> Result<&'static DeviceState> {
        device::state(self.inner.ordinal)
    }

    /// The driver handle, for interoperation with other CUDA libraries.
    pub fn as_raw(&self) -> CUstream {
        self.inner.raw
    }

    /// Waits until all work queued on the stream has finished. A kernel that
    /// failed is named in the error, and so is a callback that panicked.
    pub fn synchronize(&self) -> Result<()> {
        self.device_state()?;
        match driver::stream_synchronize(self.inner.raw) {
            driver::SUCCESS => self.take_callback_panics(),
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

    /// Records a new event at this point of the stream (CuPy's `Stream.record()`).
    pub fn record(&self) -> Result<Event> {
        let event = Event::on_device(self.inner.ordinal, Default::default())?;
        event.record_on(self)?;
        Ok(event)
    }

    /// Runs `callback` on a driver thread once the work queued on the stream
    /// so far has finished; work queued afterwards waits for it. Callbacks run
    /// in stream order. A panic in `callback` is caught, and the next
    /// [`synchronize`](Stream::synchronize) of this stream reports it.
    ///
    /// As CUDA requires, the callback must not use CUDA: runtime calls made
    /// from it return [`Error::CalledFromCallback`].
    pub fn add_callback(&self, callback: impl FnOnce() + Send + 'static) -> Result<()> {
        self.device_state()?;
        let payload = Box::new(CallbackPayload {
            callback: Box::new(callback),
            panics: Arc::clone(&self.inner.callback_panics),
        });
        let user_data = Box::into_raw(payload).cast::<c_void>();
        // SAFETY: `run_callback` takes back the box exactly once; it touches no CUDA API.
        let code = unsafe { driver::launch_host_function(self.inner.raw, run_callback, user_data) };
        if code != driver::SUCCESS {
            // SAFETY: the driver refused the function, so it will never run it:
            // the box is still ours.
            drop(unsafe { Box::from_raw(user_data.cast::<CallbackPayload>()) });
            return Err(self.error("cuLaunchHostFunc", code));
        }
        Ok(())
    }

    fn take_callback_panics(&self) -> Result<()> {
        let mut panics = self
            .inner
            .callback_panics
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if panics.is_empty() {
            Ok(())
        } else {
            Err(Error::CallbackPanicked {
                stream: self.to_string(),
                messages: std::mem::take(&mut *panics),
            })
        }
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
        } else if code == driver::ERROR_NOT_PERMITTED && device::in_callback() {
            Error::CalledFromCallback
        } else {
            Error::Driver(err)
        }
    }
}

struct CallbackPayload {
    callback: Box<dyn FnOnce() + Send>,
    panics: Arc<Mutex<Vec<String>>>,
}

/// Runs a stream callback on the driver's thread, catching panics.
unsafe extern "C" fn run_callback(user_data: *mut c_void) {
    // SAFETY: `user_data` is the box `add_callback` leaked for this call alone.
    let payload = unsafe { Box::from_raw(user_data.cast::<CallbackPayload>()) };
    let CallbackPayload { callback, panics } = *payload;
    let outcome = device::while_in_callback(|| catch_unwind(AssertUnwindSafe(callback)));
    if let Err(panic) = outcome {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_string());
        panics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message);
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        self.inner.raw == other.inner.raw
            && (self.is_default() || self.inner.ordinal == other.inner.ordinal)
    }
}

impl Eq for Stream {}

/// As CuPy prints streams: `<Stream 0 (device -1)>` for the legacy default
/// stream, `<Stream 2 (device -1)>` for the per-thread one, and the handle and
/// device ordinal for others.
impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let device = if self.is_default() {
            -1
        } else {
            self.inner.ordinal as i64
        };
        write!(f, "<Stream {} (device {device})>", self.inner.raw as usize)
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        if self.kind == Kind::Owned && device::state(self.ordinal).is_ok() {
            // The driver releases the stream once its queued work completes.
            // A failure here (a context lost to a kernel fault) leaves nothing to do.
            let _ = driver::stream_destroy(self.raw);
        }
    }
}
