//! Execution contexts of simulated threads, switched symmetrically: a thread
//! that stops at a barrier hands its OS thread straight to the next thread
//! of the round, not back to a scheduler that then resumes the next.
//!
//! Why not a coroutine library's resume and yield: every thread of a block
//! runs the same code, so when one thread switches to another, the
//! processor's return predictions (made from the first thread's calls) are
//! right for the second, whose calls are at the same places. A switch
//! through a scheduler's code breaks them: measured on a block barrier, two
//! switches through a scheduler cost about three times one direct switch.
//!
//! A context is a stack pointer: [`switch`] pushes the registers the
//! platform's calling convention preserves (with the floating-point control
//! words), saves the stack pointer, loads the other context's, and pops
//! its registers. A new context ([`start`]) begins in [`entry`], which
//! runs the function `start` was given; that function never returns (it
//! ends by switching away for good). Stacks are `corosensei`'s (mapped with
//! a guard page below).
//!
//! The signal handlers stop a thread (a stack overflow, a stall) by making
//! it continue at [`switch_restore`] on the scheduler's saved stack
//! pointer: the scheduler's `switch` then returns as if the thread had
//! switched back, and the thread's stack is abandoned.

use corosensei::stack::{DefaultStack, Stack};
use std::cell::Cell;

/// A suspended context: its saved stack pointer.
pub(crate) type SavedContext = usize;

thread_local! {
    /// The function the next context started on this OS thread runs.
    static STARTING: Cell<Option<*const dyn Fn()>> = const { Cell::new(None) };
}

/// Starts a new context on the stack whose top is `stack_top`, running
/// `run`, and saves the running context in `*save`.
///
/// # Safety
/// As [`switch`] for `save`; `run` stays valid until it has started (at
/// once), the stack is not used by anything else while the context may run,
/// and `run` never returns (it switches away for good; were it to return,
/// the process would abort).
pub(crate) unsafe fn start(stack_top: usize, run: *const dyn Fn(), save: *mut SavedContext) {
    STARTING.with(|s| s.set(Some(run)));
    let top = stack_top & !15;
    // SAFETY: the frame lies in the stack's top bytes, which the caller
    // gives to this context (the stack is far larger than the frame); the
    // context built there has never run.
    unsafe {
        let context = arch::initial_frame(top);
        switch(save, context)
    }
}

/// Where a new context begins (the frame [`start`] built returns here):
/// runs the function it was given.
extern "C" fn entry() -> ! {
    let run = STARTING
        .with(|s| s.take())
        .expect("a context starts with a function to run");
    // SAFETY: the function outlives its start (`start`'s contract).
    unsafe { (*run)() };
    // It switches away for good instead (`start`'s contract).
    std::process::abort()
}

/// The bounds of a context's stack, for the signal handlers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StackBounds {
    /// The lowest address of the mapping: the guard page's.
    pub(crate) limit: usize,
    /// The top.
    pub(crate) base: usize,
}

impl StackBounds {
    pub(crate) fn of(stack: &DefaultStack) -> StackBounds {
        StackBounds {
            limit: stack.limit().get(),
            base: stack.base().get(),
        }
    }

    /// Whether `sp` is in the stack (its guard page included).
    pub(crate) fn holds(&self, sp: usize) -> bool {
        (self.limit..self.base).contains(&sp)
    }

    /// Whether `address` is in the guard page under the stack (`page`
    /// bytes from the bottom of the mapping).
    pub(crate) fn guard_page_holds(&self, address: usize, page: usize) -> bool {
        (self.limit..self.limit + page).contains(&address)
    }
}

/// Saves this context's registers and stack pointer in `*save`, and goes on
/// in the context `to`.
///
/// # Safety
/// `to` is a context saved by `switch` (or built by [`start`]) that
/// has not been resumed since, on this OS thread; `save` is valid for a
/// write. The context saved in `*save` is resumed at most once.
#[inline(always)]
pub(crate) unsafe fn switch(save: *mut SavedContext, to: SavedContext) {
    // SAFETY: forwarded.
    unsafe { arch::switch(save, to) }
}

