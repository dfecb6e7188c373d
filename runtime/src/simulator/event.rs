//! Simulated events: completion and a timestamp, set in stream order.

use super::stream;
use crate::driver::{self, CUevent, CUstream, Status};
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

fn with<R>(handle: CUevent, f: impl FnOnce(&Arc<SimEvent>) -> R) -> R {
    // SAFETY: handles come from `create`, which leaked one strong count that
    // `destroy` gives back; borrowed here without touching the count.
    let event = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle as *const SimEvent) });
    f(&event)
}

pub(crate) fn create() -> CUevent {
    Arc::into_raw(Arc::new(SimEvent {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    })) as CUevent
}

pub(crate) fn destroy(handle: CUevent) -> Status {
    // SAFETY: the count leaked by `create`, given back once; queued records
    // hold their own counts.
    drop(unsafe { Arc::from_raw(handle as *const SimEvent) });
    driver::SUCCESS
}

pub(crate) fn record(handle: CUevent, stream_handle: CUstream) -> Status {
    let event = with(handle, Arc::clone);
    let generation = {
        let mut state = event.lock();
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

pub(crate) fn query(handle: CUevent) -> Status {
    with(handle, |e| {
        let state = e.lock();
        if state.completed >= state.recorded {
            driver::SUCCESS
        } else {
            driver::ERROR_NOT_READY
        }
    })
}

pub(crate) fn synchronize(handle: CUevent) -> Status {
    with(handle, |e| {
        let target = e.lock().recorded;
        e.wait_for(target);
    });
    driver::SUCCESS
}

/// Makes `stream_handle` wait for the event's latest record (as of this call).
pub(crate) fn stream_wait(stream_handle: CUstream, handle: CUevent) -> Status {
    let event = with(handle, Arc::clone);
    let target = event.lock().recorded;
    stream::enqueue(
        stream_handle,
        Box::new(move || {
            event.wait_for(target);
            Ok(())
        }),
    )
}

pub(crate) fn elapsed_ms(start: CUevent, end: CUevent) -> (Status, f32) {
    let time = |h| with(h, |e| e.lock().time);
    match (time(start), time(end)) {
        (Some(a), Some(b)) => {
            let ms = if b >= a {
                (b - a).as_secs_f64() * 1e3
            } else {
                -((a - b).as_secs_f64() * 1e3)
            };
            (driver::SUCCESS, ms as f32)
        }
        _ => (driver::ERROR_NOT_READY, 0.0),
    }
}
