//! Hardware barriers in shared memory (`mbarrier`, sm_90): split
//! arrive/wait barriers whose phases also wait for bytes of asynchronous
//! copies (a transaction count), as the bulk tensor copies complete on.
//!
//! [`mbarriers!(N)`](crate::mbarriers) gives `N` barriers of the block's
//! static shared memory as [`MBarriers`], which every thread of the block
//! initialises together ([`MBarriers::init`]: thread 0 initialises, then a
//! block barrier of its own publishes them), getting its own [`MBarrier`]
//! handle of each. A handle counts the phases its thread has waited for:
//! [`MBarrier::wait`] waits for the next one and returns a [`Completed`]
//! witness naming the barrier and the phase, which what the phase guards
//! (a tile a bulk copy fills) asks for before it is read.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//!
//! // With `#[kernel(arch = "sm_90a")]`: each thread arrives, then waits
//! // until all have (a split `sync_threads`).
//! pub fn all_arrive(mut out: DisjointSlice<u32>) {
//!     let [mut bar] = gpu_device::mbarriers!(1).init([block_size() as u32]);
//!     bar.arrive();
//!     let done = bar.wait();
//!     out.set(thread_index(), done.phase());
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *Only initialised barriers are used.* The words are reached only
//!   through the handle of their own `mbarriers!` invocation (a symbol
//!   nothing else names), and [`MBarrier`]s come only from
//!   [`MBarriers::init`]: thread 0 runs `mbarrier.init` and the fences that
//!   publish it (`fence.mbarrier_init`, and to the async proxy), then every
//!   thread passes a block barrier of its own id, which no other code uses.
//!   So the `k`-th time a thread passes it, thread 0 has made its `k`-th
//!   initialisation.
//! - *Counts in range.* Arrival counts are checked to be `1 ..= 2^20 - 1`
//!   and `expect_tx` byte counts below 2^20 (PTX's ranges); a panic
//!   otherwise (a trap on the GPU, a report on the simulator).
//! - *Waits.* A wait that never completes (an arrival missing, too many
//!   bytes expected) hangs a GPU's block, which breaks no memory rule; the
//!   simulator reports it, naming the barrier, when every thread of the
//!   block waits on it, and reports more bytes completing than a phase
//!   expected.
//! - *Phases.* A handle waits for phases in order, by parity; a thread that
//!   let the barrier run two phases ahead of its waits would wait for a
//!   later phase than it means, so the types that guard data with a phase
//!   (the bulk copies' tiles) also keep the barrier from running ahead of
//!   any thread: each phase needs an arrival of every thread that waits.
//!
//! - *Arrivals.* Any thread may arrive on a handle's barrier any number of
//!   times, so a phase can complete before what it guards has landed: the
//!   types that guard memory with a barrier (the bulk copies' tiles) keep
//!   theirs to themselves and arrive only by their protocol, never trusting
//!   a barrier safe code can arrive on. The simulator reports an arrival on
//!   a phase that has all of its arrivals and waits only for bytes (a GPU's
//!   count would wrap). An H100 also ended a kernel in which one thread
//!   arrived twice in a phase of 64 arrivals ("Unknown Error" at the
//!   arrive), which the simulator counts into the next phase: that rule of
//!   the GPU is not modelled yet (a launch failure on the GPU, not
//!   undefined behaviour).
//!
//! Handles are per thread (their phase count is), neither `Send` nor
//! `Sync`, and checked on the simulator to be used by the thread that made
//! them.

use crate::arch;
use crate::thread_owner::Owner;
use core::marker::PhantomData;

/// Words of shared memory one barrier takes on the simulator (one on the
/// GPU); for `mbarriers!`.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub const __SIMULATED_WORDS: usize = arch::tma::WORDS;

/// The largest arrival count and `expect_tx` byte count PTX allows.
pub const MAX_COUNT: u32 = (1 << 20) - 1;

/// How many words one barrier takes here.
#[cfg(not(target_arch = "nvptx64"))]
const WORDS: usize = arch::tma::WORDS;
#[cfg(target_arch = "nvptx64")]
const WORDS: usize = 1;

/// `N` barriers in the block's shared memory, not initialised yet: from
/// [`mbarriers!(N)`](crate::mbarriers). [`init`](Self::init) makes the
/// handles.
pub struct MBarriers<const N: usize> {
    base: *mut u64,
    _not_send: PhantomData<*mut ()>,
}

