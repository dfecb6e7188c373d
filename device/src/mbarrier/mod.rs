//! Hardware barriers in shared memory (`mbarrier`, sm_90): split
//! arrive/wait barriers whose phases also wait for bytes of asynchronous
//! copies (a transaction count), as the bulk tensor copies complete on.
//!
//! [`mbarriers!(N)`](crate::mbarriers) gives `N` barriers of the block's
//! static shared memory as [`MBarriers`], which every thread of the block
//! initialises together ([`MBarriers::init`], a collective: thread 0
//! initialises, every thread checks that its call is thread 0's, between
//! two block barriers of its own), getting its own [`MBarrier`] handle of
//! each. A handle counts the phases its thread has waited for:
//! [`MBarrier::wait`] waits for the next one and returns a [`Completed`]
//! witness naming the barrier and the phase, which what the phase guards
//! (a tile a bulk copy fills) asks for before it is read. A thread arrives
//! at most once on each phase, the phase it waits for next.
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
//!   [`MBarriers::init`], a collective of the block:
//!   1. thread 0 runs `mbarrier.init` on each barrier of its call, the
//!      fences that publish it (`fence.mbarrier_init`, and to the async
//!      proxy), and writes what its call is (the barriers' address and a
//!      digest of their number and counts) into the block's init record, a
//!      static shared slot only `init` reaches;
//!   2. every thread passes a block barrier of `init`'s own id
//!      (`MBARRIER_BARRIER`, which no other code uses), which also tells
//!      whether thread 0 reached it: on a GPU a thread that exited may
//!      count as arrived, and the record would then be an earlier block's,
//!      so its absence is a panic;
//!   3. every thread compares its own call with the record: another
//!      address (two `mbarriers!` initialised in divergent branches, one of
//!      which thread 0 never took) or other counts is a panic naming the
//!      thread (a trap on the GPU, a report on the simulator);
//!   4. every thread passes that barrier again, a vote of whether any
//!      call differed, so that thread 0's next `init` rewrites the record
//!      only after every thread has read it
//!
//!   (`device/src/block_agreement.rs`, shared with the
//!   `CpAsyncRing`'s construction).
//!
//!   Each `init` passes the barrier exactly twice in every thread, so the
//!   `k`-th call of any thread meets thread 0's `k`-th call at both
//!   barriers, and compares with the record thread 0 wrote in that very
//!   call: a thread that got past step 3 holds handles of the barriers
//!   thread 0 initialised, with their counts, published before step 2. The
//!   record is written in every call before it is read, so shared memory
//!   left by an earlier block (or a stale "initialised" tag) is never
//!   trusted. A thread that never calls `init` leaves the block at the
//!   barrier: a hang on the GPU (no memory rule broken), a report on the
//!   simulator. The comparison costs one 16-byte store, a load and one
//!   more barrier per `init`, once per kernel in the usual use.
//! - *Initialised once while live.* One `mbarriers!` evaluated again in a
//!   block (a loop, a closure called twice, a nested scope) names the
//!   same barriers: a second `init` would put them back at phase 0 under
//!   the handles of the first, whose next wait by parity could return at
//!   once with a [`Completed`] for a phase that never completed. So each
//!   invocation has two words after its barriers, a tag: the identity of
//!   the block they are live in (on the GPU `%gridid`, the launch's own
//!   number, and the block's linear rank negated; on the simulator the
//!   serial of the block's thread 0, unique per block and launch in the
//!   process, and the rank). Only thread 0 reads and writes it, in `init`
//!   (its read through PTX: the words may hold an earlier block's bits):
//!   this block's identity, and thread 0 records in the init record that
//!   they are live instead of initialising them; every thread's comparison
//!   at step 3 then differs, and every thread panics (a uniform branch).
//!   Anything else (zeros, an earlier block's or launch's tag, other data
//!   left in shared memory) and thread 0 writes the tag, then
//!   initialises. A tag naming this block was written by this block's
//!   thread 0, so live barriers are always refused; a stale value that
//!   happened to match could only refuse an `init` wrongly, a panic and
//!   never a wrong answer. A plain `init` never clears its tag: one
//!   `mbarriers!` is initialised once a block. A scope over the barriers
//!   (`TmaTileSlot::with`) initialises them with the crate's
//!   `init_scoped`, whose `ScopeEnd` thread 0 releases (clears the tag)
//!   once every thread arrived, after its last use of the handles, on a
//!   barrier phase thread 0 waited for: a later scope (a loop) initialises
//!   them again, a nested one is refused. It costs thread 0 two loads and
//!   two stores per `init`; arrivals and waits are as they were.
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
//! - *Arrivals.* A thread arrives at most once a phase: a handle records
//!   its arrival on the phase it waits for next, and a second
//!   [`arrive`](MBarrier::arrive) (or `arrive_expect_tx`) before its
//!   [`wait`](MBarrier::wait) is a panic, on every target. A GPU counts
//!   arrivals without knowing the threads: an H100 ended a kernel in which
//!   one thread arrived twice in a phase of 64 arrivals ("Unknown Error" at
//!   the arrive, where a warp's arrival went past the phase's pending
//!   count), and with other timing the arrival would have counted into
//!   the next phase, completing it early. The handle's rule refuses the
//!   extra arrival in every timing. The rest of the class, more threads
//!   arriving on a phase than its count (a count too small), the simulator
//!   reports: an arrival for a phase that completed without it (the handle
//!   knows the phase it arrives for; the simulator's barrier, the phase in
//!   progress), and an arrival on a phase that has all of its arrivals and
//!   waits only for bytes (a GPU's count would wrap). Neither breaks a
//!   memory rule by itself: a phase can still complete before what it
//!   guards has landed only where code other than its owner may arrive, so
//!   the types that guard memory with a barrier (the bulk copies' tiles)
//!   keep theirs to themselves and arrive only by their protocol.
//!
//! Handles are per thread (their phase count is), neither `Send` nor
//! `Sync`, and checked on the simulator to be used by the thread that made
//! them.