/// The address where a stopped thread continues, on the scheduler's saved
/// stack pointer: the second half of [`switch`], which restores the
/// scheduler's registers and returns from its `switch`.
pub(crate) fn switch_restore() -> usize {
    arch::switch_restore as *const () as usize
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use std::arch::naked_asm;

    /// The frame of a new context under `top` (16-aligned): the registers
    /// `switch` pops (zero, with the control words of this thread), then
    /// `entry` as the return address, and a zero return address for
    /// `entry`'s own frame, which ends stack walks there.
    ///
    /// # Safety
    /// The 72 bytes under `top` are writable and unused.
    pub(super) unsafe fn initial_frame(top: usize) -> usize {
        let frame = (top - 72) as *mut u64;
        let (mut mxcsr, mut fpcw) = (0u32, 0u16);
        // SAFETY: stores the control registers into the locals.
        unsafe {
            std::arch::asm!(
                "stmxcsr [{m}]",
                "fnstcw [{f}]",
                m = in(reg) &mut mxcsr,
                f = in(reg) &mut fpcw,
                options(nostack, preserves_flags)
            )
        };
        let words: [u64; 9] = [
            u64::from(mxcsr) | (u64::from(fpcw) << 32),
            0, // r15
            0, // r14
            0, // r13
            0, // r12
            0, // rbx
            0, // rbp
            super::entry as *const () as usize as u64,
            0, // `start`'s return address: none
        ];
        for (i, word) in words.iter().enumerate() {
            // SAFETY: within the 72 bytes under `top` (the caller's contract).
            unsafe { frame.add(i).write(*word) };
        }
        frame as usize
    }

    /// See [`super::switch`]. The control words sit in one 8-byte slot
    /// (MXCSR in its low half, the x87 control word above), under the
    /// callee-saved registers of the System V ABI.
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn switch(_save: *mut usize, _to: usize) {
        naked_asm!(
            "push rbp",
            "push rbx",
            "push r12",
            "push r13",
            "push r14",
            "push r15",
            "sub rsp, 8",
            "stmxcsr [rsp]",
            "fnstcw [rsp + 4]",
            "mov [rdi], rsp",
            "mov rsp, rsi",
            "jmp {restore}",
            restore = sym switch_restore,
        )
    }

    /// The second half of [`switch`]: pops a saved context's registers and
    /// returns into it.
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn switch_restore() {
        naked_asm!(
            "ldmxcsr [rsp]",
            "fldcw [rsp + 4]",
            "add rsp, 8",
            "pop r15",
            "pop r14",
            "pop r13",
            "pop r12",
            "pop rbx",
            "pop rbp",
            "ret",
        )
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use std::arch::naked_asm;

    /// The frame of a new context under `top` (16-aligned): the registers
    /// `switch` restores (zero; FPCR is not preserved by AAPCS64), with
    /// `trampoline` as the link register `switch` returns to.
    ///
    /// # Safety
    /// The 176 bytes under `top` are writable and unused.
    pub(super) unsafe fn initial_frame(top: usize) -> usize {
        let frame = (top - 176) as *mut u64;
        for i in 0..22 {
            // SAFETY: within the 176 bytes under `top` (the caller's contract).
            unsafe { frame.add(i).write(0) };
        }
        // x30 (the link register) is the second word of the x29/x30 pair.
        // SAFETY: as above.
        unsafe { frame.add(11).write(trampoline as *const () as usize as u64) };
        frame as usize
    }

    /// Enters `entry` with a zero link register, which ends stack walks
    /// there (`switch` returned here through the link register).
    #[unsafe(naked)]
    unsafe extern "C" fn trampoline() {
        naked_asm!("mov x30, xzr", "b {entry}", entry = sym super::entry)
    }

    /// See [`super::switch`]: the callee-saved registers of AAPCS64
    /// (x19-x30 and the low halves of v8-v15).
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn switch(_save: *mut usize, _to: usize) {
        naked_asm!(
            "sub sp, sp, #176",
            "stp x19, x20, [sp, #0]",
            "stp x21, x22, [sp, #16]",
            "stp x23, x24, [sp, #32]",
            "stp x25, x26, [sp, #48]",
            "stp x27, x28, [sp, #64]",
            "stp x29, x30, [sp, #80]",
            "stp d8, d9, [sp, #96]",
            "stp d10, d11, [sp, #112]",
            "stp d12, d13, [sp, #128]",
            "stp d14, d15, [sp, #144]",
            "mov x2, sp",
            "str x2, [x0]",
            "mov sp, x1",
            "b {restore}",
            restore = sym switch_restore,
        )
    }

    /// The second half of [`switch`].
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn switch_restore() {
        naked_asm!(
            "ldp x19, x20, [sp, #0]",
            "ldp x21, x22, [sp, #16]",
            "ldp x23, x24, [sp, #32]",
            "ldp x25, x26, [sp, #48]",
            "ldp x27, x28, [sp, #64]",
            "ldp x29, x30, [sp, #80]",
            "ldp d8, d9, [sp, #96]",
            "ldp d10, d11, [sp, #112]",
            "ldp d12, d13, [sp, #128]",
            "ldp d14, d15, [sp, #144]",
            "add sp, sp, #176",
            "ret",
        )
    }
}
