//! The phase token: a thread's proof of which barrier phase its block is in.

use crate::arch;
use crate::thread_owner::Owner;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

#[cold]
#[inline(never)]
#[track_caller]
fn wrong_block_shape(wanted: [u32; 3], got: crate::thread::Dim3) -> ! {
    panic!(
        "this kernel needs blocks of ({}, {}, {}) threads; the launch has blocks of ({}, {}, {})",
        wanted[0], wanted[1], wanted[2], got.x, got.y, got.z
    )
}

/// A barrier phase: [`Writing`] or [`Reading`].
pub trait Phase: sealed::Sealed + 'static {
    /// The phase after the next barrier: the other one.
    type Next: Phase<Next = Self>;
    /// Whether this is [`Reading`] (for the run-time phase of an
    /// [`Alternating`](super::Alternating) token).
    #[doc(hidden)]
    const READING: bool;
}

/// The phase in which each thread writes (and reads) only the shared slots it
/// owns. Every kernel starts in it.
pub enum Writing {}

/// The phase in which every thread may read every slot (and update
/// [`DeviceAtomic`](crate::DeviceAtomic) slots atomically), and no thread
/// writes.
pub enum Reading {}

impl sealed::Sealed for Writing {}
impl sealed::Sealed for Reading {}
impl Phase for Writing {
    type Next = Reading;
    const READING: bool = false;
}
impl Phase for Reading {
    type Next = Writing;
    const READING: bool = true;
}

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
    /// The thread that holds it (checked at each use on the simulator, see
    /// [`thread_owner`](crate::thread_owner)).
    owner: Owner,
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
            owner: Owner::current(),
            _phase: PhantomData,
            _thread: PhantomData,
        }
    }
}

impl<P: Phase> Block<P> {
    /// Waits until every thread of the block has finished this phase
    /// (reached its own phase barrier), then returns the token of the next
    /// one: [`Reading`] after [`Writing`], [`Writing`] after [`Reading`].
    #[inline(always)]
    #[track_caller]
    #[must_use = "the token of the next phase is the only way to use shared memory after the barrier"]
    pub fn sync(self) -> Block<P::Next> {
        self.check_owner();
        arch::barrier(arch::PHASE_BARRIER);
        self.next()
    }

    /// Checks that the block is `x` by `y` by `z` threads, and panics (a trap
    /// on the GPU; on the simulator a report naming the kernel) when the
    /// launch's block differs; returns the token.
    ///
    /// With constant arguments, the returned token's [`size`](Self::size) is
    /// a constant and its [`thread_rank`](Self::thread_rank) is known to be
    /// below it, so the compiler unrolls `fill` to exactly the slots each
    /// thread owns, with no run-time loop or test (and `threadIdx` is known
    /// to be below `(x, y, z)`, which folds tile-index bounds checks). A
    /// kernel whose tiles assume a block shape calls it first:
    /// `let block = block.require_shape(16, 16, 1);`.
    #[inline(always)]
    #[track_caller]
    pub fn require_shape(self, x: u32, y: u32, z: u32) -> Self {
        let d = crate::thread::block_dim();
        if d.x != x || d.y != y || d.z != z {
            wrong_block_shape([x, y, z], d);
        }
        let [tx, ty, tz] = crate::thread::thread_idx().as_usize();
        let [x, y, z] = [x as usize, y as usize, z as usize];
        // SAFETY: every thread's `threadIdx` is below `blockDim` on each
        // axis (the hardware's guarantee, and the simulator's), and
        // `blockDim` is `(x, y, z)`, tested above.
        unsafe { arch::assume(tx < x && ty < y && tz < z) };
        Block {
            // `thread_rank()`, computed from the constants.
            rank: tx + x * (ty + y * tz),
            size: x * y * z,
            owner: self.owner,
            _phase: PhantomData,
            _thread: PhantomData,
        }
    }

    #[inline(always)]
    pub(super) fn next<Q: Phase>(self) -> Block<Q> {
        Block {
            rank: self.rank,
            size: self.size,
            owner: self.owner,
            _phase: PhantomData,
            _thread: PhantomData,
        }
    }

    /// Panics unless the running thread holds this token (on the simulator;
    /// on the GPU a token cannot reach another thread).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check_owner(&self) {
        self.owner.check("a phase token (Block)")
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
