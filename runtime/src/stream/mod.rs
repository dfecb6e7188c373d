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
//!   `Stream.ptds`): one per host thread and device, blocking (it
//!   synchronises with the legacy default stream, not with other streams).
//!   It belongs to its thread: CUDA names it by a handle that means "the
//!   calling thread's", so a handle moved to another thread is refused rather
//!   than silently naming that thread's own stream.
//!
//! Which of the two is a thread's initial current stream is decided by the
//! environment variable [`PER_THREAD_DEFAULT_STREAM_ENV`](crate::PER_THREAD_DEFAULT_STREAM_ENV),
//! as `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM` does for CuPy.

mod callback;
mod current;
mod event;
mod options;

pub use current::{current_stream, StreamScope, PER_THREAD_DEFAULT_STREAM_ENV};
pub use event::{get_elapsed_time, Event, EventOptions};
pub use options::{StreamKind, StreamOptions};

use crate::backend::{driver, EventFlags, EventHandle, StreamHandle, MAX_DEVICES};
use crate::callback::in_callback;
use crate::capture::{self, registry, EventWait};
use crate::deferred::defer;
use crate::device::{self, Device, DeviceState};
use crate::error::{Error, Result};
use crate::last_kernel::{KernelId, LastKernel};
use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;

/// A queue of device work that runs in issue order. Work on different streams
/// may overlap.
///
/// `Stream` is a handle: clones refer to the same stream, and two handles are
/// equal (and hash alike) when they refer to the same stream, so streams can
/// key a `HashMap` as CuPy's do a `dict` (clippy's `mutable_key_type` lint
/// flags that because of the bookkeeping behind the handle; `Hash` and `Eq`
/// only read the handle, the device and the owning thread, which never
/// change). A stream this crate made is
/// destroyed when the last handle is dropped (after its queued work, which
/// the driver lets finish), also when that happens inside a stream callback.
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

struct StreamInner {
    /// Unique per stream (the same for every handle of it), for the tracking
    /// of device memory's fast path: an integer compare.
    id: u64,
    handle: StreamHandle,
    ordinal: usize,
    kind: StreamKind,
    /// The thread a per-thread default stream belongs to.
    owner: Option<ThreadId>,
    /// Known flags: `(non_blocking, priority)`; `None` for external streams,
    /// whose flags are asked of the driver.
    options: Option<(bool, i32)>,
    /// The kernel most recently launched here, for error reports.
    last_kernel: LastKernel,
    /// Messages of callbacks that panicked, reported by the next `synchronize`.
    callback_panics: Arc<Mutex<Vec<String>>>,
    /// An untimed event, recorded to let other streams wait for this one's work.
    marker: Mutex<Option<EventHandle>>,
    /// The graph capture the stream takes part in, if any.
    capture: capture::Link<Stream>,
    /// The device's state, once a use of the stream opened it: a launch
    /// reads it here rather than in the device table.
    state: OnceLock<&'static DeviceState>,
}

/// Why waiting for a capturing stream is refused.
pub(crate) const WAITS: &str = "it would wait for work that only runs when the graph is launched; end the capture first, then wait for the graph's launch";

/// A graph capture's record, with streams as the runtime knows them.
pub(crate) type CaptureRecord = capture::Record<Stream>;

impl Stream {
    /// A new non-blocking stream on the current device (CuPy's
    /// `cp.cuda.Stream(non_blocking=True)`).
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

    /// A new stream on `device` with the given options. The priority is
    /// clamped to the device's range, as CUDA does.
    pub fn on_device_with_options(device: Device, options: StreamOptions) -> Result<Stream> {
        let state = device.state()?;
        let (least, greatest) = driver()
            .stream_priority_range(device.ordinal())
            .map_err(|e| state.error(e))?;
        let priority = options.priority.clamp(greatest, least);
        let handle = driver()
            .stream_create(device.ordinal(), options.non_blocking, priority)
            .map_err(|e| state.error(e))?;
        Ok(Stream::from_parts(
            handle,
            device.ordinal(),
            StreamKind::Owned,
            Some((options.non_blocking, priority)),
        ))
    }

