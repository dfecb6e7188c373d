//! Fences: points in a stream's queue that other work waits for, and the
//! watchdog's view of those waits.
//!
//! A fence is reached when its stream has done everything queued before it
//! (an event record, the point another stream's implicit synchronisation
//! snapshots, the end of a graph run). Every wait on one, by a stream worker
//! or by a host thread, is registered while it lasts, so that the
//! [watchdog](super::watchdog) can tell a deadlock from slow work: when there
//! are waits, no stream has run anything for the timeout
//! (`GPU_SIM_TIMEOUT_SECS`), and none is running an operation now, the
//! waits can never end. The watchdog then fails them, with a report naming
//! each waiter and what it waits for, instead of letting the process hang.
//!
//! Work only ever waits for points queued before it (see
//! [`stream`](super::stream)), so the simulator has no deadlock by design;
//! the watchdog is the backstop that makes a bug there an error.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// A point in one stream that work in another stream, or a host thread,
/// can wait for.
#[derive(Clone)]
pub(crate) struct Fence(Arc<Point>);

struct Point {
    state: Mutex<Reached>,
    changed: Condvar,
    /// The stream the point is in, for reports.
    stream: Arc<str>,
    /// What the point is, for reports.
    what: &'static str,
}

#[derive(Default)]
enum Reached {
    #[default]
    Not,
    Yes,
    /// The watchdog gave up on the waits for it, with this report.
    Abandoned(String),
}

