//! Thread-block clusters (sm_90 and later), as CUDA's
//! `cooperative_groups::this_cluster()`: the blocks of a cluster run at
//! once on neighbouring multiprocessors, wait for each other at a cluster
//! barrier, and read each other's shared memory (distributed shared memory).
//!
//! A kernel declares its cluster shape, `#[kernel(arch = "sm_90", cluster =
//! (2, 1, 1))]` (CUDA's `__cluster_dims__`), and takes a [`Cluster`]
//! parameter, the witness built on the device. A kernel without `cluster`
//! cannot take one (a compile error), and the runtime launches a cluster
//! kernel only with its declared cluster shape (PTX `.reqnctapercluster`,
//! `cuLaunchKernelEx` with the cluster dimension), refusing a grid that the
//! shape does not divide.
//!
//! Another block's shared memory is read only through
//! [`Cluster::exchange`]: each thread writes its own slots of a
//! [`shared_array!`](crate::shared_array) in its own block, a cluster
//! barrier, then any thread reads any block's slots, and a cluster barrier
//! again before the exchange returns.
//!
//! # Why it is sound
//!
//! Every cluster operation is a *pair* of hardware cluster barriers:
//! [`Cluster::sync`], [`Cluster::exchange`], entering and leaving a TMA
//! tile's multicast scope ([`TmaTileSlotNd::with_multicast`](crate::tma::TmaTileSlotNd::with_multicast),
//! checked as an exchange is), and the end of the kernel
//! (the entry point runs one after the body returns, for every thread,
//! before it exits). Pairs do not nest: a `sync` or an `exchange` inside an
//! exchange's `read` panics (its barriers would fall between the outer
//! pair's two). So the `k`-th barrier pair of every thread of the cluster
//! is the same pair, whatever each thread called: a barrier completes only
//! when every thread not exited has arrived, and every thread that has not
//! exited is in some pair, each window between a pair's two barriers.
//!
//! 1. *No writes in a window.* Between a pair's two barriers every thread
//!    of the cluster is inside a pair operation: an exchange's `read`, a
//!    sync or the end of the kernel. In `read` the phase token is borrowed,
//!    and nothing else safe writes a [`Shared`] array of the default map
//!    (TMA tiles, `cp.async` rings and mbarriers are other memory), so no
//!    exchanged array is written. An exchange's fills are all before its
//!    first barrier; so a peer's slots read in the window are complete and
//!    still; and the tags, stored before a pair's first barrier and read
//!    between its two, never meet their next store.
//! 2. *Every pair says what it is.* Before its first barrier each thread
//!    stores its block's *tag*: the pair's number and what the pair is (a
//!    sync, the end of the kernel, or the exchange of which array, with its
//!    byte length). In the window an exchange reads every block's tag and
//!    panics (a trap on the GPU, a report on the simulator) unless every
//!    block exchanges the same array in the same pair: one block's sync
//!    meeting another's exchange, two different arrays, or a block at the
//!    end of the kernel, is an error, never a read of a slot its owner is
//!    writing or never wrote.
//! 3. *No block leaves while a peer may read it.* A thread at the end of the
//!    kernel keeps taking part in pairs until every block's tag says it is
//!    at the end too; and once a thread has seen a block's end (in any
//!    pair), it never reads that block again (its exchanges then panic).
//!    So a block's shared memory is read only while one of its threads is
//!    waiting in the same window: CUDA's rule that shared memory is gone
//!    once its block exits holds.
//!
//! A thread whose block-mates make different pairs (one exchanges, one
//! syncs) gets an error or, in the block-mates' slots it did not write, the
//! leftover bits any shared slot holds before its first write
//! ([`SharedElement`]): never a race.
//!
//! ```text
//! #[kernel(arch = "sm_90", block = 64, cluster = 2)]
//! pub fn swap(mut out: DisjointSlice<u32>, block: Block, cluster: Cluster) {
//!     let slots = shared_array!(u32; 64);
//!     let mut w = block;
//!     let rank = cluster.block_rank();
//!     let peer = (rank + 1) % cluster.size();
//!     let got = cluster.exchange(&mut w, &slots, |slot| rank * 1000 + slot as u32, |peers| {
//!         peers.get(peer, w_rank)
//!     });
//!     ...
//! }
//! ```

