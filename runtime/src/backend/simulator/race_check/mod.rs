//! The simulator's race detector: compute-sanitizer's racecheck, on the CPU.
//!
//! Off unless `GPU_SIM_RACECHECK=1` ([`super::settings`]) or
//! [`set_race_check`](crate::set_race_check) turns it on. While a launch is
//! checked, device code reports every memory access it makes through
//! `gpu-device`'s types (outputs, shared arrays, atomics; see
//! `gpu_device::race_check` for what it cannot see), and the executor checks
//! each against the accesses other threads of the launch made before:
//!
//! - two accesses *conflict* when they touch a common byte, come from
//!   different threads, and at least one writes (an atomic operation
//!   conflicts with plain reads and writes, not with other atomics);
//! - two accesses of one block are *ordered* when a barrier of the block
//!   (`sync_threads()`, a phase token's `sync()`) lies between them, or, for
//!   two lanes of one warp, when a warp operation both took part in
//!   (a shuffle, a vote, `sync_warp`) does; accesses of different blocks are
//!   never ordered (no barrier spans the grid), nor are those of different
//!   launches checked against each other (a stream orders them);
//! - a conflict that is not ordered is a race. The launch fails with a
//!   report naming the kernel, both threads (block and thread indices), the
//!   address (the shared array, or the device allocation and offset), and
//!   the barrier interval; the first race is reported, with a count of the
//!   others.
//!
//! Shared memory is checked per block, global memory per launch. Of the
//! accesses to one 4-byte word that no later access supersedes, the last
//! four ([`shadow::KEPT`]) are kept: a race with an older one of many concurrent readers can
//! be missed, never invented.

mod shadow;

pub(crate) use shadow::{Shadow, Stamp};

use super::memory::describe_address;
use gpu_device::__private::simulation::AccessKind;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// What [`set_race_check`](crate::set_race_check) chose: unset (the
/// environment decides), off or on.
static CHOSEN: AtomicU64 = AtomicU64::new(UNSET);
const UNSET: u64 = 0;
const OFF: u64 = 1;
const ON: u64 = 2;

/// Turns the simulator's race detector on or off for the launches that
/// start from now on, whatever `GPU_SIM_RACECHECK` says (see the README's
/// simulator section). It finds races between the threads of a launch in
/// kernels that take the `unsafe` escape hatches (`get_unchecked_mut`, raw
/// shared arrays): a launch with a race fails with an error naming the
/// kernel, both threads, the address and the barrier interval. Checked
/// launches run several times slower. On a GPU it changes nothing (use
/// compute-sanitizer's racecheck there).
pub fn set_race_check(on: bool) {
    CHOSEN.store(if on { ON } else { OFF }, Relaxed);
}

/// Whether launches starting now are checked: [`set_race_check`]'s choice,
/// else the environment's.
pub(crate) fn enabled(from_environment: bool) -> bool {
    match CHOSEN.load(Relaxed) {
        ON => true,
        OFF => false,
        _ => from_environment,
    }
}

/// The number of checked launches running: device code reports accesses
/// while it is not 0.
static CHECKED_LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// Device code reports its accesses while this lives (one per checked launch).
pub(crate) struct Recording(());

impl Recording {
    pub(crate) fn start() -> Recording {
        if CHECKED_LAUNCHES.fetch_add(1, Relaxed) == 0 {
            gpu_device::__private::simulation::set_recording(true);
        }
        Recording(())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if CHECKED_LAUNCHES.fetch_sub(1, Relaxed) == 1 {
            gpu_device::__private::simulation::set_recording(false);
        }
    }
}

/// The shape of a launch, to name threads in reports.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
}

impl Shape {
    /// `(blockIdx, threadIdx)` of thread `thread` of block `block` (linear).
    fn coordinates(&self, block: u64, thread: u32) -> ([u64; 3], [u32; 3]) {
        let [gx, gy, _] = self.grid.map(u64::from);
        let [bx, by, _] = self.block;
        (
            [block % gx, block / gx % gy, block / (gx * gy)],
            [thread % bx, thread / bx % by, thread / (bx * by)],
        )
    }

    fn thread_name(&self, stamp: &Stamp) -> String {
        let ([bx, by, bz], [tx, ty, tz]) = self.coordinates(stamp.block, stamp.thread as u32);
        format!("thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz})")
    }
}

/// One checked launch: its global memory's shadow, and what was found.
pub(crate) struct LaunchRaces {
    kernel: &'static str,
    shape: Shape,
    /// Global memory, by word address, in shards locked apart (blocks run on
    /// several OS threads).
    global: Box<[Mutex<HashMap<usize, Shadow>>]>,
    found: AtomicBool,
    first: Mutex<Option<String>>,
    count: AtomicU64,
    _recording: Recording,
}

/// Where an access went, for the report.
pub(crate) enum Place<'a> {
    /// A block's shared array: its name, start and size in bytes.
    Shared {
        array: &'a str,
        start: usize,
        bytes: usize,
    },
    Global,
}

