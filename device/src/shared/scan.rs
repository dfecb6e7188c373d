//! Block-wide scans, and a broadcast from the block's first thread: warp
//! shuffles, then one round through the collectives' shared scratch, as
//! CUB's `BlockScan` (its warp-scans algorithm) does. One phase barrier each.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::shared::block_exclusive_sum;
//!
//! // With `#[kernel]`: each block's exclusive prefix sums, and its total.
//! pub fn prefix_sums(x: &[u32], mut out: DisjointSlice<u32>, block: Block) {
//!     let i = thread_index();
//!     let v = x.get(i.get()).copied().unwrap_or(0);
//!     let (_r, scan) = block_exclusive_sum(block, v);
//!     out.set(i, scan.value); // scan.total: the block's sum
//! }
//! ```

use super::phase::{Block, Reading, Writing};
use super::reduce::SEQUENTIAL_WARPS;
use super::scratch::{scratch, BROADCAST, WARP_SLOTS};
use super::ReduceElement;
use crate::arch::ShuffleMode;
use crate::collective::{Arithmetic, Operator, Scanned, Sum};
use crate::warp::{shuffle_in_mask, Lanes};

/// A thread's place in a block scan after the warps' totals are known:
/// the combination of the warps before its own (`None` in warp 0) and of
/// all warps.
pub(crate) struct WarpPrefix<T> {
    pub(crate) before: Option<T>,
    pub(crate) total: T,
}

/// The first phase of every block scan: each warp's inclusive scan, then
/// [`combine_warp_totals`] with its last lane's value. Returns the
/// thread's inclusive scan within its warp and its warp's place.
#[inline(always)]
pub(crate) fn scan_warps<T: ReduceElement>(
    block: Block<Writing>,
    value: T,
    op: &impl Operator<T>,
) -> (Block<Reading>, Lanes, T, WarpPrefix<T>) {
    let lanes = Lanes::of(block.thread_rank(), block.size());
    let inclusive = lanes.inclusive_scan(value, op);
    let (r, prefix) = combine_warp_totals(block, lanes, inclusive, lanes.count - 1, op);
    (r, lanes, inclusive, prefix)
}

/// Each warp's total (`total`, as lane `writer` of each warp holds it)
/// written to the scratch by that lane, one phase barrier, and their
/// combination: the warps before the thread's own, and all of them.
#[inline(always)]
pub(crate) fn combine_warp_totals<T: ReduceElement>(
    block: Block<Writing>,
    lanes: Lanes,
    total: T,
    writer: u32,
    op: &impl Operator<T>,
) -> (Block<Reading>, WarpPrefix<T>) {
    let (rank, size) = (block.thread_rank(), block.size());
    let scratch = scratch::<T>();
    let warp = rank / 32;
    if lanes.lane == writer {
        // SAFETY: `warp < 32 < SLOTS` (a block has at most 1024 threads); in
        // this Writing phase only lane `writer` of warp `warp` touches slot
        // `warp` of the collectives' private scratch (every earlier
        // collective's reads ended before the phase barrier that gave the
        // caller this token).
        unsafe { scratch.raw().write(warp, total) };
    }
    let r = block.sync();
    let warps = size.div_ceil(32);
    // The warps' slots only: the broadcast and claim slots after them may
    // be written in this phase (a look-back's prefix), and are not read here.
    let totals: &[T; WARP_SLOTS] = scratch.window(&r, 0);
    let prefix = if warps <= SEQUENTIAL_WARPS || lanes.count < 32 {
        // Every thread walks the totals: `before` is the running total
        // when it reaches its own warp.
        let mut running = totals[0];
        let mut before = None;
        let mut w = 1;
        while w < warps {
            if w == warp {
                before = Some(running);
            }
            running = op.combine(running, totals[w]);
            w += 1;
        }
        WarpPrefix {
            before,
            total: running,
        }
    } else {
        // A whole warp scans the totals, one a lane (the lanes past `warps`
        // a copy of the last, whose scans nobody reads).
        let full = Lanes::of(0, 32);
        let lane = lanes.lane as usize;
        let scanned = Lanes {
            lane: lanes.lane,
            ..full
        }
        .inclusive_scan(totals[lane.min(warps - 1)], op);
        // Every lane shuffles, whatever its warp; `mask` is the full warp.
        let before = shuffle_in_mask(
            ShuffleMode::Index,
            lanes.mask,
            scanned,
            (warp as u32).wrapping_sub(1) & 31,
        );
        let total = shuffle_in_mask(ShuffleMode::Index, lanes.mask, scanned, warps as u32 - 1);
        WarpPrefix {
            before: (warp > 0).then_some(before),
            total,
        }
    };
    (r, prefix)
}

