//! The phase token: a thread's proof of which barrier phase its block is in.

use crate::arch;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// A barrier phase: [`Writing`] or [`Reading`].
pub trait Phase: sealed::Sealed {}

/// The phase in which each thread writes (and reads) only the shared slots it
/// owns. Every kernel starts in it.
pub enum Writing {}

/// The phase in which every thread may read every slot (and update
/// [`DeviceAtomic`](crate::DeviceAtomic) slots atomically), and no thread
/// writes.
pub enum Reading {}

impl sealed::Sealed for Writing {}
impl sealed::Sealed for Reading {}
impl Phase for Writing {}
impl Phase for Reading {}

/// A thread's phase token: proof that every thread of its block is in phase
/// `P` (see the [module documentation](super) for why).
///
/// A kernel receives its token by declaring a parameter of type `Block`
/// (`Block<Writing>`): the `#[kernel]` macro builds it on the device, one per
/// thread, and leaves it out of the launcher's arguments. It cannot be built
/// in safe code, copied, cloned, or sent to another thread; [`sync`](Block::sync)
/// consumes it and returns the token of the next phase.
pub struct Block<P: Phase = Writing> {
    rank: usize,
    size: usize,
    _phase: PhantomData<P>,
    /// `!Send + !Sync`: a token never leaves its thread.
    _thread: PhantomData<*mut ()>,
}

impl Block<Writing> {
    /// The token of a kernel's entry point.
    ///
    /// # Safety
    /// Called once per thread, by the `#[kernel]` entry point before the body
    /// runs, so that every thread of the block holds exactly one token and
    /// has passed no phase barrier.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_kernel_entry() -> Self {
        Block {
            rank: crate::thread::thread_rank(),
            size: crate::thread::block_size(),
            _phase: PhantomData,
            _thread: PhantomData,
        }
    }

    /// Waits until every thread of the block has finished writing (reached
    /// its own phase barrier), then returns the token of the [`Reading`] phase.
    #[inline(always)]
    #[must_use = "the token of the next phase is the only way to use shared memory after the barrier"]
    pub fn sync(self) -> Block<Reading> {
        arch::barrier(arch::PHASE_BARRIER);
        self.next()
    }
}

impl Block<Reading> {
    /// Waits until every thread of the block has finished reading, then
    /// returns the token of the [`Writing`] phase.
    #[inline(always)]
    #[must_use = "the token of the next phase is the only way to use shared memory after the barrier"]
    pub fn sync(self) -> Block<Writing> {
        arch::barrier(arch::PHASE_BARRIER);
        self.next()
    }
}

impl<P: Phase> Block<P> {
    #[inline(always)]
    fn next<Q: Phase>(self) -> Block<Q> {
        Block {
            rank: self.rank,
            size: self.size,
            _phase: PhantomData,
            _thread: PhantomData,
        }
    }

    /// This thread's linear index in its block, `t` of the ownership rule
    /// ([`thread_rank`](crate::thread::thread_rank)).
    #[inline(always)]
    pub fn thread_rank(&self) -> usize {
        self.rank
    }

    /// The number of threads in the block, `B` of the ownership rule.
    #[inline(always)]
    pub fn size(&self) -> usize {
        self.size
    }

    /// The index of this thread's `k`-th owned slot, `t + k * B`, or `None`
    /// when it is not below `len` (or overflows).
    #[inline(always)]
    pub fn own_slot(&self, k: usize, len: usize) -> Option<usize> {
        let slot = k.checked_mul(self.size)?.checked_add(self.rank)?;
        (slot < len).then_some(slot)
    }
}
