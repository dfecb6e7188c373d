//! The record of one OS thread that runs simulated blocks: what the
//! [watchdog](super::watchdog) reads and the [signal handlers](super::signals)
//! consult.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The watchdog's view of one OS thread that runs simulated blocks. Aligned
/// to its own cache lines: the owning thread writes `epoch` all the time, and
/// two workers sharing a line would slow each other down.
#[repr(align(128))]
pub(crate) struct Worker {
    /// Moved by the owning thread only: at each block start and end, and at
    /// each progress event. Starts at 1, so that 0 in `stalled_at` means none.
    pub(crate) epoch: AtomicU64,
    /// The epoch at which the watchdog found the running block stalled.
    pub(crate) stalled_at: AtomicU64,
    /// Whether the thread runs a block now.
    pub(crate) running: AtomicBool,
    /// Set by the watchdog before it signals the thread; taken by the
    /// thread's signal handler, which so knows the signal is the watchdog's.
    pub(crate) interrupt_requested: AtomicBool,
    /// The OS thread, while it lives; locked while the watchdog signals it, so
    /// that the thread cannot end (and its id be reused) in between.
    pub(crate) thread: Mutex<Option<libc::pthread_t>>,
}

impl Worker {
    /// A block starts on this thread.
    pub(crate) fn start_block(&self) {
        self.progress();
        self.running.store(true, Relaxed);
    }

    /// The block ended.
    pub(crate) fn end_block(&self) {
        self.running.store(false, Relaxed);
        self.progress();
    }

    /// The running block made progress. Only the owning thread calls it.
    #[inline]
    pub(crate) fn progress(&self) {
        self.epoch.store(self.epoch.load(Relaxed) + 1, Relaxed);
    }

    /// Whether the watchdog found the running block stalled (and it made no
    /// progress since).
    #[inline]
    pub(crate) fn stalled(&self) -> bool {
        self.stalled_at.load(Relaxed) == self.epoch.load(Relaxed)
    }
}