use crate::arch;
use crate::block_agreement;
use crate::thread_owner::Owner;
use core::marker::PhantomData;

/// Words of shared memory (`u64`) that `n` barriers of one `mbarriers!`
/// take: each barrier's (one on the GPU, more on the simulator), then the
/// invocation's [tag](self#why-it-is-sound) of the block in which they are
/// live. For `mbarriers!` and `tma_tile!`.
#[doc(hidden)]
pub const fn __words(n: usize) -> usize {
    n * WORDS + TAG_WORDS
}

/// Words of the tag after the barriers: the block's identity
/// (`arch::block_identity`) while the barriers are live in it.
const TAG_WORDS: usize = 2;

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
    /// `base` is the start of [`__words(N)`](__words) words of the block's
    /// shared memory (the `N` barriers', then their tag), 8-byte aligned,
    /// which nothing but `MBarriers` and its handles reaches: what
    /// `mbarriers!` passes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(base: *mut u64) -> Self {
        MBarriers {
            base,
            _not_send: PhantomData,
        }
    }

    /// Initialises barrier `i` to wait for `arrivals[i]` arrivals a phase,
    /// and gives this thread's handles. A collective of the block: every
    /// thread calls it together, on the same barriers with the same counts
    /// (thread 0 initialises; two block barriers of its own surround the
    /// comparison of each thread's call with thread 0's). Panics unless
    /// every count is in `1 ..= MAX_COUNT`, in a thread whose call
    /// differs from thread 0's (other barriers: the calls of two
    /// `mbarriers!` in divergent branches; or other counts), and in every
    /// thread when these barriers were initialised already in this block:
    /// one `mbarriers!` is initialised at most once a block (evaluated
    /// again, in a loop or a closure called twice, it is the same
    /// barriers, whose earlier handles may still be in use; see the
    /// [module](self)).
    #[inline(always)]
    #[track_caller]
    pub fn init(self, arrivals: [u32; N]) -> [MBarrier; N] {
        self.init_marked(arrivals)
    }

    /// [`init`](Self::init) for a scope that ends when no thread of the
    /// block uses the handles any more: with the [`ScopeEnd`] whose
    /// [`release`](ScopeEnd::release), at that end, lets the same
    /// `mbarriers!` be initialised again in this block (the next `with` of
    /// a `tma_tile!` in a loop). Within the scope a second `init` of them
    /// (a nested scope of the same invocation) panics as `init`'s does.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn init_scoped(self, arrivals: [u32; N]) -> ([MBarrier; N], ScopeEnd) {
        let tag = self.tag();
        (
            self.init_marked(arrivals),
            ScopeEnd {
                tag,
                _not_send: PhantomData,
            },
        )
    }

    /// `init`: thread 0 reads the tag; where it is this block's identity
    /// the barriers are live, and thread 0 records that instead of
    /// initialising them (every thread then panics); otherwise it writes
    /// the tag, then initialises.
    #[inline(always)]
    #[track_caller]
    fn init_marked(self, arrivals: [u32; N]) -> [MBarrier; N] {
        for &count in &arrivals {
            if count == 0 || count > MAX_COUNT {
                bad_arrivals(count)
            }
        }
        let mine = InitCall::new(self.base, &arrivals);
        let record = init_record();
        let tag = self.tag();
        let publish = || {
            let block = arch::block_identity();
            // SAFETY: the tag's two words (`from_raw`), which only thread 0
            // reads and writes (here and in `ScopeEnd::release`).
            let live = unsafe {
                arch::load_any_bits_u64(tag) == block[0]
                    && arch::load_any_bits_u64(tag.wrapping_add(1)) == block[1]
            };
            if live {
                // SAFETY: the record's slot, as below.
                unsafe { record.write(2, 1) };
                return;
            }
            // SAFETY: as above; the barriers are live in this block from
            // here on.
            unsafe {
                tag.write(block[0]);
                tag.wrapping_add(1).write(block[1]);
            }
            for (i, &count) in arrivals.iter().enumerate() {
                // SAFETY: barrier `i`'s words (`i < N`, see `from_raw`),
                // initialised by thread 0 alone; the other threads use it
                // only after the collective.
                unsafe { arch::tma::init(self.word(i), count) };
            }
            arch::tma::fence_init();
            // SAFETY: the record's two slots, which only `init` reaches:
            // thread 0 writes them here, between the second barrier of the
            // block's previous `init` and the first of this one, and every
            // thread reads them between this one's two barriers.
            unsafe {
                record.write(0, mine.barriers);
                record.write(1, mine.counts);
                record.write(2, 0);
            }
        };
        // SAFETY: as above: thread 0 wrote it before the barrier, and
        // writes it again only after the next one.
        let read = || unsafe {
            InitCall {
                barriers: record.read(0),
                counts: record.read(1),
                live: record.read(2),
            }
        };
        block_agreement::agree(
            arch::MBARRIER_BARRIER,
            mine,
            publish,
            read,
            || thread_0_absent(),
            // Scalars: an aggregate argument would go through local memory.
            |theirs| {
                if theirs.live != 0 {
                    initialised_already()
                }
                not_the_barriers_thread_0_initialised(
                    mine.barriers == theirs.barriers,
                    mine == theirs,
                )
            },
        );
        let owner = Owner::current();
        core::array::from_fn(|i| MBarrier {
            word: self.word(i),
            index: i as u32,
            arrivals: arrivals[i],
            waited: 0,
            arrived: core::cell::Cell::new(false),
            owner,
            _not_send: PhantomData,
        })
    }

    #[inline(always)]
    fn word(&self, i: usize) -> *mut u64 {
        self.base.wrapping_add(i * WORDS)
    }

    /// The first barrier's word (the others follow, `WORDS` words each),
    /// for the types that keep their barriers' addresses (a TMA ring).
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn first_word(&self) -> *mut u64 {
        self.base
    }

    /// The first of the tag's words, after the barriers'.
    #[inline(always)]
    fn tag(&self) -> *mut u64 {
        self.base.wrapping_add(N * WORDS)
    }
}

