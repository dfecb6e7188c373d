//! The simulator's `mbarrier`: phases, pending arrivals and the
//! transaction count as on the GPU, in a record of its own per barrier (in
//! the block's shared memory, [`WORDS`] words each), so that a mistake is a
//! report naming the barrier rather than a hang:
//!
//! - a wait that every thread of the block is in, on a phase that nothing
//!   can complete any more (the simulator's copies land when issued, so
//!   only the block's threads could), fails the launch at once;
//! - more bytes completing than a phase expected (a wrong `expect_tx`) fails
//!   it too, as does a transaction count outside PTX's range.
//!
//! A block's threads run on one OS thread, so the fields are plain atomics
//! read and written without ordering.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering::Relaxed};

// The simulated bulk tensor copies, which complete on these barriers.
#[path = "host_tma_copy.rs"]
mod copy;
pub(crate) use copy::{
    bulk_commit_group, bulk_wait_group, bulk_wait_group_read, copy_2d, copy_nd, store_nd,
};

/// Words (`u64`) of shared memory per simulated barrier.
pub(crate) const WORDS: usize = 4;

/// What [`init`] writes first, so that a use of a barrier never initialised
/// is a report (the safe API cannot make one).
const INITIALISED: u32 = 0x6d62_6172;

/// PTX's limit on a phase's arrival count and on the transaction count.
pub(crate) const LIMIT: i64 = (1 << 20) - 1;

#[repr(C)]
struct Simulated {
    initialised: AtomicU32,
    /// Phases completed so far: the phase in progress is the `phase`-th
    /// (its parity `phase & 1`).
    phase: AtomicU32,
    expected: AtomicU32,
    pending: AtomicU32,
    /// Bytes of transactions the phase still waits for (negative: more
    /// completed than expected so far, allowed until the phase completes).
    tx: AtomicI64,
    /// Threads waiting on the phase in progress (0 again when it
    /// completes).
    waiters: AtomicU32,
    _pad: u32,
}

const _: () = assert!(core::mem::size_of::<Simulated>() == WORDS * 8);

/// # Safety
/// `barrier` is the first of [`WORDS`] words of a block's shared memory,
/// 8-byte aligned, accessed only through this module.
unsafe fn state<'a>(barrier: *mut u64) -> &'a Simulated {
    // SAFETY: the caller's contract; every field is an atomic, valid for
    // any bit pattern.
    unsafe { &*barrier.cast::<Simulated>() }
}

#[track_caller]
fn checked<'a>(barrier: *mut u64, index: usize) -> &'a Simulated {
    // SAFETY: forwarded from the callers' contracts (each `unsafe fn` below).
    let s = unsafe { state(barrier) };
    if s.initialised.load(Relaxed) != INITIALISED {
        panic!("mbarrier {index} was used before it was initialised");
    }
    s
}

/// # Safety
/// As the GPU's: `barrier` is this module's record in shared memory, no
/// other thread uses it until a block barrier.
pub(crate) unsafe fn init(barrier: *mut u64, count: u32) {
    // SAFETY: the caller's contract.
    let s = unsafe { state(barrier) };
    s.phase.store(0, Relaxed);
    s.expected.store(count, Relaxed);
    s.pending.store(count, Relaxed);
    s.tx.store(0, Relaxed);
    s.waiters.store(0, Relaxed);
    s.initialised.store(INITIALISED, Relaxed);
}

