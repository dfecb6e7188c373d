//! Block-wide reductions: warp shuffles, then one round through shared
//! memory, as CUB's `BlockReduce` does. One phase barrier per reduction.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::shared::reduce::block_reduce;
//!
//! // With `#[kernel]`: every thread gets the maximum over its block.
//! pub fn block_max(x: &[f32], mut out: DisjointSlice<f32>, block: Block) {
//!     let i = thread_index();
//!     let v = x.get(i.get()).copied().unwrap_or(f32::MIN);
//!     let (_r, max) = block_reduce(block, v, |a, b| if a > b { a } else { b });
//!     out.set(i, max);
//! }
//! ```

use super::phase::{Block, Reading, Writing};
use super::SharedElement;
use crate::arch::ShuffleMode;
use crate::warp::{lane_id, shuffle_in_mask, Shuffle};

/// Types a block can reduce: those a warp shuffle moves (32- and 64-bit
/// integers and floats). Sealed: the reduction's scratch array is this
/// module's alone.
pub trait ReduceElement: Shuffle + SharedElement + Copy + private::Scratch {}

/// The reduction's scratch: reachable only with a `private::Token`, which
/// only this module makes.
///
/// `block_reduce` writes its scratch outside the ownership rule of the phase
/// token (lane 0 of warp `w` writes slot `w`, which is not a slot lane 0
/// owns), an `unsafe` write whose soundness rests on nobody else writing
/// that array. So no code outside this module may reach it: the trait is in
/// a private module (it cannot be implemented elsewhere, so no other array
/// can pose as the scratch), and its method takes a token that cannot be
/// made elsewhere (a sealed trait's methods are still callable through a
/// generic bound `T: ReduceElement`; without a token, they are not).
mod private {
    use crate::shared::Shared;

    /// Proof that the caller is this module.
    pub struct Token(());

    /// The 32 partials of a reduction of this type (one per warp).
    pub trait Scratch: Sized {
        /// This type's scratch array: a static shared array private to this
        /// module (see the parent trait).
        fn scratch(token: Token) -> Shared<Self, 32>;
    }

    macro_rules! scratch {
        ($($t:ty),*) => {$(
            impl Scratch for $t {
                #[inline(always)]
                fn scratch(_: Token) -> Shared<$t, 32> {
                    crate::shared_array!($t; 32)
                }
            }
            impl super::ReduceElement for $t {}
        )*};
    }
    scratch!(u32, i32, f32, u64, i64, f64);

    /// The scratch of `T`.
    #[inline(always)]
    pub(super) fn scratch<T: Scratch>() -> Shared<T, 32> {
        T::scratch(Token(()))
    }
}

/// The mask of the lanes present in this thread's warp of a block of `size`
/// threads, and their number. It names the calling lane: `rank % 32 < size -
/// rank / 32 * 32` and `rank % 32 < 32`.
#[inline(always)]
fn warp_lanes(rank: usize, size: usize) -> (u32, usize) {
    let lanes = (size - rank / 32 * 32).min(32);
    let mask = if lanes == 32 {
        u32::MAX
    } else {
        (1u32 << lanes) - 1
    };
    (mask, lanes)
}

/// `op` over the values of the `lanes` lanes of this warp: lane 0 gets the
/// result (other lanes a partial one).
#[inline(always)]
fn warp_reduce<T: Shuffle>(mut v: T, mask: u32, lanes: usize, op: &impl Fn(T, T) -> T) -> T {
    let lane = lane_id() as usize;
    let mut offset = 16;
    while offset > 0 {
        // `mask` names this lane (`warp_lanes`), as a shuffle requires.
        let other = shuffle_in_mask(ShuffleMode::Down, mask, v, offset as u32);
        if lane + offset < lanes {
            v = op(v, other);
        }
        offset /= 2;
    }
    v
}

/// Combines every thread's `value` with `op` (associative and commutative):
/// every thread of the block gets the result. Takes the block's phase token
/// in the Writing phase and returns it in the Reading phase (one barrier);
/// `sync` it before the next reduction of the same type.
///
/// Every thread of the block must call it (it contains a phase barrier and
/// warp shuffles).
#[inline(always)]
pub fn block_reduce<T: ReduceElement>(
    block: Block<Writing>,
    value: T,
    op: impl Fn(T, T) -> T,
) -> (Block<Reading>, T) {
    let (rank, size) = (block.thread_rank(), block.size());
    let (mask, lanes) = warp_lanes(rank, size);
    let partial = warp_reduce(value, mask, lanes, &op);
    let scratch = private::scratch::<T>();
    let warp = rank / 32;
    if rank % 32 == 0 {
        // SAFETY: `warp < 32` (a block has at most 1024 threads); in this
        // Writing phase only lane 0 of warp `warp` touches slot `warp` of
        // this private array (earlier reductions' reads ended before the
        // phase barrier that gave the caller its Writing token).
        unsafe { scratch.raw().write(warp, partial) };
    }
    let r = block.sync();
    let warps = size.div_ceil(32);
    let partials = scratch.as_array(&r);
    let total = if lanes == 32 {
        let lane = rank % 32;
        let mine = partials[lane.min(warps - 1)];
        let mut v = warp_reduce(mine, mask, warps, &op);
        // Lane 0 holds the total: broadcast it.
        v = shuffle_in_mask(ShuffleMode::Index, mask, v, 0);
        v
    } else {
        // A partial last warp may have fewer lanes than there are partials.
        let mut v = partials[0];
        let mut w = 1;
        while w < warps {
            v = op(v, partials[w]);
            w += 1;
        }
        v
    };
    (r, total)
}

/// The sum over the block of every thread's `value` (see [`block_reduce`]).
#[inline(always)]
pub fn block_sum<T: ReduceElement + core::ops::Add<Output = T>>(
    block: Block<Writing>,
    value: T,
) -> (Block<Reading>, T) {
    block_reduce(block, value, |a, b| a + b)
}
