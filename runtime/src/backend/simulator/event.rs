//! Simulated events: completion and a timestamp, set in stream order.

use super::super::{status, DriverError, EventHandle, StreamHandle};
use super::capture::Capture;
use super::errors::{capture_error, invalid_handle};
use super::fault;
use super::fence::Fence;
use super::stream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

pub(crate) struct SimEvent {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The latest record outside captures: the point in its stream, and
    /// when the stream reached it.
    latest: Option<Record>,
    /// Where the latest record was captured: the capture and the recording
    /// stream's tail then (`None` for a record outside captures).
    captured: Option<(Arc<Capture>, Vec<usize>)>,
}

/// One record of an event.
#[derive(Clone)]
struct Record {
    reached: Fence,
    time: Arc<OnceLock<Instant>>,
}

impl SimEvent {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn with<R>(handle: EventHandle, f: impl FnOnce(&Arc<SimEvent>) -> R) -> R {
    // SAFETY: handles come from `create`, which leaked one strong count that
    // `destroy` gives back; borrowed here without touching the count.
    let event =
        std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle.raw as *const SimEvent) });
    f(&event)
}

/// A new event of `device`.
pub(crate) fn create(device: usize) -> EventHandle {
    EventHandle {
        raw: Arc::into_raw(Arc::new(SimEvent {
            state: Mutex::new(State::default()),
        })) as usize,
        device,
    }
}

pub(crate) fn destroy(handle: EventHandle) {
    // SAFETY: the count leaked by `create`, given back once; queued records
    // hold their own counts.
    drop(unsafe { Arc::from_raw(handle.raw as *const SimEvent) });
}

/// Records the event on the stream, which must belong to the event's device
/// (CUDA's `CUDA_ERROR_INVALID_HANDLE` otherwise).
pub(crate) fn record(handle: EventHandle, stream_handle: StreamHandle) -> Result<(), DriverError> {
    let device = stream::device_of(stream_handle);
    fault::check(device, "cuEventRecord")?;
    if device != handle.device {
        return Err(invalid_handle(
            "cuEventRecord",
            format!(
                "the event belongs to device {} and the stream to device {device}",
                handle.device
            ),
        ));
    }
    let event = with(handle, Arc::clone);
    if let Some(membership) = stream::membership(stream_handle) {
        // A point of the capture, which streams waiting for it join.
        event.lock().captured = Some((membership.capture, membership.tail));
        return Ok(());
    }
    // Before the record counts: a refused record leaves the event as it was.
    stream::refuse_implicit(stream_handle, "cuEventRecord")?;
    let time = Arc::new(OnceLock::new());
    let stamp = Arc::clone(&time);
    // The record is in its stream's queue before the event names it, so a
    // wait for the event's latest record is a wait for a point queued
    // before it (see `stream`'s "No deadlock").
    let reached = stream::enqueue_mark(
        stream_handle,
        "a record of an event",
        Box::new(move || {
            let _ = stamp.set(Instant::now());
        }),
    );
    let mut state = event.lock();
    state.captured = None;
    state.latest = Some(Record { reached, time });
    Ok(())
}

/// An error if the event's latest record was captured: it never runs.
fn refuse_captured(state: &State, call: &'static str) -> Result<(), DriverError> {
    match &state.captured {
        Some((capture, _)) => Err(capture_error(
            call,
            status::STREAM_CAPTURE_UNSUPPORTED,
            format!("the event was last recorded in capture {}", capture.id),
        )),
        None => Ok(()),
    }
}

pub(crate) fn is_done(handle: EventHandle) -> Result<bool, DriverError> {
    fault::check(handle.device, "cuEventQuery")?;
    with(handle, |e| {
        let state = e.lock();
        refuse_captured(&state, "cuEventQuery")?;
        Ok(state.latest.as_ref().is_none_or(|r| r.reached.is_reached()))
    })
}

pub(crate) fn synchronize(handle: EventHandle) -> Result<(), DriverError> {
    const CALL: &str = "cuEventSynchronize";
    fault::check(handle.device, CALL)?;
    let latest = with(handle, |e| {
        let state = e.lock();
        refuse_captured(&state, CALL)?;
        Ok(state.latest.clone())
    })?;
    if let Some(record) = latest {
        if let Err(report) = record.reached.wait(|| stream::host_waiter(CALL)) {
            fault::record(handle.device, report);
        }
    }
    fault::check(handle.device, CALL)
}

/// Makes `stream_handle` wait for the event's latest record (as of this
/// call). A record made in a capture makes the stream join that capture; a
/// capturing stream cannot wait for a record made outside its capture.
pub(crate) fn stream_wait(
    stream_handle: StreamHandle,
    handle: EventHandle,
) -> Result<(), DriverError> {
    fault::check(stream::device_of(stream_handle), "cuStreamWaitEvent")?;
    let event = with(handle, Arc::clone);
    let (latest, captured) = {
        let state = event.lock();
        (state.latest.clone(), state.captured.clone())
    };
    match (captured, stream::membership(stream_handle)) {
        (Some((capture, _)), _) if capture.ended.load(Ordering::Acquire) => Err(capture_error(
            "cuStreamWaitEvent",
            status::STREAM_CAPTURE_UNSUPPORTED,
            format!(
                "the event was last recorded in capture {}, which has ended",
                capture.id
            ),
        )),
        (Some((capture, tail)), _) => stream::join(stream_handle, &capture, &tail),
        (None, Some(membership)) => Err(capture_error(
            "cuStreamWaitEvent",
            status::STREAM_CAPTURE_ISOLATION,
            format!(
                "a stream of capture {} cannot wait for an event recorded outside it",
                membership.capture.id
            ),
        )),
        // Never recorded: nothing to wait for.
        (None, None) => match latest {
            Some(record) => stream::enqueue_wait(stream_handle, record.reached),
            None => Ok(()),
        },
    }
}

pub(crate) fn elapsed_ms(start: EventHandle, end: EventHandle) -> Result<f32, DriverError> {
    if start.device != end.device {
        return Err(invalid_handle(
            "cuEventElapsedTime",
            format!(
                "the events belong to devices {} and {}, which have no common clock",
                start.device, end.device
            ),
        ));
    }
    fault::check(start.device, "cuEventElapsedTime")?;
    for h in [start, end] {
        with(h, |e| refuse_captured(&e.lock(), "cuEventElapsedTime"))?;
    }
    let time = |h| {
        with(h, |e| {
            e.lock().latest.as_ref().and_then(|r| r.time.get().copied())
        })
    };
    match (time(start), time(end)) {
        (Some(a), Some(b)) => {
            let ms = if b >= a {
                (b - a).as_secs_f64() * 1e3
            } else {
                -((a - b).as_secs_f64() * 1e3)
            };
            Ok(ms as f32)
        }
        _ => Err(DriverError {
            call: "cuEventElapsedTime",
            code: status::NOT_READY,
            name: "CUDA_ERROR_NOT_READY".into(),
            description: "an event has not completed yet".into(),
        }),
    }
}
