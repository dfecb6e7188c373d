//! The calls on a stream, by handle: create, destroy, synchronize, query,
//! and queue work.

use super::super::super::{status, DriverError, GraphNodeKind, StreamHandle};
use super::super::capture::Work;
use super::super::errors::{capture_error, invalid_value, launch_failed};
use super::super::fault;
use super::super::fence::Fence;
use super::capture::membership;
use super::lookup::with;
use super::queue::{host_waiter, streams_of, Item, Kind, Operation, SimStream};
use std::sync::Arc;

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
    refuse_implicit(handle, CALL)?;
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
    refuse_implicit(handle, CALL)?;
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

/// On the legacy default stream `handle` names: an error, as CUDA's
/// `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`, if a blocking stream of its device
/// captures (see the module documentation).
pub(crate) fn refuse_implicit(handle: StreamHandle, call: &'static str) -> Result<(), DriverError> {
    with(handle, |s| s.refuse_implicit(call))
}

/// What tells the stream `handle` names apart from every other stream alive
/// (the per-thread default streams of two threads too): its address.
pub(crate) fn identity(handle: StreamHandle) -> usize {
    with(handle, |s| Arc::as_ptr(s) as usize)
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

/// Queues a marker on the stream `handle` names, after everything queued so
/// far; returns a fence reached right after the marker is applied.
pub(crate) fn enqueue_mark(
    handle: StreamHandle,
    what: &'static str,
    mark: Box<dyn FnOnce() + Send>,
) -> Fence {
    with(handle, |s| {
        let fence = Fence::new(s.name(), what);
        let signal = fence.clone();
        s.push([Item::Mark(Box::new(move || {
            mark();
            signal.signal();
        }))]);
        fence
    })
}

/// Queues a wait for `fence` on the stream `handle` names; an error on a
/// capturing stream.
pub(crate) fn enqueue_wait(handle: StreamHandle, fence: Fence) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Wait(fence)))
}

/// Queues `operation` on the stream `handle` names, after a wait for
/// `after` (a point queued before); an error on a capturing stream.
pub(crate) fn enqueue_after(
    handle: StreamHandle,
    after: Option<Fence>,
    operation: Operation,
) -> Result<(), DriverError> {
    with(handle, |s| {
        s.refuse_implicit("the simulator")?;
        s.refuse_capture()?;
        s.push(
            after
                .map(Item::Wait)
                .into_iter()
                .chain([Item::Run(operation)]),
        );
        Ok(())
    })
}

/// The name of the stream `handle` names, as reports give it.
pub(crate) fn name(handle: StreamHandle) -> Arc<str> {
    with(handle, |s| s.name())
}

/// Queues `operation` on the stream `handle` names; an error on a capturing
/// stream.
pub(crate) fn enqueue(handle: StreamHandle, operation: Operation) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Run(operation)))
}

/// Queues `report` on the stream `handle` names, called with whether work on
/// the stream failed before it (its device faulted, or an error since its
/// last synchronize); an error on a capturing stream.
pub(crate) fn enqueue_reporting(
    handle: StreamHandle,
    report: Box<dyn FnOnce(bool) + Send>,
) -> Result<(), DriverError> {
    with(handle, |s| s.enqueue(Item::Report(report)))
}

/// Queues `work` on the stream `handle` names, or captures it as a node
/// (`label`: a kernel's name).
pub(crate) fn submit(
    handle: StreamHandle,
    kind: GraphNodeKind,
    label: &'static str,
    work: Work,
) -> Result<(), DriverError> {
    with(handle, |s| s.submit(kind, label, work))
}
