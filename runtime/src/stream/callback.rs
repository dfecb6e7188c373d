//! Stream callbacks: closures a driver thread runs when a stream reaches
//! them, with their panics caught and kept for the stream's next
//! `synchronize`.

use crate::backend::{driver, DriverError, StreamHandle};
use crate::callback::while_in_callback;
use crate::panic_message::panic_message;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// What the driver thread gets: the callback, and where its panic goes.
struct Payload {
    callback: Box<dyn FnOnce() + Send>,
    panics: Arc<Mutex<Vec<String>>>,
}

/// Queues `callback` on `stream`; a panic in it is pushed onto `panics`.
pub(super) fn queue(
    stream: StreamHandle,
    callback: Box<dyn FnOnce() + Send>,
    panics: &Arc<Mutex<Vec<String>>>,
) -> Result<(), DriverError> {
    let payload = Box::new(Payload {
        callback,
        panics: Arc::clone(panics),
    });
    let user_data = Box::into_raw(payload).cast::<c_void>();
    // SAFETY: `run` takes back the box exactly once and touches no CUDA API
    // (runtime calls inside the callback are refused: `while_in_callback`).
    let queued = unsafe { driver().launch_host_function(stream, run, user_data) };
    if queued.is_err() {
        // SAFETY: the driver refused the function, so it will never run it:
        // the box is still ours.
        drop(unsafe { Box::from_raw(user_data.cast::<Payload>()) });
    }
    queued
}

/// Runs a stream callback on the driver's thread, catching panics.
unsafe extern "C" fn run(user_data: *mut c_void) {
    // SAFETY: `user_data` is the box `queue` leaked for this call alone.
    let payload = unsafe { Box::from_raw(user_data.cast::<Payload>()) };
    let Payload { callback, panics } = *payload;
    let outcome = while_in_callback(|| catch_unwind(AssertUnwindSafe(callback)));
    if let Err(panic) = outcome {
        panics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(panic_message(&*panic));
    }
}
