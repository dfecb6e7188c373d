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
//! A context is a stack pointer. On x86_64 the word it points at is where
//! the context goes on (its resume address): a switch saves what its own
//! code needs, pushes its resume address, saves the stack pointer, loads
//! the other context's, pops that context's resume address and jumps to
//! it; the code there restores what its own save pushed. Two saves share
//! that one resume protocol:
//!
//! - [`switch`] pushes the registers the platform's calling convention
//!   preserves and the floating-point control words (MXCSR, the x87 control
//!   word): for the scheduler, which a signal handler resumes from a thread
//!   interrupted anywhere in kernel code, and for a new context;
//! - [`switch_in_block`], between the threads of a block, is inline: the
//!   compiler saves only the registers live across it (once, in the
//!   caller's prologue, rather than there and again in the switch), and the
//!   control words stay as they are (no Rust code changes them, so every
//!   thread of a block runs with those its fiber started with).
//!
//! On aarch64 every switch is the whole one, and a context's stack pointer
//! points at its saved registers.
//!
//! A new context ([`start`]) begins in [`entry`], which runs the function
//! `start` was given; that function never returns (it ends by switching
//! away for good). Stacks are `corosensei`'s (mapped with a guard page
//! below).
//!
//! The signal handlers stop a thread (a stack overflow, a stall) by making
//! it continue at [`resume_point`] on the scheduler's saved stack pointer:
//! the scheduler's `switch` then returns as if the thread had switched back
//! to it, and the thread's stack is abandoned.

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
/// in the context `to`: every register the calling convention preserves,
/// and the floating-point control words.
///
/// # Safety
/// `to` is a context saved by `switch` or [`switch_in_block`] (or built by
/// [`start`]) that has not been resumed since, on this OS thread; `save` is
/// valid for a write. The context saved in `*save` is resumed at most once.
#[inline(always)]
pub(crate) unsafe fn switch(save: *mut SavedContext, to: SavedContext) {
    // SAFETY: forwarded.
    unsafe { arch::switch(save, to) }
}

/// As [`switch`], for a switch between two threads of a block: saves only
/// what the caller keeps live across it (the compiler saves the registers
/// it needs) and leaves the floating-point control words as they are.
///
/// # Safety
/// As [`switch`].
#[inline(always)]
pub(crate) unsafe fn switch_in_block(save: *mut SavedContext, to: SavedContext) {
    // SAFETY: forwarded.
    unsafe { arch::switch_in_block(save, to) }
}

/// The stack lines above a saved context that resuming it reads: the
/// registers its switch saved and the frames of the code it returns to (the
/// barrier's and the kernel's), about 5.5 cache lines measured
/// (`benches/NOTES.md`): 384 bytes from the saved stack pointer, which seven
/// lines from the one that holds it cover wherever it lies in its line.
const RESUME_LINES: usize = 7;

/// Asks the processor to load the stack lines resuming the context saved
/// at `saved` will read. A block's threads run in turn, and their stack
/// lines together pass the first-level cache, so each resume would wait for
/// them; loaded while the thread before it runs, they are there when it
/// resumes. Seven prefetches, unrolled: a loop bounded by the stack's top
/// cost 40 instructions a switch, for lines that never lie above the top
/// (a context's saved registers and return addresses alone take more than
/// the 64 bytes a line may reach past it, and a prefetch never faults).
#[inline(always)]
pub(crate) fn prefetch_resume(saved: SavedContext) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = saved & !63;
        for line in 0..RESUME_LINES {
            // SAFETY: a prefetch is a hint: it reads nothing the program
            // sees and never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((first + line * 64) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = saved;
}

