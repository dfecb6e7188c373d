//! Single-pass scans by decoupled look-back (Merrill and Garland's, as CUB's
//! `DeviceScan` computes them): each block claims a tile of the input, scans
//! it, publishes its total, and looks back over the totals its predecessors
//! published to find its prefix; one pass over the data, in one launch.
//!
//! Three pieces, all safe:
//!
//! - [`claim_tile`]: the blocks take tiles in order from a counter
//!   (`&DeviceAtomic<u32>`, zero at the launch), so a tile is only started
//!   once every earlier tile has been started by a block already running:
//!   a look-back never waits on a block that cannot run (on a GPU that
//!   schedules blocks in any order, or on the simulator).
//! - [`TileClaim::scan`]: the block's exclusive scan of one value per thread
//!   continued across tiles. Its first thread publishes the tile's total in
//!   the tile's [`TileStatus`] word; its first warp looks back over the
//!   predecessors' words (32 at a time, their flag and value read together
//!   in one 64-bit word) until it meets an inclusive prefix, publishes its
//!   own, and gives the block its prefix.
//! - [`TileOwner`]: what the scan gives each thread of the block that owns
//!   the tile, the token for writing the tile's elements of an output of
//!   map [`ClaimedRuns`](crate::ownership::ClaimedRuns).
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::collective::Sum;
//! use gpu_device::lookback::{claim_tile, TileStatus};
//! use gpu_device::ownership::ClaimedRuns;
//!
//! // With `#[kernel]`: an exclusive prefix sum over the whole input, one
//! // run of 4 elements a thread (tiles of 4 * block size elements).
//! pub fn prefix_sums(
//!     input: &[u32],
//!     mut out: DisjointSlice<u32, ClaimedRuns<4, 1>>,
//!     counter: &[DeviceAtomic<u32>],
//!     status: &[DeviceAtomic<TileStatus>],
//!     block: Block,
//! ) {
//!     let claim = claim_tile(block, &counter[0], status);
//!     let start = claim.run_start::<4, 1>(0).unwrap_or(usize::MAX);
//!     let run: [u32; 4] = gpu_device::vector::read_run_or(input, start, 0);
//!     let total = run.iter().fold(0u32, |a, b| a.wrapping_add(*b));
//!     let (_r, owner, scan) = claim.scan(total, 0, Sum);
//!     let mut sums = [0u32; 4];
//!     let mut running = scan.value;
//!     for i in 0..4 {
//!         sums[i] = running;
//!         running = running.wrapping_add(run[i]);
//!     }
//!     out.set_run(&owner, 0, sums);
//! }
//! ```
//!
//! # Why it is sound
//!
//! A thread writes an output of map [`ClaimedRuns`](crate::ownership::ClaimedRuns)
//! only with a [`TileOwner`] of its tile, and a block gets one only after
//! its first thread changed the tile's status word from *empty*
//! (compare-and-swap) to the tile's total: a word leaves *empty* once, so
//! at most one block of the launch owns each tile, whatever the counter
//! says. The status words are `&[DeviceAtomic<TileStatus>]`, whose only
//! operations are this module's (a `TileStatus` is not an
//! [`AtomicElement`](crate::AtomicElement): no `swap` can make a word empty
//! again), and the runtime refuses a kernel with two such parameters, which
//! would let two blocks own tile `c`, one through each. A word that is not
//! empty at the launch (stale words, or a counter that hands out a tile
//! twice) makes the claiming block panic (a trap on the GPU, a report on
//! the simulator): the launch fails, no wrong sum is reported as right.
//!
//! What a block gives its threads (the tile's index, the prefix) passes
//! through the collectives' private scratch, written by one thread and read
//! by the others after the collectives' own barrier
//! (`shared::scratch` has the protocol). The status words are read and
//! written with relaxed GPU-scope 64-bit accesses: flag and value travel
//! together, so no fence is needed.

use crate::arch::{self, COLLECTIVE_BARRIER};
use crate::atomic::DeviceAtomic;
use crate::collective::{Operator, Scanned};
use crate::ownership::NotSend;
use crate::shared::scan::combine_warp_totals;
use crate::shared::scratch::{scratch, BROADCAST, CLAIM};
use crate::shared::{Block, Reading, ReduceElement, Writing};
use crate::warp::Lanes;
use core::marker::PhantomData;