/// The end of a scope of barriers from [`MBarriers::init_scoped`]:
/// releasing it lets their `mbarriers!` be initialised again in this block.
pub(crate) struct ScopeEnd {
    tag: *mut u64,
    _not_send: PhantomData<*mut ()>,
}

impl ScopeEnd {
    /// Marks the barriers free in this block (thread 0 clears their tag;
    /// other threads do nothing): the next `init` of the same
    /// `mbarriers!` initialises them again instead of panicking.
    ///
    /// # Safety
    /// Called by thread 0 (at least) once no thread of the block uses the
    /// scope's handles, or a `Completed` or anything else they made, any
    /// more and none will: every thread arrived on a barrier of the scope
    /// after its last use of them, and thread 0 waited for that phase
    /// (`TmaTileSlot::with`'s `done`). Initialising them again earlier
    /// would let an old handle's count of phases disagree with the
    /// barrier (a wait returning at once for a phase that never
    /// completed).
    #[inline(always)]
    pub(crate) unsafe fn release(self) {
        if crate::thread_rank() == 0 {
            // SAFETY: the tag's two words (`MBarriers::from_raw`), which
            // only thread 0 reads and writes; zeros name no block (an
            // identity's second word is a negated rank).
            unsafe {
                self.tag.write(0);
                self.tag.wrapping_add(1).write(0);
            }
        }
    }
}