/// Thread `r` gets `op` over the values of threads `0 ..= r` (ranks, in
/// order), and every thread the total over the block (CUB's
/// `BlockScan::InclusiveScan` with its block aggregate). Takes the phase
/// token in the Writing phase and returns it in the Reading phase (one
/// barrier).
///
/// Every thread of the block must call it (it contains a phase barrier and
/// warp shuffles).
#[inline(always)]
pub fn block_inclusive_scan<T: ReduceElement>(
    block: Block<Writing>,
    value: T,
    op: impl Operator<T>,
) -> (Block<Reading>, Scanned<T>) {
    let (r, _, inclusive, prefix) = scan_warps(block, value, &op);
    let value = match prefix.before {
        Some(before) => op.combine(before, inclusive),
        None => inclusive,
    };
    (
        r,
        Scanned {
            value,
            total: prefix.total,
        },
    )
}

/// Thread 0 gets `initial`, thread `r > 0` gets `initial` combined with
/// the values of threads `0 .. r` (ranks, in order), and every thread the
/// total over the block's values (without `initial`): CUB's
/// `BlockScan::ExclusiveScan` with its block aggregate. Takes the phase
/// token in the Writing phase and returns it in the Reading phase (one
/// barrier).
///
/// Every thread of the block must call it (it contains a phase barrier and
/// warp shuffles).
#[inline(always)]
pub fn block_exclusive_scan<T: ReduceElement>(
    block: Block<Writing>,
    value: T,
    initial: T,
    op: impl Operator<T>,
) -> (Block<Reading>, Scanned<T>) {
    let (r, lanes, inclusive, prefix) = scan_warps(block, value, &op);
    let in_warp = lanes.exclusive_from_inclusive(inclusive, value, &op);
    let before = match (prefix.before, in_warp) {
        (Some(a), Some(b)) => Some(op.combine(a, b)),
        (a, b) => a.or(b),
    };
    let value = match before {
        Some(before) => op.combine(initial, before),
        None => initial,
    };
    (
        r,
        Scanned {
            value,
            total: prefix.total,
        },
    )
}

/// The inclusive prefix sums over the block (wrapping for integers), and
/// the block's sum: [`block_inclusive_scan`] with [`Sum`].
#[inline(always)]
pub fn block_inclusive_sum<T: ReduceElement + Arithmetic>(
    block: Block<Writing>,
    value: T,
) -> (Block<Reading>, Scanned<T>) {
    block_inclusive_scan(block, value, Sum)
}

/// The exclusive prefix sums over the block, 0 in thread 0 (wrapping for
/// integers), and the block's sum: [`block_exclusive_scan`] with [`Sum`].
#[inline(always)]
pub fn block_exclusive_sum<T: ReduceElement + Arithmetic>(
    block: Block<Writing>,
    value: T,
) -> (Block<Reading>, Scanned<T>) {
    block_exclusive_scan(block, value, T::ZERO, Sum)
}

/// The `value` of the block's first thread (rank 0), to every thread: what
/// CUDA code does with `if (threadIdx.x == 0) s = x; __syncthreads();`.
/// Takes the phase token in the Writing phase and returns it in the Reading
/// phase (one barrier); the other threads' `value`s are not read.
///
/// Every thread of the block must call it (it contains a phase barrier).
#[inline(always)]
pub fn block_broadcast<T: ReduceElement>(block: Block<Writing>, value: T) -> (Block<Reading>, T) {
    let scratch = scratch::<T>();
    if block.thread_rank() == 0 {
        // SAFETY: in this Writing phase only rank 0 touches slot
        // `BROADCAST` of the collectives' private scratch (as in
        // `scan_warps`).
        unsafe { scratch.raw().write(BROADCAST, value) };
    }
    let r = block.sync();
    let value = scratch.get(&r, BROADCAST);
    (r, value)
}
