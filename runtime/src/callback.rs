//! Whether the calling thread is running a stream callback, where CUDA
//! forbids CUDA calls: runtime calls check it and fail with
//! [`Error::CalledFromCallback`](crate::Error::CalledFromCallback), and
//! releases of driver resources are deferred ([`crate::deferred`]).

use std::cell::Cell;

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is inside a stream callback.
pub(crate) fn in_callback() -> bool {
    IN_CALLBACK.with(Cell::get)
}

/// Runs `f` marked as a stream callback (the mark is removed even if `f` panics).
pub(crate) fn while_in_callback<R>(f: impl FnOnce() -> R) -> R {
    struct Unmark;
    impl Drop for Unmark {
        fn drop(&mut self) {
            IN_CALLBACK.with(|c| c.set(false));
        }
    }
    IN_CALLBACK.with(|c| c.set(true));
    let _unmark = Unmark;
    f()
}
