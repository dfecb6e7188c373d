//! What the block scheduler knows of each simulated thread: where it waits,
//! what it yields, and its coroutine's type.

use super::super::signals::Finish;
use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

/// Where a suspended simulated thread waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ThreadState {
    Ready,
    /// Let the others run (after atomics): ready in the next round.
    Yielded,
    /// At barrier `id` (0: `sync_threads`, 1: the phase token's `sync`).
    AtBarrier(u32),
    AtWarp(u32),
    Done,
}

/// What a simulated thread yields to the scheduler.
#[derive(Clone, Copy, Debug)]
pub(super) enum Suspend {
    /// Lets other threads run (after some atomics); ready again at once.
    Yield,
    /// At barrier `id` (0: `sync_threads`, 1: the phase token's `sync`).
    Barrier(u32),
    Warp {
        mask: u32,
    },
}

pub(super) type SimCoroutine = Coroutine<(), Suspend, Finish, DefaultStack>;