impl<const N: usize> MBarriers<N> {
    /// The barriers at `base`.
    ///
    /// # Safety
    /// `base` is the start of `N` barriers' words (one each on the GPU,
    /// `__SIMULATED_WORDS` on the simulator) of the block's shared memory,
    /// 8-byte aligned, which nothing but `MBarriers` and its handles
    /// reaches: what `mbarriers!` passes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(base: *mut u64) -> Self {
        MBarriers {
            base,
            _not_send: PhantomData,
        }
    }

    /// Initialises barrier `i` to wait for `arrivals[i]` arrivals a phase,
    /// and gives this thread's handles. Every thread of the block calls it
    /// together (it ends with a block barrier); thread 0 initialises. Panics
    /// unless every count is in `1 ..= MAX_COUNT`.
    #[inline(always)]
    #[track_caller]
    pub fn init(self, arrivals: [u32; N]) -> [MBarrier; N] {
        for &count in &arrivals {
            if count == 0 || count > MAX_COUNT {
                bad_arrivals(count)
            }
        }
        if crate::thread_rank() == 0 {
            for (i, &count) in arrivals.iter().enumerate() {
                // SAFETY: barrier `i`'s words (`i < N`, see `from_raw`);
                // the other threads use it only after the barrier below.
                unsafe { arch::tma::init(self.word(i), count) };
            }
            arch::tma::fence_init();
        }
        arch::barrier(arch::MBARRIER_BARRIER);
        let owner = Owner::current();
        core::array::from_fn(|i| MBarrier {
            word: self.word(i),
            index: i as u32,
            arrivals: arrivals[i],
            waited: 0,
            owner,
            _not_send: PhantomData,
        })
    }

    #[inline(always)]
    fn word(&self, i: usize) -> *mut u64 {
        self.base.wrapping_add(i * WORDS)
    }
}

/// This thread's handle of an initialised barrier: from
/// [`MBarriers::init`]. It counts the phases this thread waited for.
pub struct MBarrier {
    word: *mut u64,
    index: u32,
    arrivals: u32,
    waited: u32,
    owner: Owner,
    _not_send: PhantomData<*mut ()>,
}

impl MBarrier {
    /// The arrivals that complete a phase (with the bytes expected).
    #[inline(always)]
    pub fn arrivals(&self) -> u32 {
        self.arrivals
    }

    /// The phases this thread has waited for: the next [`wait`](Self::wait)
    /// waits for phase `phase()` (counting from 0).
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.waited
    }

    /// The barrier's shared-memory word (for the bulk copies that complete
    /// on it).
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn word(&self) -> *mut u64 {
        self.word
    }

    /// The barrier's index in its `mbarriers!` (for reports).
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// One arrival on the phase in progress.
    #[inline(always)]
    #[track_caller]
    pub fn arrive(&self) {
        self.owner.check("an MBarrier");
        // SAFETY: an initialised barrier (`MBarriers::init` made `self`).
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::arrive(self.word);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::arrive(self.word, self.index as usize);
        }
    }

    /// One arrival on the phase in progress, which then also waits for
    /// `bytes` more bytes of asynchronous copies completing on it
    /// (`arrive.expect_tx`). Panics when `bytes > MAX_COUNT`.
    #[inline(always)]
    #[track_caller]
    pub fn arrive_expect_tx(&self, bytes: u32) {
        self.owner.check("an MBarrier");
        if bytes > MAX_COUNT {
            bad_tx(bytes)
        }
        // SAFETY: an initialised barrier; `bytes` in range.
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::arrive_expect_tx(self.word, bytes);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::arrive_expect_tx(self.word, self.index as usize, bytes);
        }
    }

    /// Waits until phase [`phase()`](Self::phase) has completed, and counts
    /// it: the witness names the barrier and the phase.
    #[inline(always)]
    #[track_caller]
    pub fn wait(&mut self) -> Completed {
        self.owner.check("an MBarrier");
        let phase = self.waited;
        // SAFETY: an initialised barrier.
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::wait_parity(self.word, phase & 1);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::wait_parity(self.word, self.index as usize, phase & 1);
        }
        self.waited = phase.wrapping_add(1);
        Completed {
            word: self.word,
            phase,
            owner: self.owner,
            _not_send: PhantomData,
        }
    }
}

/// A witness that phase [`phase()`](Self::phase) of a barrier completed,
/// as this thread saw: from [`MBarrier::wait`].
#[derive(Clone, Copy)]
pub struct Completed {
    word: *mut u64,
    phase: u32,
    owner: Owner,
    _not_send: PhantomData<*mut ()>,
}

impl Completed {
    /// The phase (counting from 0).
    #[inline(always)]
    pub fn phase(&self) -> u32 {
        self.phase
    }

    /// Whether it is phase `phase` of `barrier` (checked on the simulator
    /// to be this thread's witness).
    #[inline(always)]
    #[track_caller]
    #[allow(dead_code)]
    pub(crate) fn is(&self, barrier: &MBarrier, phase: u32) -> bool {
        self.owner.check("a Completed phase witness");
        self.word == barrier.word && self.phase == phase
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_arrivals(count: u32) -> ! {
    panic!("MBarriers::init: an arrival count of {count} is outside 1 ..= {MAX_COUNT}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_tx(bytes: u32) -> ! {
    panic!("MBarrier::arrive_expect_tx: {bytes} bytes is more than {MAX_COUNT}, PTX's limit of a transaction count")
}