use crate::arch;
use crate::ownership::{BlockStride, NotSend};
use crate::shared::{Block, Phase, Shared, SharedElement};
use crate::thread_owner::Owner;
use core::cell::Cell;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};

/// The cluster witness of a `#[kernel(cluster = ...)]` kernel's thread:
/// each thread of such a launch gets one (its `Cluster` parameter), and
/// only those. Neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct Cluster {
    owner: Owner,
    /// This thread's pair count and what it has seen, in the entry
    /// point's frame (which outlives the body the witness is given to).
    state: *const ClusterState,
    _thread: NotSend,
}

impl core::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Cluster")
    }
}

/// One thread's record of its cluster operations (see the [module
/// documentation](self)): made by the entry point of a kernel that takes
/// a [`Cluster`], which runs [`finish`](Self::finish) after the body.
#[doc(hidden)]
#[derive(Debug)]
pub struct ClusterState {
    /// The barrier pairs this thread has made.
    pairs: Cell<u32>,
    /// The ranks of the blocks this thread has seen at the end of the
    /// kernel: never read again.
    left: Cell<u32>,
    /// Whether this thread is in an exchange's `read` (where a pair
    /// would nest).
    in_read: Cell<bool>,
}

/// What a pair is, in its tag's first word: a sync, the end of the
/// kernel, or (any other value) an exchange of the array that value names
/// (`arch::cluster::shared_identity`, the same in every block).
const SYNC: u64 = 0;
const LEAVING: u64 = 1;

/// A block's tag: what its threads' current pair is, and the pair's number
/// with the exchanged array's byte length.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Tag {
    what: u64,
    count_and_bytes: u64,
}

impl Tag {
    fn new(what: u64, pair: u32, bytes: u32) -> Tag {
        Tag {
            what,
            count_and_bytes: (u64::from(pair) << 32) | u64::from(bytes),
        }
    }

    /// The tag of an operation on the shared memory at `address` (an
    /// exchanged array, a multicast tile) of `bytes` (flags included).
    #[inline(always)]
    fn of(address: *const u8, pair: u32, bytes: u32) -> Tag {
        let identity = arch::cluster::shared_identity(address, tag_words().cast::<u8>());
        // 0 and 1 name a sync and the end (no array has those identities:
        // on the GPU they are multiples of 16 from the tag, never 0).
        Tag::new(identity.max(LEAVING + 1), pair, bytes)
    }

    fn pair(self) -> u32 {
        (self.count_and_bytes >> 32) as u32
    }

    /// What the tag's operation is, as an operation's reports name it.
    fn kind(self) -> &'static Operation {
        match self.what {
            SYNC => &SYNCING,
            LEAVING => &ENDING,
            _ if self.count_and_bytes as u32 & ENTERING_MULTICAST != 0 => &ENTERING,
            _ if self.count_and_bytes as u32 & LEAVING_MULTICAST != 0 => &LEAVING_SCOPE,
            _ => &EXCHANGE,
        }
    }
}

/// The flags of a multicast tile scope's pairs, in the tag's byte count
/// (an exchanged array's bytes are below 2^18).
const ENTERING_MULTICAST: u32 = 1 << 30;
const LEAVING_MULTICAST: u32 = 1 << 31;

/// A kind of cluster operation, for the reports of a block out of step:
/// its name, what a block in it is doing (the same kind with another
/// array or tile, or another kind), and the rule.
struct Operation {
    id: u8,
    name: &'static str,
    doing_another: &'static str,
    doing: &'static str,
    rule: &'static str,
}