/// What one thread's [`MBarriers::init`] call is: which barriers (their
/// address, the same in every thread of the block) and a digest of their
/// number and counts. Thread 0 records its own; every thread compares.
#[derive(Clone, Copy, PartialEq, Eq)]
struct InitCall {
    barriers: u64,
    counts: u64,
    /// In thread 0's record: 1 when it found the barriers live in this
    /// block and did not initialise them (0 in every thread's own call, so
    /// that every thread's comparison differs and reports it).
    live: u64,
}

impl InitCall {
    #[inline(always)]
    fn new<const N: usize>(base: *mut u64, arrivals: &[u32; N]) -> Self {
        // FNV-1a, a word at a time, over the number of barriers and their
        // counts: equal calls give equal digests; the GPU compares the
        // digest, the report the call's parts. A word at a time, so that
        // LLVM unrolls the loop and constant counts fold to a constant
        // digest (a loop over their bytes stayed a loop, its words in
        // local memory: about 500 instructions a thread at each block's
        // start).
        const PRIME: u64 = 0x0100_0000_01b3;
        let mut digest = (0xcbf2_9ce4_8422_2325 ^ N as u64).wrapping_mul(PRIME);
        for &count in arrivals {
            digest = (digest ^ u64::from(count)).wrapping_mul(PRIME);
        }
        InitCall {
            barriers: base as u64,
            counts: digest,
            live: 0,
        }
    }
}

/// The block's record of thread 0's latest [`MBarriers::init`] call (its
/// `barriers`, its `counts`, then whether it found them `live`): static
/// shared memory that only `init` reaches.
#[inline(always)]
fn init_record() -> crate::shared::SharedArray<u64> {
    crate::shared_array!(u64; 3).raw()
}

/// This thread's handle of an initialised barrier: from
/// [`MBarriers::init`]. It counts the phases this thread waited for.
pub struct MBarrier {
    word: *mut u64,
    index: u32,
    arrivals: u32,
    waited: u32,
    /// Whether this thread arrived on the phase it waits for next.
    arrived: core::cell::Cell<bool>,
    owner: Owner,
    _not_send: PhantomData<*mut ()>,
}

