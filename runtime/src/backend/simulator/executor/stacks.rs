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

/// How far below its stack's top the `index`th fiber of a block state
/// starts its frames: a different cache line of the page for each of 64
/// fibers in turn. A stack's top is page-aligned, so unstaggered the stopped
/// threads' hot lines (a few from the saved stack pointer) would all share
/// the same few line offsets of their pages, and so the same few sets of
/// every physically indexed cache: a block of 256 such threads overflows
/// those sets of a 512 KiB, 8-way second-level cache, which holds them
/// easily spread (`benches/NOTES.md`).
pub(super) fn stagger(index: usize) -> usize {
    (index % 64) * 64
}

/// Keeps a block's stacks for the next ones on this OS thread.
pub(super) fn give_stacks(stacks: Vec<DefaultStack>) {
    STACKS.with(|s| s.borrow_mut().extend(stacks));
}
