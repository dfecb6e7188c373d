//! Which simulated stream a handle names, the default streams, and the calls
//! that act on a stream as a whole (create, destroy, synchronize, query).

use super::super::super::{status, DriverError, StreamHandle, MAX_DEVICES};
use super::super::errors::{capture_error, invalid_value, launch_failed};
use super::super::fault;
use super::super::watchdog;
use super::{host_waiter, membership, Kind, SimStream};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock, Weak};

fn registry() -> &'static Mutex<Vec<Weak<SimStream>>> {
    static STREAMS: OnceLock<Mutex<Vec<Weak<SimStream>>>> = OnceLock::new();
    STREAMS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Adds a new stream to the registry.
pub(super) fn register(stream: &Arc<SimStream>) {
    let mut streams = registry().lock().unwrap_or_else(|e| e.into_inner());
    streams.retain(|s| s.strong_count() > 0);
    streams.push(Arc::downgrade(stream));
    drop(streams);
    watchdog::start_for_streams();
}

/// Every live stream of `device`.
pub(super) fn streams_of(device: usize) -> Vec<Arc<SimStream>> {
    let streams = registry().lock().unwrap_or_else(|e| e.into_inner());
    streams
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|s| s.device == device)
        .collect()
}

/// The calling thread's name, as reports name it.
pub(super) fn thread_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) => format!("`{name}`"),
        None => format!("{:?}", thread.id()),
    }
}

/// Each device's legacy default stream: one, shared by all host threads.
static LEGACY: [OnceLock<Arc<SimStream>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

fn legacy(device: usize) -> &'static Arc<SimStream> {
    LEGACY[device].get_or_init(|| {
        SimStream::new(
            device,
            Kind::Legacy,
            0,
            Some(format!("the legacy default stream of device {device}")),
        )
    })
}

/// The legacy default stream of `device`, if anything used it yet.
pub(super) fn legacy_if_started(device: usize) -> Option<&'static Arc<SimStream>> {
    LEGACY[device].get()
}

/// A per-thread default stream, closed when its host thread ends (its worker
/// holds a reference of its own, so dropping ours alone would not stop it).
struct PerThread(Arc<SimStream>);

impl Drop for PerThread {
    fn drop(&mut self) {
        self.0.close();
    }
}

thread_local! {
    /// The calling thread's per-thread default stream of each device.
    static PER_THREAD: RefCell<Vec<Option<PerThread>>> = const { RefCell::new(Vec::new()) };
}

fn per_thread(device: usize) -> Arc<SimStream> {
    PER_THREAD.with(|streams| {
        let mut streams = streams.borrow_mut();
        if streams.len() <= device {
            streams.resize_with(device + 1, || None);
        }
        let own = streams[device].get_or_insert_with(|| {
            let name = format!(
                "the per-thread default stream of host thread {} (device {device})",
                thread_name()
            );
            PerThread(SimStream::new(device, Kind::Blocking, 0, Some(name)))
        });
        Arc::clone(&own.0)
    })
}

/// Runs `f` with the stream a handle names; the default streams are those of
/// the handle's device.
pub(super) fn with<R>(handle: StreamHandle, f: impl FnOnce(&Arc<SimStream>) -> R) -> R {
    match handle.raw {
        StreamHandle::LEGACY_RAW => f(legacy(handle.device)),
        StreamHandle::PER_THREAD_RAW => f(&per_thread(handle.device)),
        raw => {
            // SAFETY: other handles come from `create`, which leaked one strong
            // count that `destroy` gives back; the handle is live until then.
            // `ManuallyDrop` borrows it as an `Arc` without touching the count.
            let stream =
                std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(raw as *const SimStream) });
            f(&stream)
        }
    }
}

