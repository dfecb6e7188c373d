//! Block-wide reductions: warp shuffles, then one round through the
//! collectives' shared scratch, as CUB's `BlockReduce` does. One phase
//! barrier per reduction.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::collective::Max;
//! use gpu_device::shared::block_reduce;
//!
//! // With `#[kernel]`: every thread gets the maximum over its block.
//! pub fn block_max(x: &[f32], mut out: DisjointSlice<f32>, block: Block) {
//!     let i = thread_index();
//!     let v = x.get(i.get()).copied().unwrap_or(f32::MIN);
//!     let (_r, max) = block_reduce(block, v, Max);
//!     out.set(i, max);
//! }
//! ```

use super::phase::{Block, Reading, Writing};
use super::scratch::{scratch, WARP_SLOTS};
use crate::collective::{Arithmetic, Operator, Sum};
use crate::warp::Lanes;

pub use super::scratch::ReduceElement;

/// Up to this many warps, a thread combines the warps' partials itself
/// (reads of one slot by a whole warp are one broadcast); above, a warp
/// combines them with shuffles.
pub(crate) const SEQUENTIAL_WARPS: usize = 8;

/// Combines every thread's `value` with `op` (associative; combined in rank
/// order, so it need not be commutative): every thread of the block gets
/// the result. Takes the block's phase token in the Writing phase and
/// returns it in the Reading phase (one barrier).
///
/// Every thread of the block must call it (it contains a phase barrier and
/// warp shuffles).
#[inline(always)]
pub fn block_reduce<T: ReduceElement>(
    block: Block<Writing>,
    value: T,
    op: impl Operator<T>,
) -> (Block<Reading>, T) {
    let (rank, size) = (block.thread_rank(), block.size());
    let lanes = Lanes::of(rank, size);
    let partial = lanes.reduce(value, &op);
    let scratch = scratch::<T>();
    let warp = rank / 32;
    if lanes.lane == 0 {
        // SAFETY: `warp < 32` (a block has at most 1024 threads); in this
        // Writing phase only lane 0 of warp `warp` touches slot `warp` of
        // the collectives' private scratch (every earlier collective's reads
        // ended before the phase barrier that gave the caller this token).
        unsafe { scratch.raw().write(warp, partial) };
    }
    let r = block.sync();
    let warps = size.div_ceil(32);
    // The warps' slots only (see `scan::combine_warp_totals`).
    let partials: &[T; WARP_SLOTS] = scratch.window(&r, 0);
    let total = if warps <= SEQUENTIAL_WARPS || lanes.count < 32 {
        let mut v = partials[0];
        let mut w = 1;
        while w < warps {
            v = op.combine(v, partials[w]);
            w += 1;
        }
        v
    } else {
        // A whole warp holds the partials, one a lane (the lanes past
        // `warps` a copy of the last, never combined), and reduces them
        // downwards, in lane order, into lane 0 (distances 1, 2, 4, ...,
        // as `Lanes::reduce`).
        let lane = lanes.lane as usize;
        let mut v = partials[lane.min(warps - 1)];
        let mut d = 1;
        while d < 32 {
            let other = crate::warp::shuffle_in_mask(
                crate::arch::ShuffleMode::Down,
                lanes.mask,
                v,
                d as u32,
            );
            if lane + d < warps {
                v = op.combine(v, other);
            }
            d *= 2;
        }
        crate::warp::shuffle_in_mask(crate::arch::ShuffleMode::Index, lanes.mask, v, 0)
    };
    (r, total)
}

/// The sum over the block of every thread's `value` (wrapping for
/// integers): [`block_reduce`] with [`Sum`].
#[inline(always)]
pub fn block_sum<T: ReduceElement + Arithmetic>(
    block: Block<Writing>,
    value: T,
) -> (Block<Reading>, T) {
    block_reduce(block, value, Sum)
}