/// A tile's status word for a look-back: *empty*, the tile's total, or the
/// inclusive prefix up to and including the tile, with a 32-bit value.
/// Zero is *empty*: a buffer of them for a launch is made with
/// `DeviceBuffer::zeroed_on` (or zeroed between launches).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, crate::DeviceCopy)]
pub struct TileStatus(u64);

const EMPTY: u64 = 0;
const AGGREGATE: u64 = 1;
const PREFIX: u64 = 2;

impl TileStatus {
    /// The word for `flag` and `bits`.
    #[inline(always)]
    fn word(flag: u64, bits: u32) -> u64 {
        flag << 32 | bits as u64
    }
}

/// The status-word protocol's accesses. Only this module's.
impl DeviceAtomic<TileStatus> {
    #[inline(always)]
    fn word_ptr(&self) -> *mut u64 {
        // `TileStatus` is a transparent `u64`, and the cell a transparent
        // `UnsafeCell<TileStatus>`.
        self.as_ptr().cast::<u64>()
    }

    #[inline(always)]
    fn load_word(&self) -> u64 {
        // SAFETY: the cell is valid, 8-byte aligned device memory (a kernel's
        // `&[DeviceAtomic<TileStatus>]`, or shared memory), and this
        // module's atomics are its only accesses (`TileStatus` has no
        // other).
        unsafe { arch::load_relaxed_gpu_u64(self.word_ptr()) }
    }

    #[inline(always)]
    fn store_word(&self, word: u64) {
        // SAFETY: as in `load_word`.
        unsafe { arch::store_relaxed_gpu_u64(self.word_ptr(), word) }
    }

    /// Whether the word was empty and now holds `word`.
    #[inline(always)]
    fn fill_empty(&self, word: u64) -> bool {
        // SAFETY: as in `load_word`.
        unsafe { arch::cas_relaxed_gpu_u64(self.word_ptr(), EMPTY, word) == EMPTY }
    }
}

/// Values a look-back carries in a status word: 32-bit integers and floats.
/// Sealed.
pub trait StatusValue: ReduceElement + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! status_value {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl StatusValue for $t {}
    )*};
}
status_value!(u32, i32, f32);

#[inline(always)]
fn bits<T: StatusValue>(value: T) -> u32 {
    value.to_words().0
}

#[inline(always)]
fn value<T: StatusValue>(word: u64) -> T {
    T::from_words(word as u32, 0)
}

/// `value`, computed here and held in one register (see [`TileClaim::hold`]).
#[inline(always)]
fn hold<T: StatusValue>(value: T) -> T {
    self::value(arch::computed_here(bits(value)) as u64)
}

#[cold]
#[inline(never)]
#[track_caller]
fn whole_warps_needed(size: usize) -> ! {
    panic!("claim_tile needs blocks of whole warps (a multiple of 32 threads, the look-back's warp among them); this launch has blocks of {size}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn claim_past_the_status(tile: usize, len: usize) -> ! {
    panic!("tile {tile} was claimed but there are {len} tile status words: the counter was not zero at the launch, or blocks claim more tiles than there are words")
}

#[cold]
#[inline(never)]
#[track_caller]
fn claimed_twice(tile: usize) -> ! {
    panic!("the status word of tile {tile} was not empty when its block published the tile's total: the tile was claimed twice (the counter was not zero at the launch) or the words were not zeroed before it")
}

/// Claims the next tile for this block: the block's first thread takes a
/// number from `counter` (zero at the launch, incremented once per claim)
/// and every thread gets it. Every thread of the block must call it, in
/// blocks of whole warps (it panics in others). Panics when the number is
/// not below `status.len()`.
///
/// The claim holds the block's phase token until [`TileClaim::scan`], the
/// only way on: read the tile's inputs in between.
#[inline(always)]
#[track_caller]
pub fn claim_tile<'a>(
    block: Block<Writing>,
    counter: &DeviceAtomic<u32>,
    status: &'a [DeviceAtomic<TileStatus>],
) -> TileClaim<'a> {
    let size = block.size();
    if !size.is_multiple_of(32) {
        whole_warps_needed(size);
    }
    let slot = scratch::<u32>();
    if block.thread_rank() == 0 {
        let tile = counter.fetch_add(1);
        // SAFETY: slot `CLAIM` of the collectives' private scratch: written
        // here by rank 0 alone, read below after the collectives' barrier;
        // no thread reads or writes it again before this claim's scan has
        // passed its phase barrier (the next claim needs a Writing token,
        // which this claim holds until then).
        unsafe { slot.raw().write(CLAIM, tile) };
    }
    arch::barrier(COLLECTIVE_BARRIER);
    // A `u32` (the counter's), widened where it indexes: one register
    // where a `usize` takes two, across the look-back.
    // SAFETY: in bounds (`CLAIM < SLOTS`), written as a `u32` by rank 0
    // before the barrier (see above).
    let tile = unsafe { slot.raw().read(CLAIM) };
    if tile as usize >= status.len() {
        claim_past_the_status(tile as usize, status.len());
    }
    TileClaim {
        block,
        tile,
        status,
    }
}

