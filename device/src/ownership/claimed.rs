//! The map of outputs written tile by tile by the blocks that claimed the
//! tiles ([`crate::lookback`]): a tile's elements in warp-striped runs.

use super::{sealed, Map, SliceMap};
use crate::disjoint::DisjointSlice;
use crate::lookback::TileOwner;
use crate::vector::{write_run, VectorElement};

/// Tile `c` of an output, claimed by one block of `B` threads (a multiple
/// of 32), is its `B RUN RUNS` elements from `c B RUN RUNS`; in it, warp
/// `w` owns the `32 RUN RUNS` elements from `w 32 RUN RUNS`, and its lane
/// `l` the `RUNS` runs of `RUN` consecutive elements starting at `RUN (l +
/// 32 k)`, `k < RUNS`. A warp's `k`-th runs are consecutive, so with `RUN`
/// elements of 16 bytes each access of a warp is 512 contiguous bytes
/// (`LDG.E.128`/`STG.E.128`, coalesced). Written with a
/// [`TileOwner`](crate::lookback::TileOwner) of the tile.
///
/// Disjoint: a tile has one owner block ([`crate::lookback`]); tiles are
/// disjoint intervals; inside a tile, `(w, l, k, i)` with `w < B / 32`,
/// `l < 32`, `k < RUNS`, `i < RUN` names each offset `w 32 RUN RUNS +
/// RUN (l + 32 k) + i` once.
pub enum ClaimedRuns<const RUN: usize, const RUNS: usize> {}

impl<const RUN: usize, const RUNS: usize> sealed::Sealed for ClaimedRuns<RUN, RUNS> {}
impl<const RUN: usize, const RUNS: usize> Map for ClaimedRuns<RUN, RUNS> {}
impl<const RUN: usize, const RUNS: usize> SliceMap for ClaimedRuns<RUN, RUNS> {}

impl<'a, T: VectorElement, const RUN: usize, const RUNS: usize>
    DisjointSlice<'a, T, ClaimedRuns<RUN, RUNS>>
{
    /// Writes this thread's `k`-th run of its block's tile, the elements
    /// below the end: 16-byte vector stores where the run is whole and
    /// aligned. Nothing for `k >= RUNS`.
    #[inline(always)]
    pub fn set_run(&mut self, owner: &TileOwner, k: usize, values: [T; RUN]) {
        if let Some(start) = owner.run_start::<RUN, RUNS>(k) {
            // SAFETY: `start .. start + RUN` are this thread's elements under
            // the map (its block owns the tile, see `crate::lookback`), the
            // map of every thread's view of this output; `write_run` writes
            // only those below `len`.
            unsafe { write_run(self.ptr, start, self.len, values) };
        }
    }
}
