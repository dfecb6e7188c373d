//! Block-wide votes: a barrier that also counts, ands or ors a predicate
//! over every thread of the block (CUDA's `__syncthreads_count`,
//! `__syncthreads_and`, `__syncthreads_or`; Numba's `cuda.syncthreads_count`,
//! `syncthreads_and`, `syncthreads_or`).
//!
//! Each is a barrier as [`sync_threads`](crate::sync_threads) is: every
//! thread of the block must reach a vote (any vote function: a vote in each
//! branch of an `if` pairs up, and their results are the same), earlier
//! memory writes of the block are visible after it, and it is defined in
//! divergent code (PTX's `barrier.red` without `.aligned`). A vote has a
//! barrier of its own (id 2), so it never pairs with a `sync_threads()`
//! (id 0) or a phase change of the shared-memory token (id 1): threads of
//! one block waiting at a vote and at a `sync_threads()` hang on a GPU, and
//! the simulator reports them. A vote does not change the shared-memory
//! phase, so it needs no token, as `sync_threads()` needs none.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::vote::sync_threads_count;
//!
//! // With `#[kernel]`: each block counts its positive inputs.
//! pub fn positives(x: &[f32], mut counts: DisjointSlice<u32>) {
//!     let i = thread_index();
//!     let positive = x.get(i.get()).is_some_and(|v| *v > 0.0);
//!     let n = sync_threads_count(positive);
//!     counts.set(i, n);
//! }
//! ```

use crate::arch;

/// Waits until every thread of the block has voted, then returns how many
/// voted `predicate` true (`__syncthreads_count`).
#[inline(always)]
pub fn sync_threads_count(predicate: bool) -> u32 {
    arch::vote_count(predicate)
}

/// Waits until every thread of the block has voted, then returns whether
/// all voted `predicate` true (`__syncthreads_and`).
#[inline(always)]
pub fn sync_threads_and(predicate: bool) -> bool {
    arch::vote_all(predicate)
}

/// Waits until every thread of the block has voted, then returns whether
/// any voted `predicate` true (`__syncthreads_or`).
#[inline(always)]
pub fn sync_threads_or(predicate: bool) -> bool {
    arch::vote_any(predicate)
}