/// A tile this block has claimed, not yet scanned: its index, for reading
/// its inputs. Holds the block's phase token; [`scan`](Self::scan) goes on.
pub struct TileClaim<'a> {
    block: Block<Writing>,
    tile: u32,
    status: &'a [DeviceAtomic<TileStatus>],
}

/// Where this thread's `k`-th run of `RUN` elements starts in tile `tile`
/// of blocks of `size` threads (a multiple of 32) arranged as
/// [`ClaimedRuns<RUN, RUNS>`](crate::ownership::ClaimedRuns); `None` past
/// `RUNS` or where the index would overflow.
#[inline(always)]
pub(crate) fn run_start<const RUN: usize, const RUNS: usize>(
    tile: usize,
    rank: usize,
    size: usize,
    k: usize,
) -> Option<usize> {
    if k >= RUNS {
        return None;
    }
    let tile_len = size.checked_mul(RUN)?.checked_mul(RUNS)?;
    let warp_len = 32 * RUN * RUNS;
    let run = rank % 32 + 32 * k;
    tile.checked_mul(tile_len)?
        .checked_add(rank / 32 * warp_len)?
        .checked_add(run * RUN)
}

impl TileClaim<'_> {
    /// The claimed tile's index.
    #[inline(always)]
    pub fn tile(&self) -> usize {
        self.tile as usize
    }

    /// Where this thread's `k`-th run of `RUN` elements starts in the tile,
    /// as an output of map [`ClaimedRuns<RUN, RUNS>`](crate::ownership::ClaimedRuns)
    /// places them, for reading the inputs the same way; `None` for `k >=
    /// RUNS` or past `usize`.
    #[inline(always)]
    pub fn run_start<const RUN: usize, const RUNS: usize>(&self, k: usize) -> Option<usize> {
        run_start::<RUN, RUNS>(
            self.tile as usize,
            self.block.thread_rank(),
            self.block.size(),
            k,
        )
    }

    /// `value`, computed now, before the look-back: held in one register
    /// across it. Without this the compiler may compute a value the block
    /// needs only after the look-back (each run's prefix before its row, in
    /// `gpu_ops::scan`) there, from its operands, and keep those live
    /// across it instead, several registers for one.
    #[inline(always)]
    pub fn hold<T: StatusValue>(&self, value: T) -> T {
        hold(value)
    }

    /// The exclusive scan, across the tiles in their order, of one `value`
    /// per thread (threads in rank order within a tile): each thread gets
    /// `initial` combined with the values of every thread before it, in
    /// this tile and all earlier ones, and the tile's total; with the
    /// [`TileOwner`] token of the tile. `op` must be the same in every
    /// block. Every thread of the block must call it (it has barriers and
    /// warp shuffles); returns the phase token in the Reading phase.
    ///
    /// Panics (in the block's first thread) when the tile's status word is
    /// not empty (see the [module documentation](self)).
    #[inline(always)]
    #[track_caller]
    pub fn scan<T: StatusValue>(
        self,
        value: T,
        initial: T,
        op: impl Operator<T>,
    ) -> (Block<Reading>, TileOwner, Scanned<T>) {
        let lanes = Lanes::of(self.block.thread_rank(), self.block.size());
        let inclusive = lanes.inclusive_scan(value, &op);
        let in_warp = lanes.exclusive_from_inclusive(inclusive, value, &op);
        let (r, owner, before, total) = self.finish(lanes, inclusive, lanes.count - 1, &op);
        let before = match (before, in_warp) {
            (Some(b), Some(w)) => Some(op.combine(b, w)),
            (b, w) => b.or(w),
        };
        let value = before.map_or(initial, |b| op.combine(initial, b));
        (r, owner, Scanned { value, total })
    }

    /// The same scan when each warp has already combined its values
    /// (every lane passes its warp's `warp_total`; warps in rank order):
    /// each thread gets `initial` combined with the totals of every warp
    /// before its own, in this tile and all earlier ones, and the tile's
    /// total. What a tile arranged as
    /// [`ClaimedRuns`](crate::ownership::ClaimedRuns) needs, whose warps
    /// scan their own elements; no warp scan here. Otherwise as
    /// [`scan`](Self::scan).
    #[inline(always)]
    #[track_caller]
    pub fn scan_by_warp<T: StatusValue>(
        self,
        warp_total: T,
        initial: T,
        op: impl Operator<T>,
    ) -> (Block<Reading>, TileOwner, Scanned<T>) {
        let lanes = Lanes::of(self.block.thread_rank(), self.block.size());
        let (r, owner, before, total) = self.finish(lanes, warp_total, 0, &op);
        let value = before.map_or(initial, |b| op.combine(initial, b));
        (r, owner, Scanned { value, total })
    }

    /// The rest of a tile's scan, from each warp's total (held by lane
    /// `writer`): the warps' totals combined (one phase barrier), the
    /// look-back by the first warp, the tile's prefix given to every thread
    /// (the collectives' barrier). Returns the token, the owner, the
    /// combination of everything before the thread's warp (`None` for the
    /// first warp of tile 0) and the tile's total.
    #[inline(always)]
    #[track_caller]
    fn finish<T: StatusValue>(
        self,
        lanes: Lanes,
        warp_total: T,
        writer: u32,
        op: &impl Operator<T>,
    ) -> (Block<Reading>, TileOwner, Option<T>, T) {
        let TileClaim {
            block,
            tile,
            status,
        } = self;
        let (rank, size) = (block.thread_rank(), block.size());
        let (r, prefix) = combine_warp_totals(block, lanes, warp_total, writer, op);
        let aggregate = prefix.total;
        // What comes before the thread's warp, one register held across
        // the look-back (else the compiler picks it from the warps' totals
        // after it, and keeps them all live).
        let held = hold(prefix.before.unwrap_or(aggregate));
        let before_warp = prefix.before.map(|_| held);
        let broadcast = scratch::<T>();
        if rank < 32 {
            // The whole first warp (blocks are whole warps).
            let exclusive = look_back(status, tile, aggregate, op, lanes.lane);
            if let (0, Some(exclusive)) = (lanes.lane, exclusive) {
                // SAFETY: slot `BROADCAST` of the private scratch, written
                // by rank 0 alone in the Reading phase this scan's phase
                // barrier began, in which no other collective reads it; read
                // below after the collectives' barrier; written next by a
                // collective that needs a Writing token, after the next
                // phase barrier (see `shared::scratch`).
                unsafe { broadcast.raw().write(BROADCAST, exclusive) };
            }
        }
        arch::barrier(COLLECTIVE_BARRIER);
        let tile_prefix = if tile == 0 {
            None
        } else {
            // SAFETY: in bounds, written as a `T` by rank 0 before the
            // barrier (above).
            Some(unsafe { broadcast.raw().read(BROADCAST) })
        };
        let before = match (tile_prefix, before_warp) {
            (Some(t), Some(b)) => Some(op.combine(t, b)),
            (t, b) => t.or(b),
        };
        let owner = TileOwner {
            tile,
            rank,
            size,
            _thread: PhantomData,
        };
        (r, owner, before, aggregate)
    }
}

