//! How a block's threads take turns: rounds of direct switches between
//! their contexts, and what happens between rounds.
//!
//! A round runs, in order, the threads that can run, each until it stops
//! (at a barrier, a warp operation, or to let others run after atomics) or
//! finishes. A thread that stops switches straight to the next thread of
//! the round ([`BlockState::run_next`]); the last one switches to the
//! scheduler, which releases a barrier that every thread waits at, or the
//! warp operations whose lanes have all arrived ([`release`]), and starts
//! the next round. Threads start on fibers (a context with a stack): when a
//! thread finishes without stopping, its fiber runs the next thread not yet
//! started, so a kernel without barriers runs its block on one stack, a
//! thread after the other, with no switch between them. A fiber whose thread
//! finished otherwise waits, idle, for the next thread to start, of this
//! block or the next one the OS thread runs: the threads of the next block
//! start in the fibers of the last one's.

use super::block::{BlockState, Failure, IdleFiber};
use super::failures::{panic_message, stack_overflow, stalled};
use super::stacks::{stagger, take_stack};
use super::thread_state::{ThreadState, Waiting};
use crate::backend::simulator::context::{self, SavedContext, StackBounds};
use crate::backend::simulator::signals::Interrupt;
use gpu_device::__private::simulation;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

impl BlockState<'_> {
    /// Runs the block's threads to the end; on failure the thread that
    /// failed and what happened.
    pub(super) fn schedule(&self) -> Result<(), (usize, String)> {
        let count = self.count;
        let fiber = || self.fiber();
        let fiber: *const (dyn Fn() + '_) = &fiber;
        // SAFETY: only the lifetime is erased: the closure lives in this
        // frame until the block ends, and fibers run only until then.
        self.fiber_main.set(unsafe {
            std::mem::transmute::<*const (dyn Fn() + '_), *const (dyn Fn() + 'static)>(fiber)
        });
        self.round.borrow_mut().extend(0..count as u32);
        loop {
            self.progress.set(false);
            self.position.set(usize::MAX);
            // SAFETY: this is the scheduler's context, saved where the
            // threads and the signal handlers find it.
            unsafe { self.run_next::<true>(self.signals.scheduler()) };
            self.count_in_order();
            let current = self.current.get();
            if let Some(why) = self.signals.take_interrupt() {
                let what = match why {
                    Interrupt::StackOverflow => stack_overflow(self.run.stack_bytes),
                    Interrupt::Stalled => self.stall_report(current),
                };
                return Err((current, what));
            }
            if let Some((thread, failure)) = self.failure.take() {
                let what = match failure {
                    Failure::Panicked(message) => format!("panicked: {message}"),
                    Failure::Stalled => self.stall_report(thread),
                    Failure::NoStack(message) => message,
                };
                return Err((thread, what));
            }
            // Progress for the watchdog: a thread reached a barrier or warp
            // operation, or finished.
            if self.progress.get() {
                self.worker.progress();
            }
            if self.waiting.get().done == count {
                return Ok(());
            }
            {
                let (mut round, mut next) = (self.round.borrow_mut(), self.next.borrow_mut());
                round.clear();
                std::mem::swap(&mut *round, &mut *next);
                for &t in round.iter() {
                    self.slots[t as usize].status.set(ThreadState::Ready);
                }
            }
            release(self)?;
        }
    }

    /// What the watchdog reports of the block, `current` running.
    fn stall_report(&self, current: usize) -> String {
        let status: Vec<ThreadState> = self.slots.iter().map(|s| s.status.get()).collect();
        let started = |t: usize| self.slots[t].stack.get() != 0 || status[t] == ThreadState::Done;
        stalled(&status, &started, current, self.threads())
    }

    /// Switches to the next thread of the round that can run (starting it
    /// on a new fiber if it has not started), or to the scheduler after the
    /// round's last; saves the running context in `*save`.
    ///
    /// `FROM_SCHEDULER`: the scheduler runs, and saves itself with the whole
    /// [`context::switch`] (a signal handler resumes it from any point of
    /// kernel code); a thread saves itself with
    /// [`context::switch_in_block`].
    ///
    /// # Safety
    /// `save` is the running context's slot (a thread's, the scheduler's,
    /// or a finished fiber's that nothing resumes), on this block's OS thread.
    #[inline(always)]
    pub(super) unsafe fn run_next<const FROM_SCHEDULER: bool>(&self, save: *mut SavedContext) {
        let round = self.round.as_ptr();
        loop {
            let position = self.position.get().wrapping_add(1);
            self.position.set(position);
            // SAFETY: the round is changed only by the scheduler between
            // rounds, never while a thread runs; no borrow of it is held.
            let Some(&t) = (unsafe { &*round }).get(position) else {
                return self.to_scheduler(save);
            };
            let t = t as usize;
            let slot = &self.slots[t];
            if slot.status.get() != ThreadState::Ready {
                // Run earlier in the round by a fiber that went on to it.
                continue;
            }
            let stack = slot.stack.get();
            if stack != 0 {
                self.signals.running(stack);
                let to = slot.context.get();
                // SAFETY: as above.
                self.prefetch_after(unsafe { &*round }, position);
                // SAFETY: thread `t` is suspended (its status is Ready and
                // it has a fiber: it stopped, and was released), its
                // context saved by its own switch.
                return unsafe {
                    if FROM_SCHEDULER {
                        context::switch(save, to)
                    } else {
                        context::switch_in_block(save, to)
                    }
                };
            }
            // Not started: an idle fiber (whose thread finished), or a new
            // one.
            let idle = self.idle.borrow_mut().pop();
            if let Some(fiber) = idle {
                if std::ptr::eq(fiber.context, save.cast_const()) {
                    // The running fiber, idle since its thread finished:
                    // it goes on to this thread itself.
                    return;
                }
                self.signals.running(fiber.stack);
                // SAFETY: an idle fiber saved its context (by its switch
                // in `fiber`, which completed: another context runs) in
                // its own frame, and is resumed once: it left the list.
                return unsafe {
                    let to = fiber.context.read();
                    if FROM_SCHEDULER {
                        context::switch(save, to)
                    } else {
                        context::switch_in_block(save, to)
                    }
                };
            }
            let stack = match take_stack(self.run.stack_bytes) {
                Ok(stack) => stack,
                Err(message) => {
                    self.failure.set(Some((t, Failure::NoStack(message))));
                    return self.to_scheduler(save);
                }
            };
            let bounds = StackBounds::of(&stack);
            let top = bounds.base - stagger(self.stacks.borrow().len());
            self.stacks.borrow_mut().push(stack);
            self.signals.stacks_like(bounds);
            self.signals.running(bounds.base);
            // SAFETY: the stack is the state's (kept in `stacks` until the
            // OS thread's last block of the launch ends) and used by this
            // fiber only, from `top`, at most 4032 bytes below its top; `fiber_main` lives in `schedule`'s frame, for the
            // block (the fiber calls it once, at its start), and never
            // returns.
            return unsafe { context::start(top, self.fiber_main.get(), save) };
        }
    }

    /// Loads the stack lines of the thread two after `position` in the
    /// round, if it is stopped and will resume there, while the threads
    /// before it run (two: the lines arrive in time; one ahead gained half
    /// as much, four nothing; `benches/NOTES.md`).
    #[inline(always)]
    fn prefetch_after(&self, round: &[u32], position: usize) {
        if let Some(&next) = round.get(position + 2) {
            let slot = &self.slots[next as usize];
            if slot.stack.get() != 0 && slot.status.get() == ThreadState::Ready {
                context::prefetch_resume(slot.context.get());
            }
        }
    }

    /// Hands the OS thread to the scheduler (if it is not the one running).
    fn to_scheduler(&self, save: *mut SavedContext) {
        let scheduler = self.signals.scheduler();
        if save != scheduler {
            self.signals.running(0);
            // SAFETY: the scheduler saved its context when it started the
            // round and waits in that `switch`; `save` is a thread's slot.
            unsafe { context::switch_in_block(save, scheduler.read()) };
        }
    }

    /// A fiber: runs threads not started yet, one after the other, until
    /// one stops (then the fiber is that thread's) or the next thread of the
    /// round is not the next unstarted one; then waits, idle, until a
    /// thread not started (of this block or of a later one that the OS
    /// thread runs, see `blocks`) is given to it.
    fn fiber(&self) -> ! {
        let stack = self.signals.running_stack().map_or(0, |s| s.base);
        let (call, params) = (self.run.call, self.params);
        // Where the fiber's context is saved while it is idle.
        let idle = Cell::new(0);
        loop {
            let t = self.next_unstarted.get();
            debug_assert_eq!(
                self.round.borrow().get(self.position.get()).copied(),
                Some(t as u32),
                "threads start in order"
            );
            self.next_unstarted.set(t + 1);
            self.current.set(t);
            self.slots[t].stack.set(stack);
            // SAFETY: `threads()[t]` is thread `t` of this block of the
            // launch, made by `run_block` from the block's and the launch's
            // coordinates (unique in the launch, within its extents, with a
            // serial of its own), and `self` is this block's own state
            // (`BlockState` implements the block's services as `Block`
            // requires). It stays current until the next `enter` (by the
            // thread that runs next), and `run_block` leaves it before the
            // threads go.
            unsafe { simulation::enter(&self.threads()[t]) };
            let outcome = self.signals.kernel_code(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    // SAFETY: the parameter copies outlive the block, and
                    // the call runs as simulated thread `t` (made current
                    // above, and again by `suspend` at each resume).
                    unsafe { call(params) }
                }))
            });
            if let Err(payload) = outcome {
                let message = panic_message(&*payload);
                self.fail(t, Failure::Panicked(message));
            }
            self.slots[t].status.set(ThreadState::Done);
            self.add_waiting(|w| w.done += 1);
            self.progress.set(true);
            let position = self.position.get() + 1;
            let next_is_unstarted = self.round.borrow().get(position).copied()
                == Some(self.next_unstarted.get() as u32);
            if !next_is_unstarted {
                self.idle.borrow_mut().push(IdleFiber {
                    stack,
                    context: idle.as_ptr(),
                });
                // SAFETY: `idle` is this fiber's own slot, in this frame,
                // which stays while the fiber is idle (nothing ends it: an
                // idle fiber is resumed, by `run_next`, or abandoned with
                // the state); `run_next` resumes it only for a thread not
                // started, at that thread's position.
                unsafe { self.run_next::<false>(idle.as_ptr()) };
                continue;
            }
            self.position.set(position);
        }
    }

    /// Fails the block in thread `t` and hands the OS thread to the
    /// scheduler for good (the thread's frames are abandoned).
    pub(super) fn fail(&self, t: usize, failure: Failure) -> ! {
        self.failure.set(Some((t, failure)));
        self.signals.running(0);
        let mut abandoned: SavedContext = 0;
        // SAFETY: the scheduler waits in its `switch`; nothing resumes
        // `abandoned`.
        unsafe { context::switch_in_block(&mut abandoned, self.signals.scheduler().read()) };
        unreachable!("an abandoned thread is never resumed");
    }

    /// Changes the counts of waiting threads.
    pub(super) fn add_waiting(&self, f: impl FnOnce(&mut Waiting)) {
        let mut waiting = self.waiting.get();
        f(&mut waiting);
        self.waiting.set(waiting);
    }
}

