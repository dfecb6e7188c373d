//! The simulated device bound on each host thread: what the default streams
//! and device-wide calls of that thread act on (CUDA's current context).

use std::cell::Cell;

thread_local! {
    /// The simulated device this thread last bound.
    static BOUND: Cell<usize> = const { Cell::new(0) };
}

/// The device bound on the calling thread.
pub(crate) fn bound_device() -> usize {
    BOUND.with(Cell::get)
}

/// Binds `ordinal` on the calling thread.
pub(crate) fn bind(ordinal: usize) {
    BOUND.with(|b| b.set(ordinal));
}
