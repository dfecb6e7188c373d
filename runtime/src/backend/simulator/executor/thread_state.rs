//! What the block scheduler knows of each simulated thread, and of them all:
//! where they wait.

use crate::backend::simulator::context::SavedContext;
use std::cell::Cell;

/// What the scheduler keeps of one thread, together: a switch to it reads
/// its status, its stack and its saved context with one bounds check, from
/// one cache line (32 bytes, aligned).
#[repr(align(32))]
pub(super) struct ThreadSlot {
    /// Where it is.
    pub(super) status: Cell<ThreadState>,
    /// Its saved context while it is stopped.
    pub(super) context: Cell<SavedContext>,
    /// The top of the stack of the fiber that runs it, once started (0
    /// before).
    pub(super) stack: Cell<usize>,
}

impl ThreadSlot {
    /// A thread not started yet.
    pub(super) fn new() -> ThreadSlot {
        ThreadSlot {
            status: Cell::new(ThreadState::Ready),
            context: Cell::new(0),
            stack: Cell::new(0),
        }
    }

    /// Makes it a thread not started yet again (for the next block).
    pub(super) fn reset(&self) {
        self.status.set(ThreadState::Ready);
        self.context.set(0);
        self.stack.set(0);
    }
}

/// Where a simulated thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ThreadState {
    /// Runs in this round (or has not started yet).
    Ready,
    /// Let the others run (after atomics): ready in the next round.
    Yielded,
    /// At barrier `id` (0: `sync_threads`, 1: the phase token's `sync`).
    AtBarrier(u32),
    AtWarp(u32),
    /// At `activemask()`: released with the other lanes of its warp there.
    AtActiveMask,
    Done,
}

/// How many threads of the block wait where, or have finished.
#[derive(Clone, Copy, Default)]
pub(super) struct Waiting {
    /// At barrier 0 (`sync_threads`), 1 (the phase token's `sync`), 2
    /// (a block vote, `VOTE_BARRIER`), 3 (inside a block collective,
    /// `COLLECTIVE_BARRIER`), 4 (a grid sync, `GRID_BARRIER`) and 5 (a
    /// `cp.async` ring's wait, `PIPELINE_BARRIER`) and 6 (the
    /// initialisation of `mbarrier`s, `MBARRIER_BARRIER`) and 7 (a cluster
    /// sync, `CLUSTER_BARRIER`).
    pub(super) barrier: [usize; 8],
    /// At `activemask()`.
    pub(super) active_mask: usize,
    pub(super) warp: usize,
    pub(super) done: usize,
}