    /// The (least, greatest) priorities of streams on the current device; the
    /// greatest priority is the lowest number.
    pub fn priority_range() -> Result<(i32, i32)> {
        let device = Device::current()?;
        let state = device.state()?;
        driver()
            .stream_priority_range(device.ordinal())
            .map_err(|e| state.error(e))
    }

    /// The legacy default stream of the current device (CuPy's `Stream.null`).
    pub fn null() -> Stream {
        Stream::legacy_on(device::current_ordinal()).clone()
    }

    /// The stream the calling thread's current stream is while none has been
    /// made current: [`Stream::per_thread`] when
    /// [`PER_THREAD_DEFAULT_STREAM_ENV`](crate::PER_THREAD_DEFAULT_STREAM_ENV)
    /// is `1`, else [`Stream::null`] (CuPy's default stream in either mode).
    ///
    /// ```no_run
    /// use gpu_runtime::{current_stream, Stream};
    /// # fn main() -> gpu_runtime::Result<()> {
    /// let s = Stream::new()?;
    /// {
    ///     let _with_s = s.enter()?;
    ///     assert_eq!(current_stream()?, s);
    /// }
    /// assert_eq!(current_stream()?, Stream::thread_default());
    /// # Ok(())
    /// # }
    /// ```
    pub fn thread_default() -> Stream {
        current::default_stream()
    }

    /// The calling thread's per-thread default stream on the current device
    /// (CuPy's `Stream.ptds`). The handle belongs to the calling thread: used
    /// from another thread, every operation fails with
    /// [`Error::PerThreadStreamOnOtherThread`].
    pub fn per_thread() -> Stream {
        let ordinal = device::current_ordinal();
        let mut stream = Stream::with_id(
            per_thread_id(ordinal),
            StreamHandle::per_thread(ordinal),
            ordinal,
            StreamKind::PerThreadDefault,
            Some((false, 0)),
        );
        let inner = Arc::get_mut(&mut stream.inner).expect("just made");
        inner.owner = Some(std::thread::current().id());
        // One stream, whatever handle queued the callback: its panics are
        // reported by the next synchronize through any handle.
        inner.callback_panics = per_thread_panics(ordinal);
        stream
    }

    /// Wraps a stream made by another library (CuPy's `ExternalStream`),
    /// without taking ownership: dropping the `Stream` leaves it alone.
    ///
    /// `raw` is the library's `CUstream` (`cudaStream_t`), of any pointer
    /// type (cust's `CUstream`, `*mut c_void`, ...).
    ///
    /// # Safety
    /// `raw` must be a live stream of `device`'s primary context, and must
    /// outlive every use of the returned `Stream` and its clones.
    pub unsafe fn from_external<P>(raw: *mut P, device: Device) -> Stream {
        Stream::from_parts(
            StreamHandle {
                raw: raw as usize,
                device: device.ordinal(),
            },
            device.ordinal(),
            StreamKind::External,
            None,
        )
    }

    pub(crate) fn from_parts(
        handle: StreamHandle,
        ordinal: usize,
        kind: StreamKind,
        options: Option<(bool, i32)>,
    ) -> Stream {
        Stream::with_id(next_id(), handle, ordinal, kind, options)
    }

    fn with_id(
        id: u64,
        handle: StreamHandle,
        ordinal: usize,
        kind: StreamKind,
        options: Option<(bool, i32)>,
    ) -> Stream {
        Stream {
            inner: Arc::new(StreamInner {
                id,
                handle,
                ordinal,
                kind,
                owner: None,
                options,
                last_kernel: LastKernel::new(),
                callback_panics: Arc::new(Mutex::new(Vec::new())),
                marker: Mutex::new(None),
                capture: capture::Link::new(),
                state: OnceLock::new(),
            }),
        }
    }

    /// A number unique to this stream: every handle of it has the same.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// The ordinal of the device the stream belongs to.
    pub fn device(&self) -> usize {
        self.inner.ordinal
    }

    /// What the handle refers to: a stream of this crate, another library's,
    /// or one of the default streams.
    pub fn kind(&self) -> StreamKind {
        self.inner.kind
    }

    /// Whether this is one of the two default streams.
    pub fn is_default(&self) -> bool {
        matches!(
            self.inner.kind,
            StreamKind::LegacyDefault | StreamKind::PerThreadDefault
        )
    }

