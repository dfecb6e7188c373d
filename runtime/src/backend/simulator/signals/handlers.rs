//! The signal handlers, on Linux on x86_64 and aarch64.

use super::super::context::{resume_point, StackBounds};
use super::{page_size, BlockSignals, Interrupt, BLOCK, WORKER};
use libc::{c_int, c_void, siginfo_t};
use std::cell::Cell;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::OnceLock;

/// The handlers that were installed before ours.
static PREVIOUS_SEGV: OnceLock<libc::sigaction> = OnceLock::new();
static PREVIOUS_BUS: OnceLock<libc::sigaction> = OnceLock::new();
static PREVIOUS_URG: OnceLock<libc::sigaction> = OnceLock::new();

/// Installs the handlers, once per process; whether they are installed.
pub(crate) fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // Asked once here, not first in a handler.
        page_size();
        // SAFETY: the handlers are `extern "C"` functions of the
        // `SA_SIGINFO` signature; the previous actions are saved first.
        unsafe {
            install_one(libc::SIGSEGV, on_fault, &PREVIOUS_SEGV)
                && install_one(libc::SIGBUS, on_fault, &PREVIOUS_BUS)
                && install_one(libc::SIGURG, on_interrupt, &PREVIOUS_URG)
        }
    })
}

type Handler = unsafe extern "C" fn(c_int, *mut siginfo_t, *mut c_void);

/// # Safety
/// `handler` is safe to run as a handler of `signal`.
unsafe fn install_one(
    signal: c_int,
    handler: Handler,
    previous: &OnceLock<libc::sigaction>,
) -> bool {
    // SAFETY: plain data, valid when zeroed; `sigaction` reads and writes
    // the structures passed.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
            return false;
        }
        previous.get_or_init(|| old);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as usize;
        // On the alternate signal stack (a stack overflow leaves no room
        // on the faulting one), with every other signal blocked, and system
        // calls it interrupts restarted.
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigfillset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut()) == 0
    }
}

/// Asks the OS thread `thread` to stop its simulated thread.
pub(crate) fn interrupt(thread: libc::pthread_t) {
    if install() {
        // SAFETY: the caller holds the thread's worker record locked with
        // the thread alive (see `Worker::stall`).
        unsafe { libc::pthread_kill(thread, libc::SIGURG) };
    }
}

/// The block this OS thread runs and the stack of the context running in
/// it, if any (for the handler that asks, while it runs).
fn running<'a>() -> Option<(&'a BlockSignals, StackBounds)> {
    // SAFETY: a non-null pointer was set by `BlockSignals::watch`, whose
    // `self` outlives the call that set it, and is reset when it ends.
    let block = unsafe { BLOCK.with(Cell::get).as_ref() }?;
    Some((block, block.running_stack()?))
}

/// `SIGSEGV`, `SIGBUS`: a stack overflow of the running coroutine, or
/// someone else's fault.
unsafe extern "C" fn on_fault(signal: c_int, info: *mut siginfo_t, context: *mut c_void) {
    if let Some((block, stack)) = running() {
        // SAFETY: the kernel passes a valid `siginfo_t` to `SA_SIGINFO`
        // handlers; `si_addr` is the fault's address for these signals.
        let address = unsafe { (*info).si_addr() } as usize;
        if stack.guard_page_holds(address, page_size()) {
            // SAFETY: `context` is the interrupted thread's context.
            if unsafe { stoppable(block, &stack, context) } {
                // SAFETY: checked by `stoppable`.
                unsafe { stop(block, context, Interrupt::StackOverflow) };
                return;
            }
            overflow_outside_kernel_code(block);
        }
    }
    // SAFETY: forwarded as received.
    unsafe { chain(signal, info, context) }
}

/// `SIGURG`: the watchdog's request to stop a stalled thread, or someone
/// else's signal.
unsafe extern "C" fn on_interrupt(signal: c_int, info: *mut siginfo_t, context: *mut c_void) {
    let worker = WORKER.with(Cell::get);
    // SAFETY: a non-null record is kept alive by the thread's registration,
    // which clears it before it goes.
    let ours = !worker.is_null() && unsafe { &*worker }.interrupt_requested.swap(false, Relaxed);
    if !ours {
        // SAFETY: forwarded as received.
        return unsafe { chain(signal, info, context) };
    }
    let Some((block, stack)) = running() else {
        return;
    };
    // SAFETY: `block.worker` is kept alive by the executor while the block runs.
    let stalled = unsafe { &*block.worker }.stalled();
    // SAFETY: `context` is the interrupted thread's context.
    if stalled && unsafe { stoppable(block, &stack, context) } {
        // SAFETY: checked by `stoppable`.
        unsafe { stop(block, context, Interrupt::Stalled) };
    }
}

