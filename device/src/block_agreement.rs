//! A collective that checks every thread's call against thread 0's: for the
//! types whose soundness rests on every thread of the block making them the
//! same way ([`CpAsyncRing`](crate::cp_async::CpAsyncRing)'s construction,
//! [`MBarriers::init`](crate::mbarrier::MBarriers::init)).
//!
//! On the caller's own barrier `id` (which nothing else uses):
//!
//! 1. thread 0 writes a record of its call (`publish`);
//! 2. the barrier, which also tells whether thread 0 reached it (on a GPU a
//!    thread that exited may count as arrived): if not, the record would be
//!    stale, and the caller panics;
//! 3. every thread reads thread 0's record and compares it with its own;
//! 4. the barrier again, as a vote of whether any thread's call differs.
//!    Every thread's read comes before it, so thread 0 may write the record
//!    again after it.
//!
//! The vote's answer is the same in every thread, so the branch to the
//! report is uniform: the compiler keeps the warp converged after it. A
//! branch on each thread's own comparison would not (`ptxas` then guards
//! every later barrier of the kernel with a divergence check and moves its
//! uniform values to vector registers: 7 more registers and 30 more
//! instructions in the mma.sync GEMM's k-loop; `benches/NOTES.md`).
//!
//! When some call differs, every thread goes to the caller's report: one
//! whose call differs panics naming both; one whose call is thread 0's
//! first waits at the barrier ([`wait_for_a_differing_thread`]), for a
//! differing thread's panic to end the launch (a trap on the GPU; on the
//! simulator, the block's first panic is its report, so it names the
//! thread that differs).

use crate::arch;

/// Steps 1 to 4 of the [module](self) on barrier `id`: `publish` runs in
/// thread 0 and writes its record of `mine`; `read` reads that record back.
/// Every thread calls `thread_0_absent` when thread 0 did not reach the
/// barrier, and `differs` with thread 0's record when some thread's call
/// differs from it: both are to panic, and `differs` is to call
/// [`wait_for_a_differing_thread`] first (in its cold function: a branch on
/// each thread's own comparison here would be divergent). Each is called on
/// a branch of its own whose condition is the same in every thread (a
/// result merged from the two branches and tested after them would not be
/// uniform to ptxas).
#[inline(always)]
pub(crate) fn agree<T: Copy + PartialEq>(
    id: u32,
    mine: T,
    publish: impl FnOnce(),
    read: impl FnOnce() -> T,
    thread_0_absent: impl FnOnce(),
    differs: impl FnOnce(T),
) {
    if crate::thread_rank() == 0 {
        publish();
    }
    if !arch::barrier_thread_0_reached(id) {
        thread_0_absent()
    }
    let theirs = read();
    if arch::barrier_any(id, theirs != mine) {
        differs(theirs)
    }
}

/// In the report of a call that differs, before the panic: a thread
/// whose call is thread 0's (`agrees`) waits at barrier `id`, which the
/// differing threads never reach, so that one of theirs, naming the call
/// that differs, is the launch's report.
#[inline(always)]
pub(crate) fn wait_for_a_differing_thread(id: u32, agrees: bool) {
    if agrees {
        arch::barrier(id);
    }
}