    /// Whether this crate destroys the stream with its last handle (CuPy
    /// owns the streams it creates, not those of `ExternalStream`).
    pub fn is_owned(&self) -> bool {
        self.inner.kind == StreamKind::Owned
    }

    /// Whether the stream skips implicit synchronisation with the legacy
    /// default stream (CuPy's `stream.is_non_blocking`). For another
    /// library's stream the driver is asked.
    pub fn is_non_blocking(&self) -> Result<bool> {
        Ok(self.options()?.0)
    }

    /// The stream's priority, after clamping to the device's range (CuPy's
    /// `stream.priority`). For another library's stream the driver is asked.
    pub fn priority(&self) -> Result<i32> {
        Ok(self.options()?.1)
    }

    fn options(&self) -> Result<(bool, i32)> {
        match self.inner.options {
            Some(options) => Ok(options),
            None => {
                self.device_state("Stream::is_non_blocking")?;
                Ok(driver().stream_properties(self.inner.handle)?)
            }
        }
    }

    /// The device's state, after checking that this thread may use the
    /// stream for `operation`: another thread's per-thread default stream is
    /// refused, and so is the legacy default stream while a blocking stream
    /// of its device captures ([`registry`]). (Driver calls on the stream's
    /// handle act on its device whatever else the caller did in between.)
    #[inline]
    pub(crate) fn device_state(&self, operation: &'static str) -> Result<&'static DeviceState> {
        self.check_thread()?;
        if self.inner.kind == StreamKind::LegacyDefault {
            registry::refuse_legacy_use(self.inner.ordinal, operation)?;
        }
        match self.inner.state.get() {
            Some(&state) if !in_callback() => Ok(state),
            _ => self.open_device_state(),
        }
    }

    /// The device's state on the stream's first use (or the refusal inside
    /// a stream callback, which [`device::state`] makes).
    #[cold]
    #[inline(never)]
    fn open_device_state(&self) -> Result<&'static DeviceState> {
        let state = device::state(self.inner.ordinal)?;
        Ok(self.inner.state.get_or_init(|| state))
    }

