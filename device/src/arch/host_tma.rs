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
//! A barrier that other blocks of a cluster reach ([`mark_cluster`]) is
//! left out of the first rule where a block on another OS thread may
//! complete its phase: one they arrive on, always; one their copies
//! complete (a multicast tile's `full`), once its own arrivals are all in
//! (before that, only this block's threads could complete it). A wait that
//! never ends there is the watchdog's to report. Each operation on a record
//! holds its lock word, so blocks on other OS threads see them whole.

use std::sync::atomic::{
    AtomicI64, AtomicU32, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};

// The simulated bulk tensor copies, which complete on these barriers.
#[path = "host_tma_copy.rs"]
mod copy;
pub(crate) use copy::{
    bulk_commit_group, bulk_wait_group, bulk_wait_group_read, copy_2d, copy_nd, copy_nd_multicast,
    store_nd,
};

/// Words (`u64`) of shared memory per simulated barrier.
pub(crate) const WORDS: usize = 4;

/// What [`init`] writes first, so that a use of a barrier never initialised
/// is a report (the safe API cannot make one).
const INITIALISED: u32 = 0x6d62_6172;
/// What [`mark_cluster`] writes instead: initialised, and arrived on by
/// other blocks of the cluster.
const INITIALISED_CLUSTER: u32 = 0x6d62_6163;
/// Initialised, and completed by other blocks' copies (not arrivals).
const INITIALISED_CLUSTER_COPIES: u32 = 0x6d62_6178;

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
    /// 1 while an operation holds the record.
    lock: AtomicU32,
}

const _: () = assert!(core::mem::size_of::<Simulated>() == WORDS * 8);

/// The record held by one operation: released when dropped.
struct Held<'a>(&'a Simulated);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.lock.store(0, Release);
    }
}

impl Simulated {
    /// Holds the record (an operation of another OS thread's block holds
    /// it for a few loads and stores at most). Nothing run while it is
    /// held panics or yields: the reports are made after.
    fn hold(&self) -> Held<'_> {
        while self
            .lock
            .compare_exchange_weak(0, 1, Acquire, Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        Held(self)
    }

    /// Whether only this block's threads can complete the phase in
    /// progress (the deadlock rule's premise; see the module's notes).
    fn only_this_block_completes(&self) -> bool {
        match self.initialised.load(Relaxed) {
            INITIALISED_CLUSTER => false,
            INITIALISED_CLUSTER_COPIES => self.pending.load(Relaxed) > 0,
            _ => true,
        }
    }
}

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
    let initialised = s.initialised.load(Acquire);
    if ![INITIALISED, INITIALISED_CLUSTER, INITIALISED_CLUSTER_COPIES].contains(&initialised) {
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
    s.lock.store(0, Relaxed);
    s.phase.store(0, Relaxed);
    s.expected.store(count, Relaxed);
    s.pending.store(count, Relaxed);
    s.tx.store(0, Relaxed);
    s.waiters.store(0, Relaxed);
    s.initialised.store(INITIALISED, Release);
}