impl Fence {
    /// A fence not reached yet, in `stream` (its name), marking `what`.
    pub(crate) fn new(stream: Arc<str>, what: &'static str) -> Fence {
        Fence(Arc::new(Point {
            state: Mutex::new(Reached::Not),
            changed: Condvar::new(),
            stream,
            what,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Reached> {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stream has reached the point.
    pub(crate) fn signal(&self) {
        let mut state = self.lock();
        if matches!(*state, Reached::Not) {
            *state = Reached::Yes;
        }
        drop(state);
        self.0.changed.notify_all();
        note_progress();
    }

    /// Whether the stream has reached the point.
    pub(crate) fn is_reached(&self) -> bool {
        !matches!(*self.lock(), Reached::Not)
    }

    /// Waits until the stream reaches the point. `waiter` names who waits,
    /// for the watchdog's report; an error is that report, when the
    /// watchdog found the wait could never end.
    pub(crate) fn wait(&self, waiter: impl FnOnce() -> String) -> Result<(), String> {
        let mut state = self.lock();
        if matches!(*state, Reached::Not) {
            let registration = register(waiter(), self);
            while matches!(*state, Reached::Not) {
                state = self
                    .0
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
            drop(registration);
        }
        match &*state {
            Reached::Abandoned(report) => Err(report.clone()),
            _ => Ok(()),
        }
    }

    /// Gives up on the waits for this point: each returns `report`.
    pub(super) fn abandon(&self, report: &str) {
        let mut state = self.lock();
        if matches!(*state, Reached::Not) {
            *state = Reached::Abandoned(report.to_string());
        }
        drop(state);
        self.0.changed.notify_all();
    }

    fn describe(&self) -> String {
        format!("{} to reach {}", self.0.stream, self.0.what)
    }
}

/// One wait in progress.
struct Waiting {
    waiter: String,
    fence: Fence,
    since: Instant,
}

/// Every wait in progress.
fn waits() -> std::sync::MutexGuard<'static, Vec<Weak<Waiting>>> {
    static WAITS: Mutex<Vec<Weak<Waiting>>> = Mutex::new(Vec::new());
    WAITS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a wait for the watchdog while the value lives.
fn register(waiter: String, fence: &Fence) -> Arc<Waiting> {
    let waiting = Arc::new(Waiting {
        waiter,
        fence: fence.clone(),
        since: Instant::now(),
    });
    let mut all = waits();
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(&waiting));
    waiting
}

/// Bumped whenever stream work completes anywhere.
static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// Stream operations running now (kernels, copies, callbacks: not waits).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Stream work completed: an operation, a marker, a wait.
pub(crate) fn note_progress() {
    PROGRESS.fetch_add(1, Ordering::Relaxed);
}

/// Counts an operation as running while the value lives: the streams are
/// not stuck while one runs, however long it takes (a kernel has the block
/// watchdog, a collective its own timeout).
pub(crate) struct Running(());

impl Running {
    pub(crate) fn start() -> Running {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
        note_progress();
    }
}

/// What the watchdog saw at its last look.
pub(crate) struct Look {
    progress: u64,
    since: Instant,
}

impl Look {
    pub(crate) fn new() -> Look {
        Look {
            progress: PROGRESS.load(Ordering::Relaxed),
            since: Instant::now(),
        }
    }

    /// One look of the watchdog: fails every wait if the streams have been
    /// stuck for `timeout`.
    pub(crate) fn check(&mut self, timeout: Duration) {
        let live = live_waits();
        let progress = PROGRESS.load(Ordering::Relaxed);
        let running = RUNNING.load(Ordering::Relaxed);
        if let Some(report) = self.stalled(Instant::now(), progress, running, &live, timeout) {
            for waiting in &live {
                waiting.fence.abandon(&report);
            }
        }
    }

    /// The report of a stall, if the streams are stuck: there are waits,
    /// and for `timeout` no work completed (`progress` stayed the same) and
    /// none ran (`running` stayed 0).
    fn stalled(
        &mut self,
        now: Instant,
        progress: u64,
        running: usize,
        live: &[Arc<Waiting>],
        timeout: Duration,
    ) -> Option<String> {
        if progress != self.progress || running > 0 || live.is_empty() {
            self.progress = progress;
            self.since = now;
            return None;
        }
        if now.duration_since(self.since) < timeout {
            return None;
        }
        // Reported once per stall; the waits it fails are progress.
        self.since = now;
        Some(stall_report(live, timeout, now))
    }
}

/// Every wait in progress now.
fn live_waits() -> Vec<Arc<Waiting>> {
    let mut all = waits();
    all.retain(|w| w.strong_count() > 0);
    all.iter().filter_map(Weak::upgrade).collect()
}

/// What the watchdog would do now to the waits that `involved` picks (by
/// waiter and what it waits for), whatever other waits the process has: the
/// report, and the fences it would fail.
#[cfg(test)]
pub(super) fn stall_among(involved: impl Fn(&str, &str) -> bool) -> (String, Vec<Fence>) {
    let live: Vec<_> = live_waits()
        .into_iter()
        .filter(|w| involved(&w.waiter, &w.fence.describe()))
        .collect();
    let report = stall_report(&live, Duration::from_secs(2), Instant::now());
    (report, live.iter().map(|w| w.fence.clone()).collect())
}

/// The report of stuck waits: each waiter and what it waits for.
fn stall_report(live: &[Arc<Waiting>], timeout: Duration, now: Instant) -> String {
    let mut report = format!(
        "the simulator's streams made no progress for {:.1} s (GPU_SIM_TIMEOUT_SECS) and every wait below would last forever:",
        timeout.as_secs_f64()
    );
    for waiting in live {
        report.push_str(&format!(
            " {} waits for {} (for {:.1} s);",
            waiting.waiter,
            waiting.fence.describe(),
            now.duration_since(waiting.since).as_secs_f64()
        ));
    }
    report.pop();
    report.push_str(". This is a bug of the simulator: please report it with this message");
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_for_a_reached_point_returns_at_once() {
        let fence = Fence::new("stream a".into(), "an event record");
        fence.signal();
        assert!(fence.is_reached());
        assert_eq!(fence.wait(|| unreachable!("not registered")), Ok(()));
    }

    #[test]
    fn a_wait_is_ended_by_the_signal_from_another_thread() {
        let fence = Fence::new("stream a".into(), "an event record");
        let signal = fence.clone();
        let signaller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            signal.signal();
        });
        assert_eq!(fence.wait(|| "stream b".into()), Ok(()));
        signaller.join().unwrap();
    }

    #[test]
    fn the_report_names_each_waiter_and_what_it_waits_for() {
        let a = Fence::new("stream a".into(), "its point at an event record");
        let now = Instant::now();
        let waiting = Arc::new(Waiting {
            waiter: "stream b".into(),
            fence: a,
            since: now,
        });
        let report = stall_report(&[waiting], Duration::from_secs(2), now);
        assert!(
            report.starts_with(
                "the simulator's streams made no progress for 2.0 s (GPU_SIM_TIMEOUT_SECS)"
            ),
            "{report}"
        );
        assert!(
            report.contains(
                "stream b waits for stream a to reach its point at an event record (for 0.0 s)."
            ),
            "{report}"
        );
    }

    #[test]
    fn a_stall_is_waits_without_progress_or_running_work_for_the_timeout() {
        let t0 = Instant::now();
        let second = Duration::from_secs(1);
        let waiting = vec![Arc::new(Waiting {
            waiter: "stream b".into(),
            fence: Fence::new("stream a".into(), "an event record"),
            since: t0,
        })];
        let mut look = Look {
            progress: 7,
            since: t0,
        };
        // No waits: never a stall.
        assert_eq!(look.stalled(t0 + 3 * second, 7, 0, &[], 2 * second), None);
        // Waits, no progress, nothing running: a stall once the timeout passed.
        assert_eq!(
            look.stalled(t0 + 4 * second, 7, 0, &waiting, 2 * second),
            None
        );
        let report = look.stalled(t0 + 6 * second, 7, 0, &waiting, 2 * second);
        assert!(report.is_some_and(|r| r.contains("stream b waits for stream a")));
        // Reported once: the next stall needs another timeout.
        assert_eq!(
            look.stalled(t0 + 7 * second, 7, 0, &waiting, 2 * second),
            None
        );
        // Progress, or work running (a long kernel, a callback), restarts the clock.
        assert_eq!(
            look.stalled(t0 + 9 * second, 8, 0, &waiting, 2 * second),
            None
        );
        assert_eq!(
            look.stalled(t0 + 10 * second, 8, 1, &waiting, 2 * second),
            None
        );
        assert_eq!(
            look.stalled(t0 + 11 * second, 8, 1, &waiting, 2 * second),
            None
        );
        assert_eq!(
            look.stalled(t0 + 12 * second, 8, 0, &waiting, 2 * second),
            None
        );
        assert!(look
            .stalled(t0 + 14 * second, 8, 0, &waiting, 2 * second)
            .is_some());
    }

    #[test]
    fn an_abandoned_wait_returns_the_report() {
        let fence = Fence::new("stream a".into(), "an event record");
        let waiting = fence.clone();
        let waiter = std::thread::spawn(move || waiting.wait(|| "stream b".into()));
        std::thread::sleep(Duration::from_millis(20));
        fence.abandon("stuck");
        assert_eq!(waiter.join().unwrap(), Err("stuck".to_string()));
        // A later signal does not turn the abandoned wait into a success.
        fence.signal();
        assert_eq!(fence.wait(|| "stream c".into()), Err("stuck".to_string()));
    }
}