    /// Whether the stream takes part in a graph capture now (CuPy's
    /// `stream.is_capturing()`). Asked of the legacy default stream while a
    /// blocking stream of its device captures, it is an error naming the
    /// capture, as CUDA's `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT` is for CuPy;
    /// unlike CUDA, the capture goes on.
    ///
    /// ```no_run
    /// use gpu_runtime::Stream;
    /// let stream = Stream::new()?;
    /// let capture = stream.begin_capture()?;
    /// assert!(stream.is_capturing()?);
    /// assert!(!Stream::null().is_capturing()?); // `stream` is non-blocking
    /// capture.end()?;
    /// assert!(!stream.is_capturing()?);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn is_capturing(&self) -> Result<bool> {
        self.device_state("Stream::is_capturing")?;
        Ok(self.active_capture().is_some())
    }

    /// Whether the calling thread may use the stream (only another thread's
    /// per-thread default stream is refused).
    pub(crate) fn is_usable_here(&self) -> bool {
        self.check_thread().is_ok()
    }

    #[inline]
    fn check_thread(&self) -> Result<()> {
        match self.inner.owner {
            Some(owner) => Self::check_owner(owner),
            None => Ok(()),
        }
    }

    /// A per-thread default stream is usable on its own thread only.
    #[inline(never)]
    fn check_owner(owner: std::thread::ThreadId) -> Result<()> {
        if owner == std::thread::current().id() {
            return Ok(());
        }
        Err(Error::PerThreadStreamOnOtherThread {
            owner: format!("{owner:?}"),
            caller: format!("{:?}", std::thread::current().id()),
        })
    }

    /// The driver's handle of the stream.
    pub(crate) fn handle(&self) -> StreamHandle {
        self.inner.handle
    }

    /// The CUDA handle, for interoperation with other CUDA libraries (CuPy's
    /// `stream.ptr`). For the default streams it is CUDA's special value
    /// (0 or 2); on the simulator it names a simulator stream.
    pub fn as_raw(&self) -> *mut std::ffi::c_void {
        self.inner.handle.raw as *mut std::ffi::c_void
    }

    /// Waits until all work queued on the stream has finished. A kernel that
    /// failed is named in the error, and so is a callback that panicked.
    pub fn synchronize(&self) -> Result<()> {
        self.device_state("Stream::synchronize")?;
        self.refuse_in_capture("synchronize", WAITS)?;
        driver()
            .stream_synchronize(self.inner.handle)
            .map_err(|e| self.error(e))?;
        self.take_callback_panics()
    }

    /// Whether all work queued on the stream has finished.
    pub fn is_done(&self) -> Result<bool> {
        self.device_state("Stream::is_done")?;
        self.refuse_in_capture("is_done", WAITS)?;
        driver()
            .stream_is_done(self.inner.handle)
            .map_err(|e| self.error(e))
    }

    /// Makes work queued on this stream after this call wait until `event`
    /// has completed. The event is only borrowed: it can be waited on again.
    /// The event may belong to another device.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device_state("Stream::wait_event")?;
        match capture::event_wait(self, self.active_capture(), event.captured_in()) {
            EventWait::Plain => {}
            EventWait::Refused(error) => return Err(error),
            EventWait::Fork(theirs) => {
                // The stream joins the capture.
                self.join_capture(&theirs)?;
                let waited = driver().stream_wait_event(self.inner.handle, event.handle());
                if let Err(e) = waited {
                    self.leave_capture();
                    return Err(self.error(e));
                }
                return Ok(());
            }
        }
        driver()
            .stream_wait_event(self.inner.handle, event.handle())
            .map_err(|e| self.error(e))
    }

    /// Records a new event at this point of the stream (CuPy's `Stream.record()`).
    pub fn record(&self) -> Result<Event> {
        let event = Event::on_device(self.inner.ordinal, Default::default())?;
        event.record_on(self)?;
        Ok(event)
    }

    /// Makes work queued on this stream after this call wait for all the work
    /// queued on `other` so far, through an untimed event recorded on `other`
    /// now. Another thread's per-thread default stream cannot be recorded on
    /// from here: then the event is recorded on the device's legacy default
    /// stream, which CUDA orders after the earlier work of every blocking
    /// stream, per-thread ones included.
    pub(crate) fn wait_for(&self, other: &Stream) -> Result<()> {
        if self == other {
            return Ok(());
        }
        let marker = match (self.active_capture(), other.active_capture()) {
            // Inside one capture: a captured record and wait, a graph edge.
            (Some(mine), Some(theirs)) if Arc::ptr_eq(&mine, &theirs) => other.record_marker()?,
            (Some(mine), _) => {
                return Err(Error::InCapture {
                    operation: "an ordering between streams",
                    stream: self.to_string(),
                    capture: mine.id,
                    reason: "a capturing stream cannot wait for work outside its capture; the graph is ordered after such work when it is launched",
                })
            }
            // The other stream captures: its real work is what it had queued
            // when it entered the capture.
            (None, Some(_)) => other
                .inner
                .capture
                .before()
                .expect("a capturing stream has a marker"),
            (None, None) => {
                let source = if !other.is_usable_here() {
                    Stream::legacy_on(other.device())
                } else {
                    other
                };
                source.record_marker()?
            }
        };
        self.device_state("an ordering between streams")?;
        driver()
            .stream_wait_event(self.inner.handle, marker)
            .map_err(|e| self.error(e))
    }

    /// Waits on the host for the work queued on this stream so far, outside
    /// a capture: for a capturing stream, its work before the capture; for
    /// another thread's per-thread default stream, which cannot be recorded
    /// on from here, the device's legacy default stream, whose work waits for
    /// it. For the host accesses of memory the tracking orders.
    pub(crate) fn wait_on_host(&self) -> Result<()> {
        let marker = match self.active_capture() {
            Some(_) => self
                .inner
                .capture
                .before()
                .expect("a capturing stream has a marker"),
            None if !self.is_usable_here() => Stream::legacy_on(self.device()).record_marker()?,
            None => self.record_marker()?,
        };
        driver()
            .event_synchronize(marker)
            .map_err(|e| self.error(e))
    }

    /// The capture the stream takes part in now, if any.
    #[inline]
    pub(crate) fn active_capture(&self) -> Option<Arc<CaptureRecord>> {
        self.inner.capture.active()
    }

    /// An error naming the capture if the stream captures: `operation`
    /// cannot be captured, for `reason`.
    pub(crate) fn refuse_in_capture(
        &self,
        operation: &'static str,
        reason: &'static str,
    ) -> Result<()> {
        match self.active_capture() {
            Some(capture) => Err(Error::InCapture {
                operation,
                stream: self.to_string(),
                capture: capture.id,
                reason,
            }),
            None => Ok(()),
        }
    }

    /// Makes the stream a member of `capture`, after recording the point
    /// its real work ends at.
    pub(crate) fn join_capture(&self, capture: &Arc<CaptureRecord>) -> Result<()> {
        if self.is_default() {
            return Err(Error::Capture {
                capture: capture.id,
                reason: format!(
                    "{self} is a default stream, which cannot take part in a capture; use a stream made by `Stream::new`"
                ),
            });
        }
        if self.device() != capture.device {
            return Err(Error::Capture {
                capture: capture.id,
                reason: format!(
                    "{self} is on device {} and the capture on device {}",
                    self.device(),
                    capture.device
                ),
            });
        }
        let blocking = !self.is_non_blocking()?;
        let before = driver()
            .event_create(
                self.inner.ordinal,
                EventFlags {
                    blocking_sync: false,
                    timing: false,
                    interprocess: false,
                },
            )
            .map_err(|e| self.error(e))?;
        if let Err(e) = driver().event_record(before, self.inner.handle) {
            let _ = driver().event_destroy(before);
            return Err(self.error(e));
        }
        self.inner.capture.enter(capture, before);
        capture.add_member(self, blocking);
        Ok(())
    }

    /// Leaves the capture (its end, or a failed join).
    pub(crate) fn leave_capture(&self) {
        if let Some((capture, before)) = self.inner.capture.leave() {
            capture.remove_member(self);
            let _ = driver().event_destroy(before);
        }
    }

    /// The legacy default stream of device `ordinal`, one handle per device.
    pub(crate) fn legacy_on(ordinal: usize) -> &'static Stream {
        static LEGACY: [OnceLock<Stream>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];
        LEGACY[ordinal].get_or_init(|| {
            Stream::from_parts(
                StreamHandle::legacy(ordinal),
                ordinal,
                StreamKind::LegacyDefault,
                Some((false, 0)),
            )
        })
    }

    /// Records this stream's marker event after the work queued so far, and
    /// returns it.
    fn record_marker(&self) -> Result<EventHandle> {
        self.device_state("an event record")?;
        let mut marker = self.inner.marker.lock().unwrap_or_else(|e| e.into_inner());
        let event = match *marker {
            Some(event) => event,
            None => {
                let event = driver()
                    .event_create(
                        self.inner.ordinal,
                        EventFlags {
                            blocking_sync: false,
                            timing: false,
                            interprocess: false,
                        },
                    )
                    .map_err(|e| self.error(e))?;
                *marker = Some(event);
                event
            }
        };
        driver()
            .event_record(event, self.inner.handle)
            .map_err(|e| self.error(e))?;
        Ok(event)
    }

    /// Runs `callback` on a driver thread once the work queued on the stream
    /// so far has finished; work queued afterwards waits for it. Callbacks run
    /// in stream order. A panic in `callback` is caught, and the next
    /// [`synchronize`](Stream::synchronize) of this stream reports it.
    ///
    /// As CUDA requires, the callback must not use CUDA: runtime calls made
    /// from it return [`Error::CalledFromCallback`]. Dropping buffers, streams
    /// and events inside it is fine: their release is deferred.
    pub fn add_callback(&self, callback: impl FnOnce() + Send + 'static) -> Result<()> {
        self.device_state("Stream::add_callback")?;
        self.refuse_in_capture(
            "add_callback",
            "a callback in a graph would run at every launch of the graph, and a closure queued once runs once; add it after launching the graph",
        )?;
        callback::queue(
            self.inner.handle,
            Box::new(callback),
            &self.inner.callback_panics,
        )
        .map_err(|e| self.error(e))
    }

    pub(crate) fn take_callback_panics(&self) -> Result<()> {
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

    /// Records that `kernel` was launched here (on `device`).
    #[inline]
    pub(crate) fn note_launch(&self, kernel: KernelId, device: &DeviceState) {
        self.inner.last_kernel.note(kernel);
        device.last_kernel.note(kernel);
    }

    /// The kernel most recently launched on this stream.
    pub fn last_kernel(&self) -> Option<&'static str> {
        self.inner.last_kernel.get()
    }

    /// Maps a failed driver call on this stream to an error that names the
    /// stream's last kernel (or its device's) when a kernel fault surfaced,
    /// or the kernel the device's first fault was blamed on.
    pub(crate) fn error(&self, driver: crate::backend::DriverError) -> Error {
        let device = device::state(self.inner.ordinal).ok();
        let last = self
            .inner
            .last_kernel
            .get()
            .or_else(|| device.and_then(|d| d.last_kernel.get()));
        let kernel = match device {
            Some(device) => device.blame(&driver, last),
            None => last,
        };
        Error::from_driver(driver, kernel, Some(self.inner.ordinal), || {
            self.to_string()
        })
    }

    /// Makes the stream the calling thread's current stream on its device
    /// until changed (CuPy's `stream.use()`). Inside a [`Stream::enter`] scope
    /// it lasts until that scope ends. An error if the stream belongs to
    /// another device than the current one.
    pub fn make_current(&self) -> Result<()> {
        current::make_current(self)
    }

    /// Makes the stream current until the returned guard is dropped, which
    /// restores the stream that was current before (CuPy's `with stream:`).
    pub fn enter(&self) -> Result<current::StreamScope<'_>> {
        current::enter(self)
    }

    /// Runs `f` with the stream current, then restores the previous one (also
    /// when `f` panics).
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        let _scope = self.enter()?;
        Ok(f())
    }
}