/// The address where a stopped thread continues, on the scheduler's saved
/// stack pointer: the resume half of [`switch`], which restores the
/// scheduler's registers and returns from its `switch`.
pub(crate) fn resume_point() -> usize {
    arch::resume as *const () as usize
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use std::arch::{asm, naked_asm};

    /// The frame of a new context under `top` (16-aligned): the resume
    /// address of [`switch`]'s frames, the registers its restore pops (zero,
    /// with the control words of this thread), then `entry` as the return
    /// address, and a zero return address for `entry`'s own frame, which
    /// ends stack walks there.
    ///
    /// # Safety
    /// The 80 bytes under `top` are writable and unused.
    pub(super) unsafe fn initial_frame(top: usize) -> usize {
        let frame = (top - 80) as *mut u64;
        let (mut mxcsr, mut fpcw) = (0u32, 0u16);
        // SAFETY: stores the control registers into the locals.
        unsafe {
            asm!(
                "stmxcsr [{m}]",
                "fnstcw [{f}]",
                m = in(reg) &mut mxcsr,
                f = in(reg) &mut fpcw,
                options(nostack, preserves_flags)
            )
        };
        let words: [u64; 10] = [
            switch_restore as *const () as usize as u64,
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
            // SAFETY: within the 80 bytes under `top` (the caller's contract).
            unsafe { frame.add(i).write(*word) };
        }
        frame as usize
    }

    /// See [`super::switch`]. The control words sit in one 8-byte slot
    /// (MXCSR in its low half, the x87 control word above), under the
    /// callee-saved registers of the System V ABI, and the resume address
    /// ([`switch_restore`]) under them.
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
            "lea rax, [rip + {restore}]",
            "push rax",
            "mov [rdi], rsp",
            "mov rsp, rsi",
            "pop rax",
            "jmp rax",
            restore = sym switch_restore,
        )
    }

    /// The resume half of [`switch`] (its frame's resume address): pops
    /// the saved registers and returns into the context.
    #[unsafe(naked)]
    unsafe extern "C" fn switch_restore() {
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

    /// Resumes the context whose stack pointer is in `rsp`: pops its resume
    /// address and jumps there (the signal handlers' way into the
    /// scheduler).
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn resume() {
        naked_asm!("pop rax", "jmp rax")
    }

    /// See [`super::switch_in_block`]. `rbx` and `rbp` cannot be named as
    /// clobbers (LLVM reserves them), so the switch pushes them under its
    /// resume address (the local label `2`) and pops them there; every
    /// other register is declared clobbered, so the compiler keeps across
    /// it only what its caller needs, saved as it saves any register
    /// around a call. The resume is a `jmp`, not a `ret`: the threads of a
    /// block resume at the same place, which the indirect branch predictor
    /// learns, where a `ret` would miss the return stack's prediction.
    #[inline(always)]
    pub(super) unsafe fn switch_in_block(save: *mut usize, to: usize) {
        // SAFETY: the caller's contract: `to` is a saved context of this OS
        // thread, resumed once (its resume address on top of its stack),
        // and `save` is writable. This context's stack pointer is back
        // where it was when the switch resumes it (the label pops what the
        // switch pushed), and no register holds a value across it but
        // `rbx` and `rbp`, which it restores.
        unsafe {
            asm!(
                "push rbp",
                "push rbx",
                "lea rax, [rip + 2f]",
                "push rax",
                "mov [rdi], rsp",
                "mov rsp, rsi",
                "pop rax",
                "jmp rax",
                "2:",
                "pop rbx",
                "pop rbp",
                in("rdi") save,
                in("rsi") to,
                out("r12") _,
                out("r13") _,
                out("r14") _,
                out("r15") _,
                clobber_abi("C"),
            )
        }
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
            restore = sym resume,
        )
    }

    /// See [`super::switch_in_block`]: on aarch64, the whole [`switch`]
    /// (not measured there; the x86_64 form is the one tuned).
    #[inline(always)]
    pub(super) unsafe fn switch_in_block(save: *mut usize, to: usize) {
        // SAFETY: forwarded (the same contract).
        unsafe { switch(save, to) }
    }

    /// The second half of [`switch`] (where [`super::resume_point`] goes
    /// on: a context's stack pointer points at its saved registers).
    #[unsafe(naked)]
    pub(super) unsafe extern "C" fn resume() {
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

#[cfg(test)]
mod tests {
    use super::{start, switch, switch_in_block, SavedContext};
    use corosensei::stack::{DefaultStack, Stack};
    use std::cell::Cell;

    /// The values one side computes between its switches: integers and
    /// floats, enough of each that some live in registers across a switch.
    fn step(ints: &mut [u64; 8], floats: &mut [f64; 4], round: u64) {
        for (i, a) in ints.iter_mut().enumerate() {
            *a = a
                .wrapping_mul(6364136223846793005)
                .wrapping_add(round + i as u64);
        }
        for (i, f) in floats.iter_mut().enumerate() {
            *f = *f * 0.5 + (round as f64) * (i as f64 + 1.0);
        }
    }

    fn digest(ints: &[u64; 8], floats: &[f64; 4]) -> u64 {
        ints.iter().fold(0u64, |d, &a| d.rotate_left(7) ^ a)
            ^ floats
                .iter()
                .fold(0u64, |d, f| d.rotate_left(11) ^ f.to_bits())
    }

    const ROUNDS: u64 = 200;

    /// The registers a switch keeps itself, not the compiler (`rbx` and
    /// `rbp` on x86_64, which no `asm!` may name as clobbered).
    #[cfg(target_arch = "x86_64")]
    fn kept_registers() -> [usize; 2] {
        let (rbx, rbp): (usize, usize);
        // SAFETY: reads two registers into outputs.
        unsafe {
            std::arch::asm!(
                "mov {0}, rbx",
                "mov {1}, rbp",
                out(reg) rbx,
                out(reg) rbp,
                options(nomem, nostack, preserves_flags)
            )
        };
        [rbx, rbp]
    }

    /// None elsewhere (the whole switch saves every register there).
    #[cfg(not(target_arch = "x86_64"))]
    fn kept_registers() -> [usize; 2] {
        [0, 0]
    }

    /// What each side computes, without switches.
    fn expected(seed: u64) -> u64 {
        let (mut ints, mut floats) = ([seed; 8], [seed as f64; 4]);
        for round in 0..ROUNDS {
            step(&mut ints, &mut floats, round);
        }
        digest(&ints, &floats)
    }

    /// A context that overwrites every general register (the stack pointer
    /// aside) and resumes the context its switch saved: the switch's `save`
    /// is still in `rdi` (both switches leave it there).
    #[cfg(target_arch = "x86_64")]
    #[unsafe(naked)]
    unsafe extern "C" fn overwrite_registers_and_resume() {
        std::arch::naked_asm!(
            "mov rax, 0x1111",
            "mov rbx, rax",
            "mov rbp, rax",
            "mov rcx, rax",
            "mov rdx, rax",
            "mov rsi, rax",
            "mov r8, rax",
            "mov r9, rax",
            "mov r10, rax",
            "mov r11, rax",
            "mov r12, rax",
            "mov r13, rax",
            "mov r14, rax",
            "mov r15, rax",
            "mov rsp, [rdi]",
            "pop rax",
            "jmp rax",
        )
    }

    /// Both switches into a context that overwrites every register: `rbx`
    /// and `rbp` (which the switches keep themselves) and the values the
    /// caller keeps live come back.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_switch_keeps_what_the_other_context_overwrites() {
        for whole in [false, true] {
            let (mut ints, mut floats) = ([3u64; 8], [3.0f64; 4]);
            for round in 0..ROUNDS {
                step(&mut ints, &mut floats, round);
                // A context: its resume address on top of its stack.
                let other = [overwrite_registers_and_resume as *const () as usize, 0];
                let mut saved: SavedContext = 0;
                let before = kept_registers();
                // SAFETY: `other` is a context as a switch saves one (its
                // resume address on top), resumed once; it resumes `saved`
                // at once, on this stack.
                unsafe {
                    if whole {
                        switch(&mut saved, other.as_ptr() as usize)
                    } else {
                        switch_in_block(&mut saved, other.as_ptr() as usize)
                    }
                }
                assert_eq!(kept_registers(), before, "rbx and rbp, whole {whole}");
            }
            assert_eq!(digest(&ints, &floats), expected(3), "values, whole {whole}");
        }
    }

    /// A fiber and its starter hand the OS thread back and forth, the fiber
    /// always with `switch_in_block`, the starter alternately with it and
    /// with the whole `switch` (both resume either): each keeps what it
    /// computes across the switches.
    #[test]
    fn both_switches_keep_each_sides_values() {
        let (main, fiber, fiber_digest) = (Cell::new(0), Cell::new(0), Cell::new(0));
        let run = || {
            let (mut ints, mut floats) = ([2u64; 8], [2.0f64; 4]);
            for round in 0..ROUNDS {
                step(&mut ints, &mut floats, round);
                // SAFETY: `main` is the starter's context, saved by its last
                // switch (or `start`) and resumed once here.
                unsafe { switch_in_block(fiber.as_ptr(), main.get()) };
            }
            fiber_digest.set(digest(&ints, &floats));
            let mut finished: SavedContext = 0;
            // SAFETY: as above; nothing resumes `finished`.
            unsafe { switch_in_block(&mut finished, main.get()) };
            unreachable!("a finished fiber is never resumed");
        };
        let run: *const (dyn Fn() + '_) = &run;
        // SAFETY: only the lifetime is erased: `run` lives in this frame,
        // and the fiber runs only until the loop below ends.
        let run = unsafe {
            std::mem::transmute::<*const (dyn Fn() + '_), *const (dyn Fn() + 'static)>(run)
        };
        let stack = DefaultStack::new(256 * 1024).expect("a stack");
        // SAFETY: the stack is this fiber's alone and outlives it; `run`
        // lives in this frame and never returns.
        unsafe { start(stack.base().get(), run, main.as_ptr()) };
        let (mut ints, mut floats) = ([1u64; 8], [1.0f64; 4]);
        for round in 0..ROUNDS {
            step(&mut ints, &mut floats, round);
            let before = kept_registers();
            // SAFETY: the fiber saved its context by its last switch.
            unsafe {
                if round % 2 == 0 {
                    switch(main.as_ptr(), fiber.get())
                } else {
                    switch_in_block(main.as_ptr(), fiber.get())
                }
            }
            assert_eq!(kept_registers(), before, "rbx and rbp, round {round}");
        }
        assert_eq!(digest(&ints, &floats), expected(1), "the starter's values");
        assert_eq!(fiber_digest.get(), expected(2), "the fiber's values");
    }
}