const SYNCING: Operation = Operation {
    id: 0,
    name: "Cluster::sync",
    doing_another: "is in a Cluster::sync",
    doing: "is in a Cluster::sync",
    rule: "",
};
const ENDING: Operation = Operation {
    id: 1,
    name: "end of the kernel",
    doing_another: "has finished the kernel",
    doing: "has finished the kernel",
    rule: "",
};
const EXCHANGE: Operation = Operation {
    id: 2,
    name: "Cluster::exchange",
    doing_another: "exchanges another shared array",
    doing: "is in a Cluster::exchange",
    rule: "every block of the cluster exchanges the same shared array together",
};
const ENTERING: Operation = Operation {
    id: 3,
    name: "TmaTileSlot::with_multicast",
    doing_another: "enters the multicast scope of another TMA tile",
    doing: "enters a TMA tile's multicast scope",
    rule: "every block of the cluster enters and leaves the same tile's multicast scope together, and makes the same loads in it",
};
const LEAVING_SCOPE: Operation = Operation {
    id: 4,
    name: "end of a TmaTileSlot::with_multicast",
    doing_another: "leaves the multicast scope of another TMA tile",
    doing: "leaves a TMA tile's multicast scope",
    rule: "every block of the cluster enters and leaves the same tile's multicast scope together, and makes the same loads in it",
};

/// This block's tag words in its shared memory.
#[inline(always)]
fn tag_words() -> *mut u64 {
    let tag = crate::shared_array!(u64; 2);
    tag.raw().as_mut_ptr()
}

impl ClusterState {
    /// No pairs made, no block seen leaving.
    #[inline(always)]
    pub const fn new() -> ClusterState {
        ClusterState {
            pairs: Cell::new(0),
            left: Cell::new(0),
            in_read: Cell::new(false),
        }
    }

    /// The end of the kernel for this thread: pairs tagged as leaving until
    /// every block it has not seen leave is leaving too (see the [module
    /// documentation](self)).
    ///
    /// # Safety
    /// Called once per thread, by the entry point of a cluster launch of a
    /// kernel declaring its cluster shape, after the body returned.
    #[inline(never)]
    pub unsafe fn finish(&self) {
        loop {
            let pair = self.begin(Tag::new(LEAVING, self.next_pair(), 0));
            let all_leaving = self.note_leaving(pair);
            arch::cluster::sync();
            if all_leaving {
                return;
            }
        }
    }

    /// Reads, inside pair `pair`, the tag of every block this thread has
    /// not seen leave, and records those at the end of the kernel as left.
    /// Returns whether all of them were.
    #[inline(always)]
    #[track_caller]
    fn note_leaving(&self, pair: u32) -> bool {
        let mut all_leaving = true;
        for rank in 0..arch::cluster::size() {
            if self.has_left(rank) {
                continue;
            }
            if self.peer_tag(rank, pair).what == LEAVING {
                self.left.set(self.left.get() | 1 << rank);
            } else {
                all_leaving = false;
            }
        }
        all_leaving
    }

    /// The number of this thread's next pair.
    #[inline(always)]
    fn next_pair(&self) -> u32 {
        self.pairs.get().wrapping_add(1)
    }

    /// Starts a pair: stores `tag` as this block's, then the pair's first
    /// barrier. Returns the pair's number.
    #[inline(always)]
    #[track_caller]
    fn begin(&self, tag: Tag) -> u32 {
        if self.in_read.get() {
            nested_pair();
        }
        let pair = self.next_pair();
        self.pairs.set(pair);
        let words = tag_words();
        // SAFETY: the tag's two words, this block's, 16-byte aligned;
        // written only here, atomically (block-mates in different pairs
        // may store at once), and read by any block only between the
        // barriers of a pair, after every store of that pair's tags.
        unsafe {
            AtomicU64::from_ptr(words).store(tag.what, Ordering::Relaxed);
            AtomicU64::from_ptr(words.add(1)).store(tag.count_and_bytes, Ordering::Relaxed);
        }
        arch::cluster::sync();
        pair
    }