/// A new stream id.
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The id of the calling thread's per-thread default stream of `ordinal`:
/// every `Stream::per_thread()` handle of it gets the same.
fn per_thread_id(ordinal: usize) -> u64 {
    thread_local! {
        static IDS: [Cell<u64>; MAX_DEVICES] = const { [const { Cell::new(0) }; MAX_DEVICES] };
    }
    IDS.with(|ids| match ids[ordinal].get() {
        0 => {
            let id = next_id();
            ids[ordinal].set(id);
            id
        }
        id => id,
    })
}

/// Where the panics of callbacks queued on the calling thread's per-thread
/// default stream of `ordinal` go: one list for every handle of it.
fn per_thread_panics(ordinal: usize) -> Arc<Mutex<Vec<String>>> {
    thread_local! {
        static PANICS: [OnceLock<Arc<Mutex<Vec<String>>>>; MAX_DEVICES] =
            const { [const { OnceLock::new() }; MAX_DEVICES] };
    }
    PANICS.with(|panics| Arc::clone(panics[ordinal].get_or_init(Default::default)))
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        if self.inner.id == other.inner.id {
            return true;
        }
        // The handle names the device too: the default streams of two
        // devices have the same raw value and are two streams.
        self.inner.handle == other.inner.handle && self.inner.owner == other.inner.owner
    }
}

impl Eq for Stream {}

/// Consistent with `==`: the handle (raw value and device) and, for
/// per-thread streams, the thread.
impl Hash for Stream {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.handle.hash(state);
        self.inner.owner.hash(state);
    }
}

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
        write!(f, "<Stream {} (device {device})>", self.inner.handle.raw)
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        let (handle, ordinal, kind) = (self.handle, self.ordinal, self.kind);
        let marker = self
            .marker
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        // Captures end before their streams can go (they hold them), so a
        // membership left here is only its event.
        let before = self.capture.leave().map(|(_, before)| before);
        if marker.is_none() && before.is_none() && kind != StreamKind::Owned {
            return;
        }
        let release = move || {
            if device::state(ordinal).is_err() {
                // A context lost to a kernel fault took its streams and events along.
                return;
            }
            for event in marker.into_iter().chain(before) {
                let _ = driver().event_destroy(event);
            }
            if kind == StreamKind::Owned {
                // The driver releases the stream once its queued work completes.
                let _ = driver().stream_destroy(handle);
            }
        };
        if in_callback() {
            defer(Box::new(release));
        } else {
            release();
        }
    }
}
