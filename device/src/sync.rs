//! Barriers, memory fences and sleep. (Barriers that also vote are in
//! [`vote`](crate::vote).)

use crate::arch;

/// Waits until every thread of the block has reached this point, and makes
/// their earlier shared and global memory writes visible to the block
/// (CUDA's `__syncthreads()`, Numba's `cuda.syncthreads()`).
///
/// It is PTX's `barrier.sync 0`, the barrier that counts threads: defined
/// even when the threads of a warp reach it from divergent code (CUDA's
/// `__syncthreads()` is `bar.sync 0`, the `.aligned` form, undefined
/// there). Every thread of the block must reach a `sync_threads()` (any one:
/// a call in each branch of an `if` pairs up); a barrier that some threads
/// never reach hangs the block on a GPU, and the simulator reports it.
///
/// For shared memory without `unsafe`, use the phase token
/// [`Block`](crate::shared::Block) instead: its `sync` is a separate
/// barrier (id 1), so a `sync_threads()` never pairs with a phase change.
#[inline(always)]
pub fn sync_threads() {
    arch::barrier(arch::THREADS_BARRIER)
}

/// Waits until every lane of the warp named in `mask` has reached this point
/// (`__syncwarp(mask)`). Panics if `mask` leaves the calling lane out (PTX
/// leaves `bar.warp.sync` undefined then).
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    crate::warp::require_own_lane("sync_warp", mask);
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

/// Suspends the thread for about `ns` nanoseconds (`__nanosleep`; the GPU
/// caps one sleep at about a millisecond and may wake it early): for
/// spin-wait loops that back off. On the simulator the thread lets the other
/// threads of its block run instead, so a thread that sleeps while waiting
/// for another of its block waits for it there too.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    arch::nanosleep(ns)
}
