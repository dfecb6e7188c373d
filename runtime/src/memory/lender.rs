//! [`Lender`]: what gives memory another owner lent to a
//! [`DeviceBuffer`](super::DeviceBuffer) back to that owner.

use crate::diagnostics::{report, Level};
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;

/// What gives lent device memory back to its owner: called once, when the
/// [`DeviceBuffer`](super::DeviceBuffer) made from the memory is released and the work it queued
/// has finished (or at once, if the buffer is never made). It runs on the
/// runtime's release thread, where it may call CUDA; a panic in it is
/// caught and reported as a warning (a `tracing` event of target
/// `gpu_runtime`).
pub struct Lender(Mutex<Option<GiveBack>>);

/// (Behind a mutex, so that a buffer holding a lender is `Sync`; it is only
/// ever taken once, by the drop.)
type GiveBack = Box<dyn FnOnce() + Send>;

impl Lender {
    /// A lender that calls `give_back`.
    pub fn new(give_back: impl FnOnce() + Send + 'static) -> Lender {
        Lender(Mutex::new(Some(Box::new(give_back))))
    }

    /// A lender that keeps `owner` (another library's buffer: cudarc's
    /// `CudaSlice`, a tensor) alive until the memory is given back, then
    /// drops it.
    pub fn keep<O: Send + 'static>(owner: O) -> Lender {
        Lender::new(move || drop(owner))
    }

    /// A lender with nothing to give back: the owner keeps the memory
    /// allocated for longer than the buffer and its work, by other means.
    pub fn none() -> Lender {
        Lender(Mutex::new(None))
    }
}

impl Drop for Lender {
    fn drop(&mut self) {
        let give_back = self.0.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(give_back) = give_back {
            // A panic must not end the release thread, which serves every
            // deferred release: it is reported instead.
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(give_back)) {
                report(
                    Level::Warn,
                    &format!(
                        "a Lender panicked while giving lent device memory back: {}",
                        crate::panic_message::panic_message(&*panic)
                    ),
                );
            }
        }
    }
}

impl std::fmt::Debug for Lender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gives_back = self.0.lock().map_or(true, |g| g.is_some());
        f.write_str(if gives_back {
            "Lender(gives back)"
        } else {
            "Lender(none)"
        })
    }
}
