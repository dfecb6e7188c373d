//! What the block scheduler knows of each simulated thread, and of them all:
//! where they wait.

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
    /// initialisation of `mbarrier`s, `MBARRIER_BARRIER`).
    pub(super) barrier: [usize; 7],
    /// At `activemask()`.
    pub(super) active_mask: usize,
    pub(super) warp: usize,
    pub(super) done: usize,
}