impl LaunchRaces {
    pub(crate) fn new(kernel: &'static str, shape: Shape) -> LaunchRaces {
        LaunchRaces {
            kernel,
            shape,
            global: (0..64).map(|_| Mutex::new(HashMap::new())).collect(),
            found: AtomicBool::new(false),
            first: Mutex::new(None),
            count: AtomicU64::new(0),
            _recording: Recording::start(),
        }
    }

    /// Checks and records an access of global memory.
    pub(crate) fn global_access(
        &self,
        address: usize,
        bytes: usize,
        kind: AccessKind,
        stamp: Stamp,
        clocks: &dyn Fn(u16) -> u32,
    ) {
        for (word, mask) in words(address, bytes) {
            let shard = &self.global[(word >> 6) % self.global.len()];
            let conflict = {
                let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
                shard
                    .entry(word)
                    .or_insert_with(Shadow::new)
                    .access(kind, mask, stamp, clocks)
            };
            if let Some(other) = conflict {
                self.report(address, bytes, kind, &stamp, &other, Place::Global);
                return;
            }
        }
    }

    /// Records the race of `stamp`'s access (`kind`, `bytes` at `address`)
    /// with the earlier access `other`.
    pub(crate) fn report(
        &self,
        address: usize,
        bytes: usize,
        kind: AccessKind,
        stamp: &Stamp,
        other: &(Stamp, AccessKind),
        place: Place<'_>,
    ) {
        self.count.fetch_add(1, Relaxed);
        if self.found.swap(true, Relaxed) {
            return;
        }
        let message = self.describe(address, bytes, kind, stamp, other, place);
        self.first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(message);
    }

    fn describe(
        &self,
        address: usize,
        bytes: usize,
        kind: AccessKind,
        stamp: &Stamp,
        (earlier, earlier_kind): &(Stamp, AccessKind),
        place: Place<'_>,
    ) -> String {
        let verb = |kind: &AccessKind| match kind {
            AccessKind::Read => "read",
            AccessKind::Write => "wrote",
            AccessKind::Atomic => "updated atomically",
        };
        let (space, location) = match place {
            Place::Shared {
                array,
                start,
                bytes: size,
            } => (
                "shared",
                format!(
                    "byte {} of the shared array `{array}` ({size} bytes)",
                    address - start
                ),
            ),
            Place::Global => (
                "global",
                match describe_address(address) {
                    Some((base, size)) => format!(
                        "byte {} of the {size}-byte device allocation at {base:#x}",
                        address - base
                    ),
                    None => "memory the simulator did not allocate".into(),
                },
            ),
        };
        let other_thread = if earlier.block == stamp.block {
            let name = self.shape.thread_name(earlier);
            name.split(" of block").next().unwrap_or(&name).to_string() + " of the same block"
        } else {
            self.shape.thread_name(earlier)
        };
        let why = if earlier.block != stamp.block {
            "threads of different blocks are not ordered within a launch (no barrier spans the grid): give each element one writer, or update it with atomics".to_string()
        } else {
            let when = match stamp.interval {
                0 => "before the block's first barrier".to_string(),
                n => format!("after the block's barrier number {n}"),
            };
            format!(
                "no barrier (sync_threads() or a phase token's sync()) or warp operation of both threads lies between the two accesses (both in barrier interval {}, {when})",
                stamp.interval
            )
        };
        format!(
            "data race on {space} memory in kernel `{}`: {} {} {bytes} bytes at {address:#x} ({location}), which {other_thread} {} before: {why}",
            self.kernel,
            self.shape.thread_name(stamp),
            verb(&kind),
            verb(earlier_kind),
        )
    }

    /// The launch's verdict: the first race found, with the count of others.
    pub(crate) fn verdict(&self) -> Result<(), String> {
        match self.first.lock().unwrap_or_else(|e| e.into_inner()).take() {
            None => Ok(()),
            Some(first) => {
                let more = self.count.load(Relaxed).saturating_sub(1);
                Err(match more {
                    0 => first,
                    n => format!("{first} (and {n} more conflicting accesses in this launch)"),
                })
            }
        }
    }
}

/// The 4-byte words that `bytes` bytes from `address` touch, each with the
/// mask of the bytes touched in it.
pub(crate) fn words(address: usize, bytes: usize) -> impl Iterator<Item = (usize, u8)> {
    let end = address.saturating_add(bytes);
    let first = address & !3;
    (first..end).step_by(4).map(move |word| {
        let from = address.max(word) - word;
        let to = end.min(word + 4) - word;
        let mask = ((1u16 << to) - (1u16 << from)) as u8;
        (word, mask)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_cover_exactly_the_bytes() {
        assert_eq!(words(8, 4).collect::<Vec<_>>(), [(8, 0b1111)]);
        assert_eq!(words(9, 1).collect::<Vec<_>>(), [(8, 0b0010)]);
        assert_eq!(
            words(10, 4).collect::<Vec<_>>(),
            [(8, 0b1100), (12, 0b0011)]
        );
        assert_eq!(
            words(16, 8).collect::<Vec<_>>(),
            [(16, 0b1111), (20, 0b1111)]
        );
        assert_eq!(words(16, 0).count(), 0);
    }
}
