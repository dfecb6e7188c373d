//! Where the ranks of a simulated communicator meet: each collective, every
//! rank posts its contribution and receives everyone's.
//!
//! - [`InProcess`]: the ranks of [`comm_init_all`](super::init_all), all in
//!   this process, meet in memory;
//! - [`Files`]: the ranks of [`comm_init_rank`](super::init_rank), one per
//!   process (or thread), meet through files in a directory named after the
//!   unique id, under [`SIM_RENDEZVOUS_DIR_ENV`] or the system's temporary
//!   directory. Each contribution is written to a temporary name and renamed,
//!   so a reader sees whole files only. A rank deletes its file of collective
//!   `k` during collective `k + 1` (by then every rank has posted `k + 1`, so
//!   every rank has finished `k`: a rank runs its collectives in order); the
//!   directory goes once every rank has closed.
//!
//! A rank that waits longer than the simulator's timeout
//! ([`SIM_TIMEOUT_ENV`](crate::SIM_TIMEOUT_ENV)) fails its collective with an
//! error naming the ranks that did not come.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The environment variable naming the directory where simulated ranks of
/// different processes meet (default: the system's temporary directory). On
/// one host, every process of a communicator must see the same directory.
pub const SIM_RENDEZVOUS_DIR_ENV: &str = "GPU_SIM_RENDEZVOUS_DIR";

/// One contribution as every rank receives it.
pub(super) type Part = Arc<[u8]>;

/// A meeting place of the ranks of one communicator.
pub(super) trait Board: Send + Sync {
    /// Posts `rank`'s contribution to collective `seq` and returns every
    /// rank's, in rank order, once all have posted (an error after `timeout`).
    fn exchange(
        &self,
        seq: u64,
        rank: usize,
        contribution: Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Vec<Part>, String>;

    /// `rank` is done with the communicator.
    fn close(&self, rank: usize);
}

/// The ranks that did not come, for a timeout's message.
fn missing(present: impl Fn(usize) -> bool, ranks: usize) -> String {
    let absent: Vec<String> = (0..ranks)
        .filter(|&r| !present(r))
        .map(|r| r.to_string())
        .collect();
    absent.join(", ")
}

fn timed_out(seq: u64, rank: usize, waited: Duration, absent: &str) -> String {
    format!(
        "rank {rank} waited {:.1} s in collective #{seq} for rank(s) {absent}, which did not take part (every rank must call the same collectives in the same order; {} sets the wait)",
        waited.as_secs_f64(),
        crate::SIM_TIMEOUT_ENV
    )
}

/// The ranks of one process.
pub(super) struct InProcess {
    ranks: usize,
    slots: Mutex<HashMap<u64, Slot>>,
    changed: Condvar,
}

struct Slot {
    parts: Vec<Option<Part>>,
    /// How many ranks took the parts; the slot goes when all have.
    taken: usize,
}

impl InProcess {
    pub(super) fn new(ranks: usize) -> InProcess {
        InProcess {
            ranks,
            slots: Mutex::new(HashMap::new()),
            changed: Condvar::new(),
        }
    }
}

impl Board for InProcess {
    fn exchange(
        &self,
        seq: u64,
        rank: usize,
        contribution: Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Vec<Part>, String> {
        let start = Instant::now();
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .entry(seq)
            .or_insert_with(|| Slot {
                parts: vec![None; self.ranks],
                taken: 0,
            })
            .parts[rank] = Some(contribution.into());
        self.changed.notify_all();
        loop {
            let slot = slots
                .get_mut(&seq)
                .expect("removed only once every rank took it");
            if slot.parts.iter().all(Option::is_some) {
                let parts: Vec<Part> = slot.parts.iter().flatten().cloned().collect();
                slot.taken += 1;
                if slot.taken == self.ranks {
                    slots.remove(&seq);
                }
                return Ok(parts);
            }
            let waited = start.elapsed();
            match timeout {
                Some(limit) if waited >= limit => {
                    let absent = missing(|r| slot.parts[r].is_some(), self.ranks);
                    // This rank leaves: the others cannot complete this collective either.
                    slot.parts[rank] = None;
                    return Err(timed_out(seq, rank, waited, &absent));
                }
                Some(limit) => {
                    slots = self
                        .changed
                        .wait_timeout(slots, limit - waited)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => slots = self.changed.wait(slots).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    fn close(&self, _rank: usize) {}
}

/// The ranks of several processes, meeting in a directory.
pub(super) struct Files {
    dir: PathBuf,
    ranks: usize,
}

/// Polls `ready` until it holds or `timeout` passes, sleeping a little longer each time.
fn poll(timeout: Option<Duration>, mut ready: impl FnMut() -> bool) -> Result<(), Duration> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(100);
    while !ready() {
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            return Err(start.elapsed());
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
    Ok(())
}

/// Writes `data` to `path` whole: to a temporary name first, then renamed.
fn write_whole(path: &Path, data: &[u8]) -> Result<(), String> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, data)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| format!("could not write {}: {e}", path.display()))
}

impl Files {
    /// Joins the meeting of `ranks` ranks in `dir` as `rank` on simulated
    /// `device`; returns once every rank has joined. As NCCL, refuses two
    /// ranks on one device, and ranks that disagree on the number of ranks.
    pub(super) fn join(
        dir: PathBuf,
        ranks: usize,
        rank: usize,
        device: usize,
        timeout: Option<Duration>,
    ) -> Result<Files, String> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("could not make the directory {}: {e}", dir.display()))?;
        let own = dir.join(format!("join-{rank}"));
        if own.exists() {
            return Err(format!(
                "rank {rank} of this unique id has joined already ({} exists): each rank joins once",
                own.display()
            ));
        }
        write_whole(&own, format!("{ranks} {device}").as_bytes())?;
        let files = Files { dir, ranks };
        poll(timeout, || {
            (0..ranks).all(|r| files.dir.join(format!("join-{r}")).exists())
        })
        .map_err(|waited| {
            let absent = missing(|r| files.dir.join(format!("join-{r}")).exists(), ranks);
            format!(
                "rank {rank} waited {:.1} s for rank(s) {absent} to join the communicator in {}",
                waited.as_secs_f64(),
                files.dir.display()
            )
        })?;
        for r in 0..ranks {
            let said =
                std::fs::read_to_string(files.dir.join(format!("join-{r}"))).unwrap_or_default();
            let mut said = said.split_whitespace().map(str::parse::<usize>);
            let (their_ranks, their_device) = match (said.next(), said.next()) {
                (Some(Ok(n)), Some(Ok(d))) => (n, d),
                _ => return Err(format!("rank {r}'s join file cannot be read")),
            };
            if their_ranks != ranks {
                return Err(format!(
                    "rank {r} joined a communicator of {their_ranks} ranks, rank {rank} one of {ranks}: every rank must give the same number of ranks"
                ));
            }
            if r != rank && their_device == device {
                return Err(format!(
                    "ranks {r} and {rank} are both on device {device}: each rank needs a device of its own (NCCL refuses this too)"
                ));
            }
        }
        Ok(files)
    }

