//! Releases of driver resources that cannot run where they were asked for.
//!
//! Inside a stream callback CUDA forbids CUDA calls, yet a callback may drop
//! the last handle of a buffer, a stream or an event. Such a release is
//! handed to one background thread, which runs it at once: nothing leaks, and
//! the callback does not wait.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

/// How many deferred releases have run, for tests that check nothing leaks.
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// The number of deferred releases that have run so far.
pub fn completed() -> u64 {
    COMPLETED.load(Ordering::SeqCst)
}

type Release = Box<dyn FnOnce() + Send>;

/// Runs `release` on the release thread, soon.
pub(crate) fn defer(release: Release) {
    static QUEUE: OnceLock<Mutex<Sender<Release>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (sender, receiver) = channel::<Release>();
        std::thread::Builder::new()
            .name("gpu-deferred-release".into())
            .spawn(move || {
                for release in receiver {
                    release();
                    COMPLETED.fetch_add(1, Ordering::SeqCst);
                }
            })
            .expect("the runtime can start its release thread");
        Mutex::new(sender)
    });
    // The receiver lives as long as the process, so sending cannot fail.
    let _ = queue
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(release);
}
