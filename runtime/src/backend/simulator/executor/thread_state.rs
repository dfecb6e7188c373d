//! What the block scheduler knows of each simulated thread: where it waits.

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
