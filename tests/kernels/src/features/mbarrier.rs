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

/// Every thread arrives on a barrier of `B` arrivals (thread 0 expecting
/// `bytes`), then thread 0 arrives once more, and all wait. With `bytes`
/// above 0 the extra arrival comes while phase 0 has all its arrivals and
/// waits for bytes: a report on the simulator. (With 0, the simulator counts
/// the extra arrival into phase 1, where an H100 ended the kernel at the
/// arrive: not asserted until the simulator models the GPU's rule.)
#[kernel(arch = "sm_90a")]
pub fn mbarrier_extra_arrival(bytes: u32, mut out: DisjointSlice<u32>) {
    let [mut bar] = gpu_device::mbarriers!(1).init([block_size() as u32]);
    if thread_rank() == 0 {
        bar.arrive_expect_tx(bytes);
        bar.arrive();
    } else {
        bar.arrive();
    }
    out.set(thread_index(), bar.wait().phase() + 1);
}