pub(crate) fn fence_init() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// The simulator copies through a map as it is in memory: an ordinary
/// fence.
///
/// # Safety
/// As the GPU's: `_map` is the address of 128 bytes of a map.
pub(crate) unsafe fn fence_tensormap_acquire(_map: *const u64) {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

pub(crate) fn fence_proxy_async() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// Completes the phase in progress once nothing is pending.
fn complete_if_done(s: &Simulated) {
    if s.pending.load(Relaxed) == 0 && s.tx.load(Relaxed) == 0 {
        s.phase
            .store(s.phase.load(Relaxed).wrapping_add(1), Relaxed);
        s.pending.store(s.expected.load(Relaxed), Relaxed);
        s.waiters.store(0, Relaxed);
    }
}

#[track_caller]
fn add_tx(s: &Simulated, index: usize, bytes: i64, what: &str) {
    let tx = s.tx.load(Relaxed) + bytes;
    if !(-LIMIT..=LIMIT).contains(&tx) {
        panic!("mbarrier {index}: {what} takes its transaction count to {tx} bytes, outside PTX's range of ±{LIMIT} (phase {})", s.phase.load(Relaxed));
    }
    s.tx.store(tx, Relaxed);
}

/// One arrival: a report when the phase has all its arrivals already (it
/// waits for bytes only), where a GPU's count would wrap.
#[track_caller]
fn count_arrival(s: &Simulated, index: usize) {
    let pending = s.pending.load(Relaxed);
    if pending == 0 {
        panic!(
            "mbarrier {index}: an arrival on phase {}, which has all {} of its arrivals and waits for {} bytes of transactions only (more arrivals than the barrier's count)",
            s.phase.load(Relaxed),
            s.expected.load(Relaxed),
            s.tx.load(Relaxed)
        );
    }
    s.pending.store(pending - 1, Relaxed);
}

/// The phase in progress: how many phases completed so far.
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn phase_in_progress(barrier: *mut u64, index: usize) -> u32 {
    checked(barrier, index).phase.load(Relaxed)
}

/// # Safety
/// `barrier` is an initialised record of this module (`index` names it).
#[track_caller]
pub(crate) unsafe fn arrive(barrier: *mut u64, index: usize) {
    let s = checked(barrier, index);
    count_arrival(s, index);
    complete_if_done(s);
}

/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn arrive_expect_tx(barrier: *mut u64, index: usize, bytes: u32) {
    let s = checked(barrier, index);
    add_tx(s, index, i64::from(bytes), "arrive_expect_tx");
    count_arrival(s, index);
    complete_if_done(s);
}

/// `bytes` of a copy completing on the barrier (the GPU's `complete_tx` of
/// a bulk copy). More bytes than the phase expects, once its arrivals are
/// all in, is a report: on the GPU the phase would complete early, and the
/// rest of the copy land while the tile is read.
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn complete_tx(barrier: *mut u64, index: usize, bytes: u32) {
    let s = checked(barrier, index);
    add_tx(s, index, -i64::from(bytes), "a copy completing");
    if s.pending.load(Relaxed) == 0 && s.tx.load(Relaxed) < 0 {
        panic!(
            "mbarrier {index}: a copy of {bytes} bytes completed {} bytes more than phase {} expected (arrive_expect_tx counted too few bytes)",
            -s.tx.load(Relaxed),
            s.phase.load(Relaxed)
        );
    }
    complete_if_done(s);
}

/// Waits until the phase of parity `parity` has completed, letting the
/// block's other threads run meanwhile; fails the launch when every thread
/// of the block waits for a phase of this barrier that cannot complete.
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn wait_parity(barrier: *mut u64, index: usize, parity: u32) {
    let s = checked(barrier, index);
    loop {
        let phase = s.phase.load(Relaxed);
        if phase & 1 != parity & 1 {
            return;
        }
        let waiters = s.waiters.load(Relaxed) + 1;
        if waiters as usize == crate::block_size() {
            panic!(
                "deadlock: every thread of the block waits on mbarrier {index} for phase {}, which never completes: it still expects {} of its {} arrivals and {} bytes of transactions (a wrong arrival count or arrive_expect_tx byte count?)",
                s.phase.load(Relaxed),
                s.pending.load(Relaxed),
                s.expected.load(Relaxed),
                s.tx.load(Relaxed)
            );
        }
        s.waiters.store(waiters, Relaxed);
        // Lets the block's other threads run (as a spinning atomic does).
        super::nanosleep(0);
        if s.phase.load(Relaxed) == phase {
            s.waiters.store(s.waiters.load(Relaxed) - 1, Relaxed);
        }
    }
}