    /// Starts a pair tagged `mine`, an operation of kind `operation`, and
    /// checks that every block's tag in it is `mine` too: panics naming the
    /// first block that is elsewhere (see the [module documentation](self)).
    /// The caller ends the pair (its second barrier).
    #[inline(always)]
    #[track_caller]
    fn all_in(&self, mine: Tag, operation: &Operation) {
        let pair = self.begin(mine);
        for rank in 0..arch::cluster::size() {
            if self.has_left(rank) {
                not_in(rank, operation, ENDING.doing);
            }
            let theirs = self.peer_tag(rank, pair);
            if theirs != mine {
                let kind = theirs.kind();
                let doing = if kind.id == operation.id {
                    kind.doing_another
                } else {
                    kind.doing
                };
                not_in(rank, operation, doing);
            }
        }
    }

    /// Whether this thread has seen block `rank` at the end of the kernel.
    #[inline(always)]
    fn has_left(&self, rank: u32) -> bool {
        self.left.get() & (1 << rank) != 0
    }

    /// Block `rank`'s tag, read inside pair `pair`; panics if it names
    /// another pair (a block out of step).
    ///
    /// Called only between a pair's barriers, for a block this thread has
    /// not seen leave (so one of its threads waits in this pair).
    #[inline(always)]
    #[track_caller]
    fn peer_tag(&self, rank: u32, pair: u32) -> Tag {
        // SAFETY: `rank` is below the cluster's size (the callers' loops)
        // and the words are in this block's shared memory.
        let theirs = unsafe { arch::cluster::map_shared_rank(tag_words().cast::<u8>(), rank) }
            .cast::<u64>()
            .cast_mut();
        // SAFETY: block `rank`'s tag words, 8-byte aligned: it has not
        // left (one of its threads is in this pair: every thread not exited
        // is, pairs do not nest), and they were stored before this pair's
        // first barrier, which this thread passed, and are stored again only
        // after the second, which it has not reached (read atomically all
        // the same).
        let tag = unsafe {
            Tag {
                what: AtomicU64::from_ptr(theirs).load(Ordering::Relaxed),
                count_and_bytes: AtomicU64::from_ptr(theirs.add(1)).load(Ordering::Relaxed),
            }
        };
        if tag.pair() != pair {
            out_of_step(rank, tag.pair(), pair);
        }
        tag
    }
}

impl Default for ClusterState {
    fn default() -> ClusterState {
        ClusterState::new()
    }
}

