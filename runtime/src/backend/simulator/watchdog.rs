//! The watchdog: notices a simulated block that makes no progress.
//!
//! Every OS thread that runs blocks has a [`Worker`] record. The thread bumps
//! the record's epoch when it starts or ends a block and whenever the block
//! makes progress: a thread finishes, reaches a barrier or warp operation, or
//! changes memory with an atomic operation. A watchdog thread looks at the
//! epochs; when a running block's epoch has not moved for the timeout
//! (`GPU_SIM_TIMEOUT_SECS`), it marks the block stalled. The block's scheduler
//! sees the mark the next time a thread hands control back (a thread spinning
//! on an atomic does so regularly) and fails the launch. A thread in a loop
//! that makes no device call never hands control back: the watchdog then
//! interrupts its OS thread with a signal ([`super::signals`]), which stops
//! the thread where it is.
//!
//! The same thread watches the streams' waits for each other
//! ([`super::fence`]): waits that no work can end any more fail with a
//! report instead of hanging.

use super::signals;
use super::worker::Worker;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// This OS thread's worker record, registered with the watchdog (and its
/// signal handlers) on first use.
pub(crate) fn current_worker() -> Arc<Worker> {
    /// Registers the thread on first use; marks it gone when it ends.
    struct Registration(Arc<Worker>);
    impl Drop for Registration {
        fn drop(&mut self) {
            signals::set_worker(None);
            *self.0.thread.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
    thread_local! {
        static WORKER: Registration = {
            let worker = Arc::new(Worker {
                epoch: AtomicU64::new(1),
                stalled_at: AtomicU64::new(0),
                running: AtomicBool::new(false),
                interrupt_requested: AtomicBool::new(false),
                // SAFETY: `pthread_self` has no preconditions.
                thread: Mutex::new(Some(unsafe { libc::pthread_self() })),
            });
            let mut workers = registry().lock().unwrap_or_else(|e| e.into_inner());
            // Threads that ended leave (the watchdog prunes them too,
            // when it runs).
            workers.retain(|w| w.thread.lock().unwrap_or_else(|e| e.into_inner()).is_some());
            workers.push(Arc::clone(&worker));
            drop(workers);
            signals::set_worker(Some(&worker));
            signals::ensure_alternate_stack();
            Registration(worker)
        };
    }
    WORKER.with(|w| Arc::clone(&w.0))
}

/// Marks the block `worker` runs at `epoch` stalled and interrupts its thread.
fn stall(worker: &Worker, epoch: u64) {
    worker.stalled_at.store(epoch, Relaxed);
    let thread = worker.thread.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(thread) = *thread {
        worker.interrupt_requested.store(true, Relaxed);
        signals::interrupt(thread);
    }
}

fn registry() -> &'static Mutex<Vec<Arc<Worker>>> {
    static WORKERS: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());
    &WORKERS
}

/// Starts the watchdog thread for the streams, as the settings ask
/// (kernel launches start it too, or fail on settings that are wrong).
pub(crate) fn start_for_streams() {
    if let Ok(settings) = super::settings::settings() {
        start(settings.timeout);
    }
}

/// Starts the watchdog thread, once, when the settings ask for one.
pub(crate) fn start(timeout: Option<Duration>) {
    static STARTED: OnceLock<()> = OnceLock::new();
    let Some(timeout) = timeout else { return };
    STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("gpu-sim-watchdog".into())
            .spawn(move || watch(timeout))
            .expect("the simulator can start its watchdog thread");
    });
}

/// What the watchdog last saw of a worker.
struct Seen {
    worker: Arc<Worker>,
    epoch: u64,
    since: Instant,
}

fn watch(timeout: Duration) {
    let interval = (timeout / 8).clamp(Duration::from_millis(10), Duration::from_millis(500));
    let mut seen: Vec<Seen> = Vec::new();
    let mut streams = super::fence::Look::new();
    loop {
        std::thread::sleep(interval);
        streams.check(timeout);
        {
            let mut workers = registry().lock().unwrap_or_else(|e| e.into_inner());
            workers.retain(|w| w.thread.lock().unwrap_or_else(|e| e.into_inner()).is_some());
            seen.retain(|s| workers.iter().any(|w| Arc::ptr_eq(w, &s.worker)));
            for worker in workers.iter() {
                if !seen.iter().any(|s| Arc::ptr_eq(&s.worker, worker)) {
                    seen.push(Seen {
                        worker: Arc::clone(worker),
                        epoch: 0,
                        since: Instant::now(),
                    });
                }
            }
        }
        let now = Instant::now();
        for s in &mut seen {
            let epoch = s.worker.epoch.load(Relaxed);
            if !s.worker.running.load(Relaxed) || epoch != s.epoch {
                s.epoch = epoch;
                s.since = now;
            } else if now.duration_since(s.since) >= timeout {
                // Marked again at every look while it lasts: a signal that
                // found the thread in the runtime's own code did nothing.
                stall(&s.worker, epoch);
            }
        }
    }
}
