//! Leaders: the one thread of a block, or of a warp, that writes what the
//! block or the warp computed together.
//!
//! CUDA code writes a block's total with `if (threadIdx.x == 0)
//! sums[blockIdx.x] = total;` and a warp's with `if (lane == 31)
//! slots[warp] = x;`. Here the test is a witness: [`block_leader`] is
//! `Some` in rank 0 of each block only, [`warp_leader::<L>`](warp_leader)
//! in lane `L` of each warp only, and the witness names the element its
//! holder owns:
//!
//! | witness | held by | owns, in global memory | owns, in shared memory |
//! |---|---|---|---|
//! | [`BlockLeader`] | rank 0 of each block | element `linear block index` of a [`DisjointSlice<T, ByBlock>`](crate::ownership::ByBlock) | every slot of a `shared_array!(T; N, map = ByBlock)` |
//! | [`WarpLeader<L>`] | lane `L` of each warp | element `global warp index` of a [`DisjointSlice<T, ByWarp<L>>`](crate::ownership::ByWarp) | slot `warp in block` of a `shared_array!(T; N, map = ByWarp<L>)` |
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::ownership::ByBlock;
//! use gpu_device::shared::reduce::block_sum;
//!
//! // With `#[kernel]`: `sums[b]` gets the sum of block `b`'s inputs.
//! pub fn block_sums(x: &[f32], mut sums: DisjointSlice<f32, ByBlock>, block: Block) {
//!     let v = x.get(grid_1d()).copied().unwrap_or(0.0);
//!     let (_r, total) = block_sum(block, v);
//!     if let Some(leader) = block_leader() {
//!         sums.set(leader, total);
//!     }
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *One holder per block, one per warp.* The witnesses' constructors are
//!   private; [`block_leader`] makes one only where the thread's linear rank
//!   in its block ([`thread_rank`](crate::thread_rank)) is 0, and
//!   [`warp_leader`] only where `rank % 32 == L` (warps are the block's
//!   threads in rank order, 32 at a time). `L` is a constant of the
//!   witness's *type*, and each output or shared array takes the leaders of
//!   one `L` (its map's), so two lanes of one warp can never both lead for
//!   the same array: that would take two values of `L`, which are two types.
//! - *Distinct indices.* The linear block index `x + X (y + Y z)` is
//!   distinct per block of the grid, and fits a `usize` (the runtime
//!   refuses launches of 2^64 threads or more); a warp's global index is
//!   `block * warps_per_block + rank / 32`, distinct per warp, as
//!   `rank / 32 < warps_per_block`.
//! - *Each stays in its thread.* Both are `!Send` and `!Sync`, and `Copy`
//!   only within the thread holding them, as the thread-index witnesses; on
//!   the simulator each records the thread that made it, and outputs and
//!   shared arrays refuse it in any other (see
//!   [`thread_owner`](crate::thread_owner)).
//! - Where the leader is found does not matter: in a divergent branch, a
//!   loop, or a helper function, the test is the thread's own rank.

use crate::thread_owner::Owner;
use core::fmt;
use core::marker::PhantomData;

/// Makes the witnesses `!Send` and `!Sync`.
type NotSend = PhantomData<*mut ()>;

/// This block's linear index in the grid, `x + X * (y + Y * z)` for
/// `blockIdx` `(x, y, z)` and `gridDim` `(X, Y, _)`: distinct per block.
#[inline(always)]
pub fn block_rank() -> usize {
    let ([x, y, z], [gx, gy, _]) = (crate::arch::block_idx(), crate::arch::grid_dim());
    x as usize + gx as usize * (y as usize + gy as usize * z as usize)
}

/// The number of warps of a block: `ceil(block_size() / 32)`.
#[inline(always)]
pub fn warps_per_block() -> usize {
    crate::thread::block_size().div_ceil(32)
}

/// Proof that this thread is its block's leader (rank 0): no other thread
/// of the launch holds a `BlockLeader` of the same block.
///
/// From [`block_leader`]; neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct BlockLeader {
    block: usize,
    owner: Owner,
    _thread: NotSend,
}

impl BlockLeader {
    /// The block's linear index in the grid ([`block_rank`]): the element
    /// it owns of a per-block output.
    #[inline(always)]
    pub fn block(self) -> usize {
        self.block
    }

    /// The block, for the output or array that the leader writes: checked
    /// to be the running thread's witness (on the simulator).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn owned(self) -> usize {
        self.owner.check("a BlockLeader");
        self.block
    }
}

/// Proof that this thread is lane `LANE` of its warp: no other thread of
/// the launch holds a `WarpLeader<LANE>` of the same warp.
///
/// From [`warp_leader`]; neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct WarpLeader<const LANE: u32 = 0> {
    warp_in_block: usize,
    warp: usize,
    owner: Owner,
    _thread: NotSend,
}

impl<const LANE: u32> WarpLeader<LANE> {
    /// The warp's index within its block, `rank / 32`: the slot it owns of
    /// a per-warp shared array.
    #[inline(always)]
    pub fn warp_in_block(self) -> usize {
        self.warp_in_block
    }

    /// The warp's index in the whole grid, `block_rank() *
    /// warps_per_block() + rank / 32`: the element it owns of a per-warp
    /// output.
    #[inline(always)]
    pub fn warp(self) -> usize {
        self.warp
    }

    /// `(warp_in_block, warp)`, for the output or array that the leader
    /// writes: checked to be the running thread's witness (on the
    /// simulator).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn owned(self) -> (usize, usize) {
        self.owner.check("a WarpLeader");
        (self.warp_in_block, self.warp)
    }
}

// Equality and formatting look at the value only: the maker the simulator
// records is no part of it.

impl PartialEq for BlockLeader {
    fn eq(&self, other: &Self) -> bool {
        self.block == other.block
    }
}
impl Eq for BlockLeader {}
impl fmt::Debug for BlockLeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockLeader")
            .field("block", &self.block)
            .finish()
    }
}

impl<const LANE: u32> PartialEq for WarpLeader<LANE> {
    fn eq(&self, other: &Self) -> bool {
        self.warp == other.warp
    }
}
impl<const LANE: u32> Eq for WarpLeader<LANE> {}
impl<const LANE: u32> fmt::Debug for WarpLeader<LANE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WarpLeader")
            .field("lane", &LANE)
            .field("warp", &self.warp)
            .finish()
    }
}

/// This block's leader witness, in the thread of rank 0 ([`thread_rank`](crate::thread_rank));
/// `None` in every other thread.
#[inline(always)]
pub fn block_leader() -> Option<BlockLeader> {
    (crate::thread::thread_rank() == 0).then(|| BlockLeader {
        block: block_rank(),
        owner: Owner::current(),
        _thread: PhantomData,
    })
}

/// The leader witness of this thread's warp, in its lane `LANE` (`rank % 32
/// == LANE`); `None` in the other lanes, and in every lane of a warp that
/// has no lane `LANE` (the last warp of a block whose size is not a
/// multiple of 32). `LANE` must be below 32 (a compile error otherwise).
///
/// `warp_leader::<0>()` is the usual leader; `warp_leader::<31>()` the lane
/// that holds a warp's inclusive scan total.
#[inline(always)]
pub fn warp_leader<const LANE: u32>() -> Option<WarpLeader<LANE>> {
    const { assert!(LANE < 32, "a warp has lanes 0 to 31") };
    let rank = crate::thread::thread_rank();
    (rank % 32 == LANE as usize).then(|| WarpLeader {
        warp_in_block: rank / 32,
        warp: block_rank() * warps_per_block() + rank / 32,
        owner: Owner::current(),
        _thread: PhantomData,
    })
}