/// The look-back, by the block's first warp (all 32 lanes): lane 0
/// publishes the tile's `aggregate`, then the warp reads the predecessors'
/// words 32 at a time (lane `l` the `l`-th before), waiting while any is
/// empty, and combines the values back to the nearest inclusive prefix;
/// lane 0 publishes the tile's inclusive prefix and returns the exclusive
/// one (`None` for tile 0 and in the other lanes).
#[inline(always)]
#[track_caller]
fn look_back<T: StatusValue>(
    status: &[DeviceAtomic<TileStatus>],
    tile: u32,
    aggregate: T,
    op: &impl Operator<T>,
    lane: u32,
) -> Option<T> {
    use crate::warp::FULL_MASK;
    let word = &status[tile as usize];
    if lane == 0 {
        let flag = if tile == 0 { PREFIX } else { AGGREGATE };
        if !word.fill_empty(TileStatus::word(flag, bits(aggregate))) {
            claimed_twice(tile as usize);
        }
    }
    if tile == 0 {
        return None;
    }
    // Let the predecessors' totals reach L2 before the first read (as
    // CUB's tuned delay for large grids); then poll with a growing pause.
    if arch::grid_dim()[0] >= LARGE_GRID {
        arch::nanosleep(FIRST_READ_DELAY_NS);
    }
    let mut exclusive: Option<T> = None;
    // The window's end, a `u32` as `tile` (one register, not two).
    let mut end = tile;
    loop {
        let read = || match end.checked_sub(1 + lane) {
            Some(p) => status[p as usize].load_word(),
            // Before tile 0: never combined (tile 0 holds a prefix, in a
            // lower lane), read as a prefix so that nothing waits on it.
            None => TileStatus::word(PREFIX, 0),
        };
        // Each lane waits for its own word (with a growing pause), then the
        // warp meets again: the same as CUB's re-reading of the window while
        // any lane sees an empty word, without a warp vote per read (so a
        // wait that never ends is no progress to the simulator's watchdog).
        let mut s = read();
        let mut pause = 32;
        while s >> 32 == EMPTY {
            arch::nanosleep(pause);
            pause = (pause * 2).min(MAX_POLL_DELAY_NS);
            s = read();
        }
        let prefixes = arch::ballot(FULL_MASK, s >> 32 == PREFIX);
        // The nearest inclusive prefix (the lowest lane), else the whole window.
        let stop = if prefixes != 0 {
            prefixes.trailing_zeros()
        } else {
            31
        };
        // Lanes `0 ..= stop`, the later tile in the lower lane, combined
        // earliest first into lane 0 (distances 1, 2, 4, ...: lane `i`
        // then holds lanes `i .. i + 2 d`). `lane + d <= stop` is `d <=
        // room`: one value a window, where the sums `lane + d` were five
        // registers held across the whole look-back.
        let room = stop.saturating_sub(lane);
        let mut v: T = value(s);
        let mut d = 1;
        while d < 32 {
            let other =
                crate::warp::shuffle_in_mask(crate::arch::ShuffleMode::Down, FULL_MASK, v, d);
            if d <= room {
                v = op.combine(other, v);
            }
            d *= 2;
        }
        exclusive = Some(exclusive.map_or(v, |e| op.combine(v, e)));
        if prefixes != 0 {
            break;
        }
        end -= 32;
    }
    if lane != 0 {
        return None;
    }
    let exclusive = exclusive.expect("the loop ran");
    word.store_word(TileStatus::word(
        PREFIX,
        bits(op.combine(exclusive, aggregate)),
    ));
    Some(exclusive)
}