/// Whether the interrupted thread runs kernel code of the running context,
/// not panicking, on that context's stack.
///
/// # Safety
/// `context` is the `ucontext_t` a handler received.
unsafe fn stoppable(block: &BlockSignals, stack: &StackBounds, context: *mut c_void) -> bool {
    block.kernel_code.get()
        && !std::thread::panicking()
        // SAFETY: forwarded.
        && stack.holds(unsafe { stack_pointer(context) })
}

/// Makes the OS thread go on in the block's scheduler once the handler
/// returns, with `why` for it: the interrupted context is abandoned.
///
/// # Safety
/// `stoppable` holds for the interrupted context `context`.
unsafe fn stop(block: &BlockSignals, context: *mut c_void, why: Interrupt) {
    // What runs next is the scheduler, not kernel code: a second signal
    // leaves it alone.
    block.kernel_code.set(false);
    block.running.set(0);
    block.interrupted.set(Some(why));
    // SAFETY: the thread runs kernel code on its own stack (checked by
    // `stoppable`), which keeps no lock or allocation in progress (see the
    // module docs); the scheduler's context was saved by its `switch` into
    // the thread, and `resume_point` resumes it as that `switch` would.
    unsafe { resume_at(context, resume_point(), block.scheduler.get()) };
}

#[cfg(target_arch = "x86_64")]
unsafe fn stack_pointer(context: *mut c_void) -> usize {
    // SAFETY: the caller passes the handler's `ucontext_t`.
    unsafe {
        (*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RSP as usize] as usize
    }
}

/// Makes the interrupted thread go on at `pc` with the stack pointer `sp`.
///
/// # Safety
/// `context` is the handler's `ucontext_t`.
#[cfg(target_arch = "x86_64")]
unsafe fn resume_at(context: *mut c_void, pc: usize, sp: usize) {
    // SAFETY: the caller passes the handler's `ucontext_t`, which the
    // kernel restores when the handler returns.
    let gregs = unsafe { &mut (*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    gregs[libc::REG_RIP as usize] = pc as i64;
    gregs[libc::REG_RSP as usize] = sp as i64;
}

#[cfg(target_arch = "aarch64")]
unsafe fn stack_pointer(context: *mut c_void) -> usize {
    // SAFETY: the caller passes the handler's `ucontext_t`.
    unsafe { (*context.cast::<libc::ucontext_t>()).uc_mcontext.sp as usize }
}

/// As for x86_64.
///
/// # Safety
/// `context` is the handler's `ucontext_t`.
#[cfg(target_arch = "aarch64")]
unsafe fn resume_at(context: *mut c_void, pc: usize, sp: usize) {
    // SAFETY: as for x86_64.
    let mcontext = unsafe { &mut (*context.cast::<libc::ucontext_t>()).uc_mcontext };
    mcontext.pc = pc as u64;
    mcontext.sp = sp as u64;
}

/// Passes a signal that is not ours to the handler installed before.
///
/// # Safety
/// The arguments are those the handler received.
unsafe fn chain(signal: c_int, info: *mut siginfo_t, context: *mut c_void) {
    let previous = match signal {
        libc::SIGSEGV => PREVIOUS_SEGV.get(),
        libc::SIGBUS => PREVIOUS_BUS.get(),
        _ => PREVIOUS_URG.get(),
    };
    let action = previous.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    let takes_info = previous.is_some_and(|p| p.sa_flags & libc::SA_SIGINFO != 0);
    if action == libc::SIG_DFL || action == libc::SIG_IGN {
        // `SIGURG`'s default action is to ignore it. For a fault, the default
        // action (an ignored fault gets it too, as the kernel does): restore
        // it and return; the faulting instruction faults again and the
        // process ends, as it would have without us. A fault signal sent by
        // `kill` is raised again.
        if signal != libc::SIGURG {
            // SAFETY: plain data, valid when zeroed; `sigaction` and `raise`
            // may be called in a handler.
            unsafe {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
                if (*info).si_code <= 0 {
                    libc::raise(signal);
                }
            }
        }
    } else if takes_info {
        // SAFETY: an `SA_SIGINFO` handler has this signature.
        let handler: Handler = unsafe { std::mem::transmute(action) };
        // SAFETY: forwarded as received.
        unsafe { handler(signal, info, context) }
    } else {
        // SAFETY: a handler without `SA_SIGINFO` has this signature.
        let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(action) };
        handler(signal)
    }
}

/// A stack overflow outside kernel code: there is no safe way on, so the
/// process ends, saying why (with `write`, which a handler may call).
fn overflow_outside_kernel_code(running: &BlockSignals) -> ! {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = running.stack_bytes;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for part in [
        &b"gpu-runtime: a simulated thread of kernel `"[..],
        running.kernel.as_bytes(),
        b"` overflowed its stack of ",
        &digits[at..],
        b" bytes outside kernel code (in a panic or in the simulator), where it cannot be stopped safely; set GPU_SIM_STACK_BYTES to a larger size\n",
    ] {
        // SAFETY: writes initialised bytes to standard error.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
    // SAFETY: `abort` has no preconditions.
    unsafe { libc::abort() }
}
