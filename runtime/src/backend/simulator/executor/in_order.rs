//! The common barrier, taken in thread order: every thread of the block
//! reaches the same barrier, thread 0 first, then thread 1, and so on, in a
//! round that holds them all in that order (the round after a release, and
//! the first). Each such thread counts itself, stores its status and
//! switches to the next; the last releases the barrier itself and switches
//! to thread 0, without the scheduler. The first thread that breaks the
//! order (another barrier, a warp operation, a yield, an exit, a failure)
//! ends it: it and every later thread of the round take the general path
//! (`BlockState::suspend`), and the scheduler adds the in-order threads to
//! the counts it checks ([`BlockState::count_in_order`]), so the reports of
//! divergent and mismatched barriers and of deadlocks are the general
//! path's. Grid syncs always take the general path (their release waits
//! for the other blocks); a launch checked for races starts a new barrier
//! interval at each release, on either path.

use super::block::BlockState;
use super::thread_state::ThreadState;
use gpu_device::__private::simulation::{self, SimulatedThread};

impl BlockState<'_> {
    /// Whether thread `thread` (running), stopping at barrier `id`, keeps
    /// the order: it is the next thread and at the next position, and the
    /// threads before it stopped at the same barrier.
    #[inline(always)]
    pub(super) fn continues_in_order(&self, thread: &SimulatedThread<'_>, id: u32) -> bool {
        let t = thread.linear as usize;
        let stopped = self.in_order.stopped.get();
        stopped == t
            && self.position.get() == t
            && (t == 0 || self.in_order.id.get() == id)
            && id != simulation::GRID_BARRIER
            && id != simulation::CLUSTER_BARRIER
    }

    /// Stops `thread` at barrier `id` in order ([`Self::continues_in_order`]
    /// holds), runs the others until the barrier is released, and makes it
    /// the current thread again.
    pub(super) fn barrier_in_order(&self, thread: &SimulatedThread<'_>, id: u32) {
        let t = thread.linear as usize;
        self.signals.runtime_code(|| {
            let slot = &self.slots[t];
            slot.status.set(ThreadState::AtBarrier(id));
            if t + 1 < self.count {
                self.in_order.id.set(id);
                self.in_order.stopped.set(t + 1);
                self.progress.set(true);
                // SAFETY: `t` is the running thread; its context is saved in
                // its own slot, which is resumed once it is released.
                return unsafe { self.run_next::<false>(slot.context.as_ptr()) };
            }
            // The last thread: every thread of the block waits at `id`, and
            // the round was the whole block in order. Release it here: the
            // next round is the same (`round` holds 0..count already).
            debug_assert!(
                self.round.borrow().iter().copied().eq(0..self.count as u32),
                "an in-order round is the whole block in order"
            );
            let waiting = self.waiting.get();
            debug_assert!(
                waiting.barrier == [0; 8]
                    && waiting.warp == 0
                    && waiting.active_mask == 0
                    && waiting.done == 0
                    && self.next.borrow().is_empty(),
                "no thread of an in-order round waits elsewhere"
            );
            self.in_order.stopped.set(0);
            for slot in &self.slots[..] {
                slot.status.set(ThreadState::Ready);
            }
            if let Some(races) = &self.races {
                // A new barrier interval, as `release` starts one.
                races.interval.set(races.interval.get() + 1);
            }
            self.worker.progress();
            self.position.set(usize::MAX);
            if t == 0 {
                // A block of one thread: it goes on.
                self.position.set(0);
                return;
            }
            // SAFETY: as above; thread 0 stopped at this barrier (its
            // context is saved and it is Ready now), and is not `t`.
            unsafe { self.run_next::<false>(slot.context.as_ptr()) }
        });
        // SAFETY: `thread` was current when it stopped, and is again (see
        // `suspend`).
        unsafe { simulation::enter(thread) };
        self.current.set(t);
    }

    /// Adds the threads that stopped in order in this round to the block's
    /// counts (the scheduler, before it looks at them).
    pub(super) fn count_in_order(&self) {
        let stopped = self.in_order.stopped.replace(0);
        if stopped > 0 {
            let id = self.in_order.id.get() as usize;
            self.add_waiting(|w| w.barrier[id] += stopped);
        }
    }
}

#[cfg(test)]
mod tests;