    fn part(&self, seq: u64, rank: usize) -> PathBuf {
        self.dir.join(format!("op-{seq}-{rank}"))
    }
}

impl Board for Files {
    fn exchange(
        &self,
        seq: u64,
        rank: usize,
        contribution: Vec<u8>,
        timeout: Option<Duration>,
    ) -> Result<Vec<Part>, String> {
        write_whole(&self.part(seq, rank), &contribution)?;
        drop(contribution);
        poll(timeout, || {
            (0..self.ranks).all(|r| self.part(seq, r).exists())
        })
        .map_err(|waited| {
            let absent = missing(|r| self.part(seq, r).exists(), self.ranks);
            timed_out(seq, rank, waited, &absent)
        })?;
        let parts = (0..self.ranks)
            .map(|r| {
                std::fs::read(self.part(seq, r))
                    .map(Part::from)
                    .map_err(|e| {
                        format!("could not read rank {r}'s part of collective #{seq}: {e}")
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if seq > 0 {
            // Every rank has posted `seq`, so every rank is done with `seq - 1`.
            let _ = std::fs::remove_file(self.part(seq - 1, rank));
        }
        Ok(parts)
    }

    fn close(&self, rank: usize) {
        let _ = write_whole(&self.dir.join(format!("closed-{rank}")), b"");
        if (0..self.ranks).all(|r| self.dir.join(format!("closed-{r}")).exists()) {
            // The last rank to close: nobody reads these files any more.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
