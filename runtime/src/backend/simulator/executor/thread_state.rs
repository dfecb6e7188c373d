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
    Done,
}

/// How many threads of the block wait where, or have finished.
#[derive(Clone, Copy, Default)]
pub(super) struct Waiting {
    /// At barrier 0 (`sync_threads`) and 1 (the phase token's `sync`).
    pub(super) barrier: [usize; 2],
    pub(super) warp: usize,
    pub(super) done: usize,
}