impl MBarrier {
    /// A handle of barrier `index` at `word`, which this thread has waited
    /// on for no phase yet.
    ///
    /// # Safety
    /// `word` is a barrier of an `mbarriers!` that `MBarriers::init`
    /// initialised with `arrivals` arrivals a phase, whose phase 0 this
    /// thread has not waited for, and no other handle of this thread
    /// arrives on it.
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) unsafe fn from_raw(word: *mut u64, index: u32, arrivals: u32) -> MBarrier {
        MBarrier {
            word,
            index,
            arrivals,
            waited: 0,
            arrived: core::cell::Cell::new(false),
            owner: Owner::current(),
            _not_send: PhantomData,
        }
    }

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

    /// One arrival on the phase in progress: this thread's one arrival on
    /// phase [`phase()`](Self::phase). Panics when this thread arrived
    /// since its last [`wait`](Self::wait) already (see the
    /// [module](self): a thread arrives at most once a phase).
    #[inline(always)]
    #[track_caller]
    pub fn arrive(&self) {
        self.owner.check("an MBarrier");
        self.one_arrival();
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
    /// (`arrive.expect_tx`). Panics when `bytes > MAX_COUNT`, or as
    /// [`arrive`](Self::arrive) when this thread arrived on the phase
    /// already.
    #[inline(always)]
    #[track_caller]
    pub fn arrive_expect_tx(&self, bytes: u32) {
        self.owner.check("an MBarrier");
        if bytes > MAX_COUNT {
            bad_tx(bytes)
        }
        self.one_arrival();
        // SAFETY: an initialised barrier; `bytes` in range.
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::arrive_expect_tx(self.word, bytes);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::arrive_expect_tx(self.word, self.index as usize, bytes);
        }
    }

    /// Records this thread's arrival on phase [`phase()`](Self::phase):
    /// a second one before the wait is a panic, on every target. On the
    /// simulator, an arrival on a later phase (the phase this thread waits
    /// for completed without its arrival: more threads arrive on a phase
    /// than its count) is reported too.
    #[inline(always)]
    #[track_caller]
    fn one_arrival(&self) {
        if self.arrived.replace(true) {
            arrived_twice(self.index, self.waited, self.arrivals)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            // SAFETY: an initialised barrier (`MBarriers::init` made `self`).
            let phase = unsafe { arch::tma::phase_in_progress(self.word, self.index as usize) };
            if phase != self.waited {
                arrived_past_the_count(self.index, self.waited, phase, self.arrivals)
            }
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
        self.counted(phase)
    }

    /// [`wait`](Self::wait) with acquire semantics at cluster scope: what
    /// threads of other blocks of the cluster did before their arrivals
    /// on the phase (a TMA multicast's peers) happens before what this
    /// thread does after.
    #[inline(always)]
    #[track_caller]
    #[allow(dead_code)]
    pub(crate) fn wait_cluster(&mut self) -> Completed {
        self.owner.check("an MBarrier");
        let phase = self.waited;
        // SAFETY: an initialised barrier.
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::wait_parity_cluster(self.word, phase & 1);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::wait_parity_cluster(self.word, self.index as usize, phase & 1);
        }
        self.counted(phase)
    }

    /// Counts phase `phase` as waited for: its witness.
    #[inline(always)]
    fn counted(&mut self, phase: u32) -> Completed {
        self.waited = phase.wrapping_add(1);
        self.arrived.set(false);
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
fn not_the_barriers_thread_0_initialised(same_barriers: bool, same_call: bool) -> ! {
    block_agreement::wait_for_a_differing_thread(arch::MBARRIER_BARRIER, same_call);
    let what = if !same_barriers {
        "other barriers (another mbarriers!, in a branch thread 0 did not take)"
    } else {
        "the same barriers with other arrival counts"
    };
    panic!(
        "MBarriers::init: thread {} of the block initialises {what} than thread 0 did; init is a collective: every thread of the block calls it together, on the same mbarriers! with the same counts, or a barrier would be used uninitialised",
        crate::thread_rank()
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn initialised_already() -> ! {
    panic!(
        "MBarriers::init: these mbarriers are initialised already in this block and their handles may be in use; one mbarriers! is initialised once a block (evaluated again, in a loop, a closure called twice or a nested scope, it names the same barriers: another mbarriers!, or one scope after the other, gives barriers of their own)"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn thread_0_absent() -> ! {
    panic!(
        "MBarriers::init: thread {} of the block calls init, but thread 0, which initialises, did not (it exited first): init is a collective of every thread of the block",
        crate::thread_rank()
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn arrived_twice(index: u32, phase: u32, arrivals: u32) -> ! {
    panic!(
        "MBarrier::arrive: thread {} of the block arrives on mbarrier {index} twice in phase {phase} (of {arrivals} arrivals): a thread arrives at most once a phase, then waits for it (an H100 ends the kernel at an arrival past a phase's count)",
        crate::thread_rank()
    )
}

#[cfg(not(target_arch = "nvptx64"))]
#[cold]
#[inline(never)]
#[track_caller]
fn arrived_past_the_count(index: u32, waits_for: u32, in_progress: u32, arrivals: u32) -> ! {
    panic!(
        "MBarrier::arrive: thread {} of the block arrives on mbarrier {index} for phase {waits_for}, which completed without it (phase {in_progress} is in progress): more threads arrive on a phase than its {arrivals} arrivals (an H100 ends the kernel at an arrival past a phase's count)",
        crate::thread_rank()
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_tx(bytes: u32) -> ! {
    panic!("MBarrier::arrive_expect_tx: {bytes} bytes is more than {MAX_COUNT}, PTX's limit of a transaction count")
}