/// Adds to the round (the threads that yielded) the threads of the barrier
/// or the warp operations whose threads all wait; an error when nothing can
/// run and nothing can be released.
fn release(state: &BlockState<'_>) -> Result<(), (usize, String)> {
    let count = state.count;
    let slots = &state.slots[..];
    let mut waiting = state.waiting.get();
    let mut round = state.round.borrow_mut();
    let mut released = false;
    // The lanes of a warp at `activemask()` are released together, each
    // warp's mask of them in `active_masks`: every lane of the warp that was
    // ready has run until it waits or exits since the last release, so the
    // lanes there are those that reached it together (a lane that returned
    // early is not).
    if waiting.active_mask > 0 {
        for (warp, active) in state.active_masks.iter().enumerate() {
            let lanes = warp * 32..((warp + 1) * 32).min(count);
            let at_mask = lanes
                .clone()
                .filter(|&t| slots[t].status.get() == ThreadState::AtActiveMask)
                .fold(0u32, |mask, t| mask | 1 << (t % 32));
            if at_mask != 0 {
                active.set(at_mask);
                for t in lanes.filter(|&t| at_mask & 1 << (t % 32) != 0) {
                    slots[t].status.set(ThreadState::Ready);
                    round.push(t as u32);
                    waiting.active_mask -= 1;
                }
                released = true;
            }
        }
    }
    let at_barrier: usize = waiting.barrier.iter().sum();
    if at_barrier > 0 && at_barrier + waiting.done == count {
        let first = slots
            .iter()
            .position(|s| matches!(s.status.get(), ThreadState::AtBarrier(_)))
            .expect("some wait");
        let ThreadState::AtBarrier(id) = slots[first].status.get() else {
            unreachable!("found by position")
        };
        if waiting.barrier.iter().filter(|&&n| n > 0).count() > 1 {
            let (other, other_id) = slots
                .iter()
                .enumerate()
                .find_map(|(t, s)| match s.status.get() {
                    ThreadState::AtBarrier(i) if i != id => Some((t, i)),
                    _ => None,
                })
                .expect("two barriers have threads");
            return Err((
                first,
                format!(
                    "threads of the block wait at different barriers (thread {first} at {}, thread {other} at {}); on a GPU this block would hang",
                    barrier_name(id),
                    barrier_name(other_id)
                ),
            ));
        }
        if waiting.done > 0 {
            let exited = slots
                .iter()
                .position(|s| s.status.get() == ThreadState::Done)
                .expect("some exited");
            return Err((
                first,
                format!(
                    "{} is not reached by every thread of the block (thread {exited} exited first); on a GPU this block would hang",
                    barrier_name(id)
                ),
            ));
        }
        if id == simulation::GRID_BARRIER {
            // Every thread of this block is there: wait for the other blocks.
            state
                .run
                .grid_arrive(state.worker)
                .map_err(|message| (first, message))?;
            if let Some(races) = &state.races {
                races.grid.set(races.grid.get() + 1);
            }
        }
        if id == simulation::CLUSTER_BARRIER {
            // Every thread of this block is there: wait for the other
            // blocks of its cluster.
            state.cluster_arrive().map_err(|message| (first, message))?;
        }
        for s in slots {
            s.status.set(ThreadState::Ready);
        }
        round.clear();
        round.extend(0..count as u32);
        waiting.barrier = [0; 8];
        state.waiting.set(waiting);
        if let Some(races) = &state.races {
            races.interval.set(races.interval.get() + 1);
        }
        return Ok(());
    }
    if waiting.warp > 0 {
        let before = round.len();
        for warp in 0..count.div_ceil(32) {
            let lanes = warp * 32..((warp + 1) * 32).min(count);
            let Some(first) = lanes
                .clone()
                .find(|&t| matches!(slots[t].status.get(), ThreadState::AtWarp(_)))
            else {
                continue;
            };
            let ThreadState::AtWarp(mask) = slots[first].status.get() else {
                unreachable!("found")
            };
            let mut ready = true;
            for t in lanes.clone().filter(|&t| mask & (1 << (t % 32)) != 0) {
                match slots[t].status.get() {
                    ThreadState::AtWarp(_) => {}
                    ThreadState::Done => {
                        return Err((
                            first,
                            format!(
                                "a warp shuffle or vote names lane {} in its mask, but that thread exited; on a GPU this is undefined",
                                t % 32
                            ),
                        ))
                    }
                    _ => ready = false,
                }
            }
            if ready {
                let from = round.len();
                for t in lanes {
                    if matches!(slots[t].status.get(), ThreadState::AtWarp(_)) {
                        slots[t].status.set(ThreadState::Ready);
                        waiting.warp -= 1;
                        round.push(t as u32);
                    }
                }
                if let Some(races) = &state.races {
                    races.synchronise(&round[from..]);
                }
                released = true;
            }
        }
        if released && before > 0 {
            // Yielded threads and released lanes, in thread order.
            round.sort_unstable();
        }
    }
    state.waiting.set(waiting);
    if released || !round.is_empty() {
        return Ok(());
    }
    let waiting = slots
        .iter()
        .position(|s| s.status.get() != ThreadState::Done)
        .expect("not all done");
    Err((
        waiting,
        "deadlock: threads wait at a barrier (sync_threads() or Block::sync()) while others of the block wait at a warp operation".into(),
    ))
}

/// How a barrier is called in kernel code.
fn barrier_name(id: u32) -> &'static str {
    match id {
        0 => "sync_threads()",
        simulation::VOTE_BARRIER => "a block vote (sync_threads_count/_and/_or)",
        simulation::COLLECTIVE_BARRIER => {
            "the barrier inside a block collective (a tile claim or look-back)"
        }
        simulation::GRID_BARRIER => "the grid sync Grid::sync()",
        simulation::CLUSTER_BARRIER => "the cluster sync Cluster::sync() (or Cluster::exchange)",
        simulation::PIPELINE_BARRIER => "a cp.async ring's wait CpAsyncRing::wait()",
        simulation::MBARRIER_BARRIER => "the initialisation of mbarriers MBarriers::init()",
        _ => "the phase barrier Block::sync()",
    }
}
