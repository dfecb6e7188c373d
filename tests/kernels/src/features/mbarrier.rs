//! `mbarrier` (`gpu_device::mbarrier`, sm_90): phases of a barrier every
//! thread arrives at, and the misuses that the simulator reports rather
//! than hang on (a byte count no copy meets, a missing arrival) or that the
//! API refuses (an arrival count out of range).

use gpu_device::prelude::*;
use gpu_device::DeviceAtomic;

/// Phases of [`mbarrier_phases`].
pub const PHASES: u32 = 5;

/// Each of `PHASES` rounds, every thread adds 1 to its block's counter,
/// arrives, waits, then reads the counter: once the round's phase
/// completed, each of the block's `B` threads has added for that round, and
/// none for two rounds later (that needs this thread's next arrival). Thread
/// `t` writes 1 if every round saw `B (r + 1) <= count < B (r + 2)` and
/// its witness named phase `r`, else 0. `counters`: one per block, zero.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_phases(counters: &[DeviceAtomic<u32>], mut out: DisjointSlice<u32>) {
    let b = block_size() as u32;
    let [mut bar] = gpu_device::mbarriers!(1).init([b]);
    let counter = &counters[block_idx().x as usize];
    let mut ok = bar.arrivals() == b;
    for round in 0..PHASES {
        counter.fetch_add(1);
        bar.arrive();
        let done = bar.wait();
        let seen = counter.load();
        ok &= done.phase() == round && bar.phase() == round + 1;
        ok &= b * (round + 1) <= seen && seen < b * (round + 2);
    }
    out.set(thread_index(), ok as u32);
}

/// Two barriers in one `mbarriers!`: thread 0 arrives at barrier 0 with
/// `bytes` of transactions expected (0 completes at once) and the others
/// with none; every thread then arrives at barrier 1 and waits on both.
/// Barrier 0 counts `B` arrivals, barrier 1 `B + extra`. With `bytes` and
/// `extra` 0 every thread writes 2 (the phases it saw); otherwise no copy
/// or arrival ever completes the phase: on the simulator a report naming
/// the barrier, on a GPU a hang.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_two(bytes: u32, extra: u32, mut out: DisjointSlice<u32>) {
    let b = block_size() as u32;
    let [mut tx, mut all] = gpu_device::mbarriers!(2).init([b, b + extra]);
    if thread_rank() == 0 {
        tx.arrive_expect_tx(bytes);
    } else {
        tx.arrive();
    }
    all.arrive();
    tx.wait();
    all.wait();
    out.set(thread_index(), tx.phase() + all.phase());
}

/// A barrier initialised to wait for `count` arrivals: outside `1 ..=
/// 2^20 - 1` a panic naming the count.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_count(count: u32, mut out: DisjointSlice<u32>) {
    let [bar] = gpu_device::mbarriers!(1).init([count]);
    out.set(thread_index(), bar.arrivals());
}

/// Which extra arrival [`mbarrier_extra_arrival`] makes.
pub const ARRIVE_TWICE: u32 = 0;
/// A barrier of `B / 2` arrivals that every thread arrives at.
pub const COUNT_SHORT: u32 = 1;

/// More arrivals than a phase counts (`which`), then every thread waits:
/// with [`ARRIVE_TWICE`], a barrier of `B` arrivals on which thread 0
/// arrives twice (first expecting `bytes`), the others once: refused at
/// thread 0's second arrival, on every target (an H100 ended the kernel at
/// such an arrival). With [`COUNT_SHORT`], a barrier of `B / 2` arrivals
/// on which thread 0 arrives first (expecting `bytes`), then every other
/// thread: with `bytes` 0 the phase completes at the `B / 2`-th arrival
/// and the next arrives for a phase that completed without it, with `bytes`
/// above 0 the next arrives on a phase that has all its arrivals and
/// waits for bytes only; both a report on the simulator.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_extra_arrival(bytes: u32, which: u32, mut out: DisjointSlice<u32>) {
    let b = block_size() as u32;
    let count = if which == COUNT_SHORT { b / 2 } else { b };
    let [mut bar] = gpu_device::mbarriers!(1).init([count]);
    if thread_rank() == 0 {
        bar.arrive_expect_tx(bytes);
        if which == ARRIVE_TWICE {
            bar.arrive();
        }
    }
    // Thread 0's arrivals come first, whatever order the block runs in.
    sync_threads();
    if thread_rank() != 0 {
        bar.arrive();
    }
    out.set(thread_index(), bar.wait().phase() + 1);
}

/// Which `MBarriers::init` calls [`mbarrier_divergent_init`] makes.
pub const INIT_TWO_ARRAYS: u32 = 0;
/// One `mbarriers!`, odd threads initialising it with another count.
pub const INIT_OTHER_COUNTS: u32 = 1;
/// One `mbarriers!`, every thread with the same count.
pub const INIT_TOGETHER: u32 = 2;

/// `MBarriers::init` called in divergent branches (`which`): threads 0 to
/// 15 initialise one `mbarriers!` and the others a second one (which
/// thread 0, the initialising thread, never reaches: its barrier would be
/// used uninitialised), or odd threads give other counts. Refused in the
/// threads whose call differs from thread 0's. With [`INIT_TOGETHER`]
/// every thread arrives and waits: each writes 1.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_divergent_init(which: u32, mut out: DisjointSlice<u32>) {
    let b = block_size() as u32;
    let t = thread_rank();
    let first = gpu_device::mbarriers!(1);
    let second = gpu_device::mbarriers!(1);
    let [mut bar] = match which {
        INIT_TWO_ARRAYS if t >= 16 => second.init([b]),
        INIT_OTHER_COUNTS if t % 2 == 1 => first.init([b + 1]),
        _ => first.init([b]),
    };
    bar.arrive();
    out.set(thread_index(), bar.wait().phase() + 1);
}

/// Which second `init` [`mbarrier_init_again`] makes.
pub const AGAIN_IN_A_LOOP: u32 = 0;
/// The same `mbarriers!` made by a closure called twice, the first
/// handle waited for once and then waited on again after the second
/// `init`.
pub const AGAIN_UNDER_A_HANDLE: u32 = 1;
/// One `init` only (the loop runs once).
pub const INIT_ONCE: u32 = 2;

/// The same `mbarriers!(1)` initialised twice in one block (`which`): in
/// a loop's second round, or through a closure called twice while the
/// first call's handle lives. Re-initialised, the barrier is at phase 0
/// again while the first handle waits for phase 1 by parity: its wait
/// would return at once with a `Completed` for a phase no thread arrived
/// on. Refused in every thread: the barriers are live in the block. With
/// [`INIT_ONCE`] every thread arrives and waits: each writes 1.
#[kernel(arch = "sm_90a")]
pub fn mbarrier_init_again(which: u32, mut out: DisjointSlice<u32>) {
    let b = block_size() as u32;
    let seen = if which == AGAIN_UNDER_A_HANDLE {
        let make = || gpu_device::mbarriers!(1);
        let [mut first] = make().init([b]);
        first.arrive();
        let _ = first.wait();
        let [_second] = make().init([b]);
        // No thread arrived on phase 1: without the refusal this returns
        // at once, a witness of a phase that never completed.
        first.wait().phase() + 1
    } else {
        let rounds = if which == INIT_ONCE { 1 } else { 2 };
        let mut seen = 0;
        for _ in 0..rounds {
            let [mut bar] = gpu_device::mbarriers!(1).init([b]);
            bar.arrive();
            seen += bar.wait().phase() + 1;
        }
        seen
    };
    out.set(thread_index(), seen);
}
