//! Stopping a simulated thread that cannot go on: a stack overflow, or a
//! stall that the watchdog found in a loop without device calls.
//!
//! Both arrive as signals on the OS thread that runs the simulated thread's
//! context: `SIGSEGV` (or `SIGBUS`) when it touches the guard page under its
//! stack, `SIGURG` when the watchdog interrupts it. The handlers rewrite the
//! interrupted registers so that, once the handler returns, the OS thread
//! goes on in the block's scheduler, as if the thread had switched back to
//! it ([`super::context`]: `resume_point` on the scheduler's
//! saved stack pointer), with the reason in [`BlockSignals::interrupted`];
//! the scheduler fails the launch with a message naming the kernel, block
//! and thread.
//!
//! Soundness: the interrupted frames are abandoned without running their
//! destructors, as if the thread had stopped there forever; the launch then
//! fails. That is only done while the thread runs kernel code
//! ([`BlockSignals::kernel_code`]), not while it panics and not inside the simulator's own
//! services ([`BlockSignals::runtime_code`]), so no lock the abandoned frames could hold
//! (the allocator's, a `RefCell` borrow of the executor) stays held: kernel
//! code compiles for the GPU too, where there is no allocator or lock to take.
//! (A spin lock the kernel itself took stays taken; a later launch waiting
//! for it makes no progress and is reported in turn.)
//! Memory the kernel was writing holds old or new bytes of each store, which
//! are valid for every `DeviceCopy` type (integers, floats and `bool`, which
//! is stored whole). Elsewhere:
//!
//! - an interrupt that finds the thread outside kernel code does nothing; the
//!   watchdog sends another later, or the scheduler sees the stall itself;
//! - a stack overflow outside kernel code cannot be stopped safely: the
//!   handler prints what happened and how to raise the stack, then aborts.
//!
//! Faults these handlers do not own (an address outside the running
//! context's guard page, a thread that runs no context) go to the handler
//! that was installed before (Rust's own stack-overflow handler, typically),
//! or to the default action. A `SIGURG` that the watchdog did not send goes to
//! the previous `SIGURG` handler, if any (its default action is to ignore it).
//!
//! Supported on Linux on x86_64 and aarch64; elsewhere no handler is
//! installed, a stack overflow ends the process and a thread looping without
//! device calls is reported by the watchdog's scheduler check only if it ever
//! hands control back.

use super::context::{SavedContext, StackBounds};
use super::worker::Worker;
use std::cell::Cell;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{compiler_fence, AtomicUsize};

/// Why a signal stopped a simulated thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interrupt {
    /// It touched the guard page under its stack.
    StackOverflow,
    /// The watchdog found its block stalled.
    Stalled,
}

/// What the signal handlers of an OS thread look at while it runs a block
/// ([`BlockSignals::watch`]). The executor writes it at each switch between
/// the block's contexts: plain memory, cheaper than thread-locals.
pub(crate) struct BlockSignals {
    /// The watchdog's record of this OS thread (kept alive by the executor).
    worker: *const Worker,
    /// For the message of an overflow that cannot be stopped.
    kernel: &'static str,
    /// Likewise.
    stack_bytes: usize,
    /// The top of the stack of the simulated thread's context running now
    /// (0 while the scheduler runs).
    running: Cell<usize>,
    /// The size of the block's stacks, guard page included (all alike).
    stack_span: Cell<usize>,
    /// Whether that context runs kernel code (see the module docs).
    kernel_code: Cell<bool>,
    /// The scheduler's saved context, where a stopped thread goes on.
    scheduler: Cell<SavedContext>,
    /// Why a signal stopped the running thread, for the scheduler.
    interrupted: Cell<Option<Interrupt>>,
}

thread_local! {
    /// The block this OS thread runs; null when none.
    static BLOCK: Cell<*const BlockSignals> = const { Cell::new(std::ptr::null()) };
    /// This OS thread's worker record, for the `SIGURG` handler; null when none.
    static WORKER: Cell<*const Worker> = const { Cell::new(std::ptr::null()) };
}

impl BlockSignals {
    pub(crate) fn new(worker: &Worker, kernel: &'static str, stack_bytes: usize) -> BlockSignals {
        BlockSignals {
            worker,
            kernel,
            stack_bytes,
            running: Cell::new(0),
            stack_span: Cell::new(0),
            kernel_code: Cell::new(false),
            scheduler: Cell::new(0),
            interrupted: Cell::new(None),
        }
    }

    /// Runs `f` (the block) with `self` as what this OS thread's signal
    /// handlers look at.
    pub(crate) fn watch<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Clear;
        impl Drop for Clear {
            fn drop(&mut self) {
                BLOCK.with(|b| b.set(std::ptr::null()));
            }
        }
        BLOCK.with(|b| b.set(self));
        let _clear = Clear;
        f()
    }

    /// The context about to run has the stack whose top is `stack_top` (0:
    /// the scheduler). Set before each switch.
    #[inline(always)]
    pub(crate) fn running(&self, stack_top: usize) {
        self.running.set(stack_top);
        compiler_fence(SeqCst);
    }

    /// Notes the size of the block's stacks (`stack` is one of them).
    pub(crate) fn stacks_like(&self, stack: StackBounds) {
        self.stack_span.set(stack.base - stack.limit);
    }

    /// The stack of the context running now, if a thread's.
    pub(crate) fn running_stack(&self) -> Option<StackBounds> {
        let base = self.running.get();
        (base != 0).then(|| StackBounds {
            limit: base - self.stack_span.get(),
            base,
        })
    }

    /// Where the scheduler's context is saved (its `switch` writes it).
    pub(crate) fn scheduler(&self) -> *mut SavedContext {
        self.scheduler.as_ptr()
    }

    /// Why a signal stopped the last running thread, if one did (taken).
    pub(crate) fn take_interrupt(&self) -> Option<Interrupt> {
        self.interrupted.take()
    }

    /// Runs the kernel body `f` (on the coroutine's stack): a signal may stop it.
    #[inline]
    pub(crate) fn kernel_code<R>(&self, f: impl FnOnce() -> R) -> R {
        self.kernel_code.set(true);
        compiler_fence(SeqCst);
        let result = f();
        compiler_fence(SeqCst);
        self.kernel_code.set(false);
        result
    }

    /// Runs `f`, a service of the simulator called from kernel code: no
    /// signal stops the thread inside it.
    #[inline]
    pub(crate) fn runtime_code<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.kernel_code.replace(false);
        compiler_fence(SeqCst);
        let result = f();
        compiler_fence(SeqCst);
        self.kernel_code.set(was);
        result
    }
}

/// Records this OS thread's worker for the `SIGURG` handler (`None` when the
/// record is going away).
pub(crate) fn set_worker(worker: Option<&Worker>) {
    WORKER.with(|w| w.set(worker.map_or(std::ptr::null(), |w| w as *const Worker)));
}

/// The page size (the size of corosensei's guard page).
fn page_size() -> usize {
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Relaxed) {
        0 => {
            // SAFETY: `sysconf` has no preconditions (and is async-signal-safe).
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            PAGE.store(page, Relaxed);
            page
        }
        page => page,
    }
}

mod alternate_stack;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod handlers;

pub(crate) use alternate_stack::ensure_alternate_stack;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) use handlers::{install, interrupt};

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod unsupported {
    /// No handlers on this platform.
    pub(crate) fn install() -> bool {
        false
    }
    /// Nothing can interrupt a thread on this platform.
    pub(crate) fn interrupt(_thread: libc::pthread_t) {}
}
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) use unsupported::{install, interrupt};