/// An error, as CUDA's `CUDA_ERROR_INVALID_VALUE`, if `handle` names a
/// created stream of another device than the device it says: the CUDA
/// backend makes the handle's device current, and CUDA refuses copies and
/// memsets on a stream of another context than the current one
/// (`cuMemcpyHtoDAsync` on two H200s). Only a handle made wrong (a foreign
/// stream wrapped with the wrong device) gets there. Also the error of a
/// faulted device ([`fault`]).
pub(crate) fn check_device(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    let device = device_of(handle);
    if device != handle.device {
        return Err(invalid_value(
            call,
            format!(
                "the stream belongs to device {device} and the call acts on device {}",
                handle.device
            ),
        ));
    }
    fault::check(device, call)
}

/// The device a stream belongs to.
pub(crate) fn device_of(handle: StreamHandle) -> usize {
    with(handle, |s| s.device)
}

pub(crate) fn create(device: usize, blocking: bool, priority: i32) -> StreamHandle {
    let kind = if blocking {
        Kind::Blocking
    } else {
        Kind::NonBlocking
    };
    StreamHandle {
        raw: Arc::into_raw(SimStream::new(device, kind, priority, None)) as usize,
        device,
    }
}

/// Whether the stream is non-blocking, and its priority.
pub(crate) fn properties(handle: StreamHandle) -> (bool, i32) {
    with(handle, |s| (s.kind == Kind::NonBlocking, s.priority))
}

pub(crate) fn destroy(handle: StreamHandle) {
    if matches!(
        handle.raw,
        StreamHandle::LEGACY_RAW | StreamHandle::PER_THREAD_RAW
    ) {
        return;
    }
    // SAFETY: the count leaked by `create`, given back once.
    let stream = unsafe { Arc::from_raw(handle.raw as *const SimStream) };
    // The worker finishes what is queued, then exits.
    stream.close();
}

/// Waits for the work queued on the stream so far, as `cuStreamSynchronize`;
/// returns the device's fault, or the stream's first error since its last
/// synchronize (which it clears).
pub(crate) fn synchronize(handle: StreamHandle) -> Result<(), DriverError> {
    const CALL: &str = "cuStreamSynchronize";
    refuse_in_capture(handle, CALL)?;
    with(handle, |s| {
        fault::check(s.device, CALL)?;
        if let Err(report) = s.wait_for_queued(CALL) {
            fault::record(s.device, report);
        }
        fault::check(s.device, CALL)?;
        match s.lock().failure.take() {
            Some(message) => Err(launch_failed(CALL, message)),
            None => Ok(()),
        }
    })
}

/// Whether everything queued on the stream has finished, as `cuStreamQuery`.
pub(crate) fn is_idle(handle: StreamHandle) -> Result<bool, DriverError> {
    const CALL: &str = "cuStreamQuery";
    refuse_in_capture(handle, CALL)?;
    with(handle, |s| {
        fault::check(s.device, CALL)?;
        Ok(s.is_idle())
    })
}

/// An error if the stream captures, as CUDA refuses to wait for a capture.
fn refuse_in_capture(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    match membership(handle) {
        Some(m) => Err(capture_error(
            call,
            status::STREAM_CAPTURE_UNSUPPORTED,
            format!("the stream captures (capture {})", m.capture.id),
        )),
        None => Ok(()),
    }
}

/// Waits for the work queued so far on every stream of `device`, as
/// `cuCtxSynchronize` does. Returns the device's fault, or a stream's error
/// since its last synchronize, which is left for that stream's own
/// `synchronize` too.
pub(crate) fn synchronize_device(device: usize) -> Result<(), DriverError> {
    const CALL: &str = "cuCtxSynchronize";
    fault::check(device, CALL)?;
    let streams = streams_of(device);
    // One snapshot of every stream, then the waits.
    let fences: Vec<_> = streams
        .iter()
        .filter_map(|s| s.fence_if_busy("the end of its queued work"))
        .collect();
    for fence in fences {
        if let Err(report) = fence.wait(|| host_waiter(CALL)) {
            fault::record(device, report);
        }
    }
    fault::check(device, CALL)?;
    for stream in &streams {
        if let Some(message) = stream.lock().failure.clone() {
            return Err(launch_failed(CALL, message));
        }
    }
    Ok(())
}
