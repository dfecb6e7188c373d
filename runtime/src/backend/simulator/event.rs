//! Simulated events: completion and a timestamp, set in stream order.

use super::super::{status, DriverError, EventHandle, StreamHandle};
use super::capture::Capture;
use super::errors::{capture_error, invalid_handle};
use super::stream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

pub(crate) struct SimEvent {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// How many times the event was recorded.
    recorded: u64,
    /// The highest record that its stream has reached.
    completed: u64,
    /// When the stream reached it.
    time: Option<Instant>,
    /// Where the latest record was captured: the capture and the recording
    /// stream's tail then (`None` for a record outside captures).
    captured: Option<(Arc<Capture>, Vec<usize>)>,
}

impl SimEvent {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until record number `generation` has completed.
    fn wait_for(&self, generation: u64) {
        let mut state = self.lock();
        while state.completed < generation {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
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
            changed: Condvar::new(),
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
    let generation = {
        let mut state = event.lock();
        state.captured = None;
        state.recorded += 1;
        state.recorded
    };
    stream::enqueue_mark(
        stream_handle,
        Box::new(move || {
            let mut state = event.lock();
            if state.completed < generation {
                state.completed = generation;
                state.time = Some(Instant::now());
            }
            event.changed.notify_all();
        }),
    )
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
    with(handle, |e| {
        let state = e.lock();
        refuse_captured(&state, "cuEventQuery")?;
        Ok(state.completed >= state.recorded)
    })
}

pub(crate) fn synchronize(handle: EventHandle) -> Result<(), DriverError> {
    with(handle, |e| {
        let target = {
            let state = e.lock();
            refuse_captured(&state, "cuEventSynchronize")?;
            state.recorded
        };
        e.wait_for(target);
        Ok(())
    })
}

/// Makes `stream_handle` wait for the event's latest record (as of this
/// call). A record made in a capture makes the stream join that capture; a
/// capturing stream cannot wait for a record made outside its capture.
pub(crate) fn stream_wait(
    stream_handle: StreamHandle,
    handle: EventHandle,
) -> Result<(), DriverError> {
    let event = with(handle, Arc::clone);
    let (target, captured) = {
        let state = event.lock();
        (state.recorded, state.captured.clone())
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
        (None, None) => stream::enqueue(
            stream_handle,
            Box::new(move || {
                event.wait_for(target);
                Ok(())
            }),
        ),
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
    for h in [start, end] {
        with(h, |e| refuse_captured(&e.lock(), "cuEventElapsedTime"))?;
    }
    let time = |h| with(h, |e| e.lock().time);
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