/// Grids of at least this many blocks wait [`FIRST_READ_DELAY_NS`] before
/// their first look-back read (CUB's threshold).
const LARGE_GRID: u32 = 500;
/// CUB's tuned pause for 4-byte sums on sm_90 (its "L2 write latency").
const FIRST_READ_DELAY_NS: u32 = 1245;
/// The longest pause between two reads of a window still waiting.
const MAX_POLL_DELAY_NS: u32 = 640;

/// A thread's proof that its block owns a claimed tile: no other block of
/// the launch holds a `TileOwner` of the same tile. From
/// [`TileClaim::scan`]; neither `Send` nor `Sync`. It names the elements
/// this thread may write of an output of map
/// [`ClaimedRuns`](crate::ownership::ClaimedRuns).
#[derive(Clone, Copy, Debug)]
pub struct TileOwner {
    tile: u32,
    rank: usize,
    size: usize,
    _thread: NotSend,
}

impl TileOwner {
    /// The tile's index.
    #[inline(always)]
    pub fn tile(&self) -> usize {
        self.tile as usize
    }

    /// Where this thread's `k`-th run of `RUN` elements starts in the tile
    /// (see [`TileClaim::run_start`]).
    #[inline(always)]
    pub fn run_start<const RUN: usize, const RUNS: usize>(&self, k: usize) -> Option<usize> {
        run_start::<RUN, RUNS>(self.tile as usize, self.rank, self.size, k)
    }
}