/// Marks an initialised barrier as one that other blocks of the cluster
/// reach: with their arrivals (`arrivals`), or with their copies only (see
/// the module's notes).
///
/// # Safety
/// As [`init`]: by the thread that initialised it, before any other
/// thread uses it.
pub(crate) unsafe fn mark_cluster(barrier: *mut u64, index: usize, arrivals: bool) {
    let s = checked(barrier, index);
    let mark = if arrivals {
        INITIALISED_CLUSTER
    } else {
        INITIALISED_CLUSTER_COPIES
    };
    s.initialised.store(mark, Release);
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

/// Completes the phase in progress once nothing is pending (with the
/// record held).
fn complete_if_done(s: &Simulated) {
    if s.pending.load(Relaxed) == 0 && s.tx.load(Relaxed) == 0 {
        s.phase
            .store(s.phase.load(Relaxed).wrapping_add(1), Release);
        s.pending.store(s.expected.load(Relaxed), Relaxed);
        s.waiters.store(0, Relaxed);
    }
}

/// Adds `bytes` to the transactions the phase waits for (with the record
/// held); the report when that leaves PTX's range.
fn add_tx(s: &Simulated, index: usize, bytes: i64, what: &str) -> Result<(), String> {
    let tx = s.tx.load(Relaxed) + bytes;
    if !(-LIMIT..=LIMIT).contains(&tx) {
        return Err(format!("mbarrier {index}: {what} takes its transaction count to {tx} bytes, outside PTX's range of ±{LIMIT} (phase {})", s.phase.load(Relaxed)));
    }
    s.tx.store(tx, Relaxed);
    Ok(())
}

/// One arrival (with the record held): a report when the phase has all
/// its arrivals already (it waits for bytes only), where a GPU's count
/// would wrap.
fn count_arrival(s: &Simulated, index: usize) -> Result<(), String> {
    let pending = s.pending.load(Relaxed);
    if pending == 0 {
        return Err(format!(
            "mbarrier {index}: an arrival on phase {}, which has all {} of its arrivals and waits for {} bytes of transactions only (more arrivals than the barrier's count)",
            s.phase.load(Relaxed),
            s.expected.load(Relaxed),
            s.tx.load(Relaxed)
        ));
    }
    s.pending.store(pending - 1, Relaxed);
    Ok(())
}

/// Runs `f` with the record held, then panics with its report, if any.
#[track_caller]
fn held(s: &Simulated, f: impl FnOnce(&Simulated) -> Result<(), String>) {
    let outcome = {
        let _held = s.hold();
        f(s)
    };
    if let Err(report) = outcome {
        panic!("{report}");
    }
}

/// The phase in progress: how many phases completed so far.
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn phase_in_progress(barrier: *mut u64, index: usize) -> u32 {
    checked(barrier, index).phase.load(Acquire)
}

/// # Safety
/// `barrier` is an initialised record of this module (`index` names it).
#[track_caller]
pub(crate) unsafe fn arrive(barrier: *mut u64, index: usize) {
    held(checked(barrier, index), |s| {
        count_arrival(s, index)?;
        complete_if_done(s);
        Ok(())
    });
}

/// One arrival on the barrier at `barrier`'s place in block `rank`'s
/// shared memory (the executor maps it; the GPU's `mapa` and remote
/// `mbarrier.arrive`).
///
/// # Safety
/// As the GPU's: block `rank`'s barrier there is initialised (a record of
/// this module) and its block has not finished.
#[track_caller]
pub(crate) unsafe fn arrive_on_rank(barrier: *mut u64, index: usize, rank: u32) {
    // SAFETY: the caller's contract: `barrier` is in this block's shared
    // memory, `rank` in the cluster.
    let theirs = unsafe { super::cluster::map_shared_rank(barrier.cast::<u8>(), rank) };
    // SAFETY: the caller's contract.
    unsafe { arrive(theirs.cast::<u64>().cast_mut(), index) };
}

/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn arrive_expect_tx(barrier: *mut u64, index: usize, bytes: u32) {
    held(checked(barrier, index), |s| {
        add_tx(s, index, i64::from(bytes), "arrive_expect_tx")?;
        count_arrival(s, index)?;
        complete_if_done(s);
        Ok(())
    });
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
    held(checked(barrier, index), |s| {
        add_tx(s, index, -i64::from(bytes), "a copy completing")?;
        if s.pending.load(Relaxed) == 0 && s.tx.load(Relaxed) < 0 {
            return Err(format!(
                "mbarrier {index}: a copy of {bytes} bytes completed {} bytes more than phase {} expected (arrive_expect_tx counted too few bytes)",
                -s.tx.load(Relaxed),
                s.phase.load(Relaxed)
            ));
        }
        complete_if_done(s);
        Ok(())
    });
}

/// Waits until the phase of parity `parity` has completed, letting the
/// block's other threads run meanwhile; fails the launch when every thread
/// of the block waits for a phase of this barrier that cannot complete
/// (not for a barrier the cluster reaches: see the module's notes).
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn wait_parity(barrier: *mut u64, index: usize, parity: u32) {
    let s = checked(barrier, index);
    loop {
        let phase = s.phase.load(Acquire);
        if phase & 1 != parity & 1 {
            return;
        }
        // Whether this wait counts toward the deadlock rule, decided with
        // the record held and the phase still `phase` (a peer's copy may
        // complete it meanwhile, on another OS thread): `Some(all wait)`.
        let counted = {
            let _held = s.hold();
            if s.phase.load(Relaxed) != phase || !s.only_this_block_completes() {
                None
            } else {
                let waiters = s.waiters.load(Relaxed) + 1;
                s.waiters.store(waiters, Relaxed);
                Some(waiters as usize == crate::block_size())
            }
        };
        if counted == Some(true) {
            let report = {
                let _held = s.hold();
                format!(
                    "deadlock: every thread of the block waits on mbarrier {index} for phase {}, which never completes: it still expects {} of its {} arrivals and {} bytes of transactions (a wrong arrival count or arrive_expect_tx byte count?)",
                    s.phase.load(Relaxed),
                    s.pending.load(Relaxed),
                    s.expected.load(Relaxed),
                    s.tx.load(Relaxed)
                )
            };
            panic!("{report}");
        }
        // Lets the block's other threads run (as a spinning atomic does).
        super::nanosleep(0);
        if counted.is_some() {
            let _held = s.hold();
            if s.phase.load(Relaxed) == phase {
                s.waiters.store(s.waiters.load(Relaxed) - 1, Relaxed);
            }
        }
    }
}

/// [`wait_parity`]; the GPU's waits with acquire semantics at cluster
/// scope (the simulator's record orders every operation already).
///
/// # Safety
/// As [`arrive`].
#[track_caller]
pub(crate) unsafe fn wait_parity_cluster(barrier: *mut u64, index: usize, parity: u32) {
    // SAFETY: the caller's contract.
    unsafe { wait_parity(barrier, index, parity) };
}
