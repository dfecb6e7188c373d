//! Kernels with data races on purpose, each beside its race-free form (one
//! `bool` apart), for the simulator's race detector (`tests/forced_simulator/race_check.rs`).
//! Every race goes through an `unsafe` escape hatch: safe code cannot race.

use gpu_device::prelude::*;
use gpu_device::warp::{shfl_sync, FULL_MASK};

/// Every thread of the block writes slot 0 of a shared array through the
/// raw escape hatch (a write/write race in one barrier interval); with
/// `one_writer`, only thread 0 does. Every thread then reads slot 0.
#[kernel]
pub fn shared_write_write(one_writer: bool, mut out: DisjointSlice<u32>, block: Block) {
    let tile = shared_array!(u32; 64);
    let t = block.thread_rank();
    if !one_writer || t == 0 {
        // SAFETY: not sound without `one_writer`, on purpose: other threads
        // write the same slot in this interval.
        unsafe { tile.raw().write(0, t as u32 + 1) };
    }
    let r = block.sync();
    out.set(thread_index(), tile.get(&r, 0));
}

/// Each thread writes its own slot, then reads its neighbour's: ordered by
/// a `sync_threads()` with `barrier`, a read/write race without it (the
/// missing barrier). Launch with at most 256 threads per block.
#[kernel]
pub fn shared_neighbour(barrier: bool, mut out: DisjointSlice<u32>) {
    let tile = shared_array!(u32; 256).raw();
    let (t, n) = (thread_idx().x as usize, block_dim().x as usize);
    if n <= tile.len() {
        // SAFETY: `t < n <= len`; the neighbour's write is ordered before
        // the read only with `barrier` (a race without, on purpose).
        unsafe { tile.write(t, t as u32) };
        if barrier {
            sync_threads();
        }
        // SAFETY: as above.
        let neighbour = unsafe { tile.read((t + 1) % n) };
        out.set(thread_index(), neighbour);
    }
}

/// Thread 0 of each block writes its block's index to `out[block]` with
/// `per_block`, or to `out[0]` without (every block writes the same
/// element: blocks are never ordered, a race).
#[kernel]
pub fn global_block_results(per_block: bool, mut out: DisjointSlice<u32>) {
    let _one_dimensional = thread_index();
    let b = block_idx().x as usize;
    let at = if per_block { b } else { 0 };
    if thread_idx().x == 0 && at < out.len() {
        // SAFETY: in bounds; one writer per element with `per_block`, a race
        // on purpose without.
        unsafe { *out.get_unchecked_mut(at) = b as u32 + 1 };
    }
}

/// Thread 0 of each block writes `out[block]`, then thread 1 adds to it:
/// ordered by a `sync_threads()` with `barrier` (the element ends at 2), a
/// race without it.
#[kernel]
pub fn global_same_block(barrier: bool, mut out: DisjointSlice<u32>) {
    let _one_dimensional = thread_index();
    let (b, t) = (block_idx().x as usize, thread_idx().x);
    if t == 0 && b < out.len() {
        // SAFETY: in bounds; thread 1's access below is ordered after this
        // one only with `barrier` (a race without, on purpose).
        unsafe { *out.get_unchecked_mut(b) = 1 };
    }
    if barrier {
        sync_threads();
    }
    if t == 1 && b < out.len() {
        // SAFETY: as above.
        unsafe { *out.get_unchecked_mut(b) += 1 };
    }
}

/// Lane 0 writes a shared slot; then every thread shuffles (with
/// `shuffle`) and thread `reader` reads the slot. A shuffle orders the lanes
/// of one warp: a reader in warp 0 after it is no race, a reader without it
/// or in another warp is one.
#[kernel]
pub fn warp_handoff(shuffle: bool, reader: u32, mut out: DisjointSlice<u32>) {
    let slot = shared_array!(u32; 1).raw();
    let t = thread_idx().x;
    if t == 0 {
        // SAFETY: in bounds; the read below is ordered after this write only
        // in the cases the documentation names (races on purpose otherwise).
        unsafe { slot.write(0, 42) };
    }
    let lane = if shuffle {
        shfl_sync(FULL_MASK, t, 0)
    } else {
        0
    };
    let got = if t == reader {
        // SAFETY: as above.
        unsafe { slot.read(0) }
    } else {
        lane
    };
    out.set(thread_index(), got);
}

/// Every thread adds 1 to a shared counter atomically; with `plain_write`
/// thread 0 also stores to it without an atomic in the same interval (a
/// race with the others' atomics, which do not race with each other).
#[kernel]
pub fn shared_counter(plain_write: bool, mut out: DisjointSlice<u32>, block: Block) {
    let counter = shared_array!(DeviceAtomic<u32>; 1);
    let mut w = block;
    counter.fill(&mut w, |_| DeviceAtomic::new(0));
    let r = w.sync();
    counter.get_ref(&r, 0).fetch_add(1);
    if plain_write && r.thread_rank() == 0 {
        // SAFETY: in bounds; the other threads update the slot atomically in
        // this interval: a race on purpose.
        unsafe { counter.raw().write(0, DeviceAtomic::new(0)) };
    }
    let r = r.sync().sync();
    out.set(thread_index(), counter.get_ref(&r, 0).load());
}
