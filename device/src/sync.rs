//! Barriers and memory fences.

use crate::arch;

/// Waits until every thread of the block has reached this point, and makes
/// their earlier shared and global memory writes visible to the block
/// (CUDA's `__syncthreads()`, Numba's `cuda.syncthreads()`).
///
/// Every thread of the block must reach the same call; a barrier that only some
/// threads reach hangs the block.
#[inline(always)]
pub fn sync_threads() {
    arch::sync_threads()
}

/// Waits until every lane of the warp named in `mask` has reached this point
/// (`__syncwarp(mask)`).
#[inline(always)]
pub fn sync_warp(mask: u32) {
    arch::sync_warp(mask)
}

/// Orders this thread's memory accesses as seen by every thread of the device
/// (`__threadfence()`).
#[inline(always)]
pub fn thread_fence() {
    arch::fence_device()
}

/// Orders this thread's memory accesses as seen by the threads of its block
/// (`__threadfence_block()`).
#[inline(always)]
pub fn thread_fence_block() {
    arch::fence_block()
}