impl Cluster {
    /// The witness of this thread: called once per thread by the entry
    /// point of a `#[kernel(cluster = ...)]` kernel.
    ///
    /// # Safety
    /// The calling thread runs in a cluster launch of the kernel's declared
    /// cluster shape (every block of its cluster resident at once);
    /// `state` is this thread's, in the entry point's frame, which calls
    /// its `finish` after the body returns (the body the witness goes to).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_kernel_entry(state: &ClusterState) -> Cluster {
        Cluster {
            owner: Owner::current(),
            state,
            _thread: PhantomData,
        }
    }

    /// This thread's record, after checking the witness is this thread's.
    #[inline(always)]
    #[track_caller]
    fn state(&self) -> &ClusterState {
        self.owner.check("a Cluster witness");
        // SAFETY: the witness is this thread's (checked on the simulator;
        // on the GPU no value crosses threads or launches: the witness is
        // neither `Send` nor `Sync` nor a `SharedElement`), and its entry
        // point's frame, which holds the state, outlives the body.
        unsafe { &*self.state }
    }

    /// The block's rank in its cluster, `0..size()` (x fastest: CUDA's
    /// `cluster.block_rank()`, PTX `%cluster_ctarank`).
    #[inline(always)]
    pub fn block_rank(&self) -> u32 {
        arch::cluster::block_rank()
    }

    /// The number of blocks of the cluster (`cluster.num_blocks()`,
    /// `%cluster_nctarank`).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        arch::cluster::size()
    }

    /// The block's index in its cluster (`cluster.block_index()`,
    /// `%cluster_ctaid`).
    #[inline(always)]
    pub fn block_index(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::block_index();
        crate::Dim3 { x, y, z }
    }

    /// The cluster's shape in blocks (`cluster.dim_blocks()`,
    /// `%cluster_nctaid`): the kernel's declared `cluster`.
    #[inline(always)]
    pub fn dim(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::dim();
        crate::Dim3 { x, y, z }
    }

    /// The cluster's index in the grid of clusters (`%clusterid`).
    #[inline(always)]
    pub fn cluster_index(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::cluster_index();
        crate::Dim3 { x, y, z }
    }

    /// The grid's shape in clusters (`%nclusterid`).
    #[inline(always)]
    pub fn clusters(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::clusters();
        crate::Dim3 { x, y, z }
    }

    /// Waits until every thread of every block of the cluster has called
    /// it or another cluster operation, or finished the kernel (CUDA's
    /// `cluster.sync()`); what each thread wrote before is visible to
    /// every thread of the cluster after. Two hardware cluster barriers
    /// (`barrier.cluster.arrive` and `wait`, twice): see the [module
    /// documentation](self).
    ///
    /// Every thread of the cluster should call it the same number of
    /// times: one that does not meets the others' other cluster operations
    /// (an exchange meeting it panics) or their end of the kernel (which
    /// takes part, as a sync). Inside an exchange's `read` it panics.
    #[inline(always)]
    #[track_caller]
    pub fn sync(&self) {
        let state = self.state();
        let pair = state.begin(Tag::new(SYNC, state.next_pair(), 0));
        state.note_leaving(pair);
        arch::cluster::sync();
    }

    /// The pair that enters (or, `entering` false, leaves) the multicast
    /// scope of the TMA tile at `tile` of `bytes`: every block of the
    /// cluster must be in the same one (a panic naming the first that is
    /// not). Returns after both of the pair's barriers: what each block
    /// did before (thread 0's `mbarrier.init` of the tile's barriers) is
    /// visible to every block's threads after.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn multicast_scope(&self, tile: *const u8, bytes: u32, entering: bool) {
        let state = self.state();
        let (flag, operation) = if entering {
            (ENTERING_MULTICAST, &ENTERING)
        } else {
            (LEAVING_MULTICAST, &LEAVING_SCOPE)
        };
        state.all_in(Tag::of(tile, state.next_pair(), bytes | flag), operation);
        arch::cluster::sync();
    }

    /// Exchanges shared memory across the cluster (distributed shared
    /// memory): each thread fills the slots it owns of `array` in its own
    /// block (slot `s` gets `write(s)`, as [`Shared::fill`]: every slot
    /// of the array is written), the cluster waits at a cluster barrier,
    /// `read` runs with a view of every block's `array`, and the cluster
    /// waits at a cluster barrier again before this returns `read`'s value.
    ///
    /// Every thread of every block of the cluster calls it, with the same
    /// `array` (the same `shared_array!`). The phase token is borrowed for
    /// the whole exchange, so `read` cannot write the array (nor any other
    /// shared array of the block): no read of a peer's slot races with its
    /// write, and no block moves on, rewrites the array or exits while a
    /// peer may still read it.
    ///
    /// Panics (a trap on the GPU, a report on the simulator) when a block
    /// of the cluster is not in this exchange: it syncs instead, exchanges
    /// another array, or has finished the kernel (see the [module
    /// documentation](self)); and when `read` syncs or exchanges (cluster
    /// operations do not nest).
    #[inline(always)]
    #[track_caller]
    pub fn exchange<T, const N: usize, W, R>(
        &self,
        block: &mut Block<W>,
        array: &Shared<T, N, BlockStride, W>,
        write: impl FnMut(usize) -> T,
        read: impl FnOnce(&Peers<'_, T, N>) -> R,
    ) -> R
    where
        T: SharedElement + Copy,
        W: Phase,
    {
        let state = self.state();
        array.fill(block, write);
        let base = array.raw().as_mut_ptr();
        // The array's bytes fit a u32: shared memory is at most 228 KiB.
        let bytes = core::mem::size_of::<[T; N]>() as u32;
        state.all_in(
            Tag::of(base.cast::<u8>(), state.next_pair(), bytes),
            &EXCHANGE,
        );
        let size = arch::cluster::size();
        let peers = Peers {
            base,
            size,
            _borrow: PhantomData,
        };
        state.in_read.set(true);
        let value = read(&peers);
        state.in_read.set(false);
        arch::cluster::sync();
        value
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_in(rank: u32, operation: &Operation, doing: &str) -> ! {
    // A GPU's trap carries no message: print it first.
    #[cfg(target_arch = "nvptx64")]
    crate::println!(
        "block rank {} of the cluster is not in this {}: it {}",
        rank,
        operation.name,
        doing
    );
    panic!(
        "block rank {rank} of the cluster is not in this {}: it {doing}; {}",
        operation.name, operation.rule
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn nested_pair() -> ! {
    #[cfg(target_arch = "nvptx64")]
    crate::println!("a Cluster::sync or Cluster::exchange inside an exchange's `read`: cluster operations do not nest");
    panic!("a Cluster::sync or Cluster::exchange inside an exchange's `read`: cluster operations do not nest")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_step(rank: u32, theirs: u32, mine: u32) -> ! {
    #[cfg(target_arch = "nvptx64")]
    crate::println!(
        "block rank {} of the cluster is at its cluster operation {}, this thread at {}: the cluster's threads are out of step",
        rank,
        theirs,
        mine
    );
    panic!("block rank {rank} of the cluster is at its cluster operation {theirs}, this thread at {mine}: the cluster's threads are out of step")
}

/// Every block's instance of a shared array during a
/// [`Cluster::exchange`]: read-only, valid only inside the exchange's
/// `read` (no block writes the array or exits meanwhile).
pub struct Peers<'a, T, const N: usize> {
    /// This block's instance (the generic address `mapa` maps).
    base: *mut T,
    size: u32,
    _borrow: PhantomData<(&'a T, NotSend)>,
}

impl<T: SharedElement + Copy, const N: usize> Peers<'_, T, N> {
    /// The number of blocks of the cluster: the ranks [`get`](Self::get)
    /// takes are below it.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Slot `index` of block `rank`'s array (this block's own when `rank`
    /// is its [`block_rank`](Cluster::block_rank)). Panics (a trap on the
    /// GPU, a report on the simulator) when `rank` is not below the
    /// cluster's size or `index` not below `N`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, rank: u32, index: usize) -> T {
        if rank >= self.size {
            rank_out_of_range(rank, self.size);
        }
        if index >= N {
            index_out_of_range(index, N);
        }
        // SAFETY: `index < N`: the slot is in this block's array, in its
        // shared memory; `rank` is below the cluster's size.
        let mapped =
            unsafe { arch::cluster::map_shared_rank(self.base.add(index).cast::<u8>(), rank) };
        // SAFETY: block `rank`'s instance of the same slot, aligned as
        // this block's (the same offset in the same static array). Block
        // `rank`'s tag named this exchange of this array in this pair
        // (checked before `read` got the `Peers`): its threads filled it
        // before the pair's first cluster barrier, which this thread has
        // passed; nothing writes it, and its block does not exit, before
        // the second barrier (every thread of the cluster is in this pair),
        // which this thread reaches only after `read` returns (`Peers` does
        // not outlive it). See the module documentation.
        unsafe { core::ptr::read(mapped.cast::<T>()) }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn rank_out_of_range(rank: u32, size: u32) -> ! {
    panic!(
        "block rank {rank} is outside the cluster of {size} blocks (ranks 0 to {})",
        size - 1
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_range(index: usize, len: usize) -> ! {
    panic!("slot {index} is out of range for a cluster-shared array of {len} slots")
}
