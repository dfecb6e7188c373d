//! The stacks of simulated threads, reused from one block to the next.

use super::super::settings::SIM_STACK_BYTES_ENV;
use corosensei::stack::DefaultStack;
use std::cell::RefCell;

thread_local! {
    /// Stacks of finished coroutines, for the next ones on this OS thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// A stack of `bytes` (above a guard page), reused when one is free.
pub(super) fn take_stack(bytes: usize) -> Result<DefaultStack, String> {
    match STACKS.with(|s| s.borrow_mut().pop()) {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(bytes).map_err(|e| {
            format!("cannot allocate a simulated thread's stack of {bytes} bytes ({SIM_STACK_BYTES_ENV}): {e}")
        }),
    }
}

/// Keeps a block's stacks for the next ones on this OS thread.
pub(super) fn give_stacks(stacks: Vec<DefaultStack>) {
    STACKS.with(|s| s.borrow_mut().extend(stacks));
}
