//! A ring of shared-memory stages that bulk tensor copies fill and `wgmma`
//! reads, with the block split into roles (sm_90a): one *producer*
//! warpgroup, whose issuing thread copies each stage's two boxes (an A
//! tile and a B tile of a GEMM's k-block), and *consumer* warpgroups that
//! multiply from each stage as it lands and hand it back. This is the
//! warp-specialized main loop of CUTLASS's Hopper GEMMs: the copies of
//! later stages, the products of this one and the release of the last
//! overlap, with no block barrier in the loop.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::half::bf16;
//! use gpu_device::mma::Bf16;
//! use gpu_device::tma::{TensorMap2d, ring::TmaRing};
//! use gpu_device::wgmma::{Accumulator, Carried, Swizzle128B};
//!
//! // With `#[kernel(arch = "sm_90a")]`, 384 threads (two consumer
//! // warpgroups, then the producer) and `TmaRing::<..>::SHARED_BYTES` of
//! // dynamic shared memory: a 128 × 64 tile of `A Bᵀ`.
//! type Ring = TmaRing<Bf16, Swizzle128B, 4, 128, 64>;
//! pub fn tile(
//!     a: TensorMap2d<bf16, 128, 64, Swizzle128B>,
//!     b: TensorMap2d<bf16, 64, 64, Swizzle128B>,
//!     k_blocks: usize,
//!     smem: DynamicShared<bf16>,
//! ) {
//!     let ring = Ring::new(smem, gpu_device::mbarriers!(9));
//!     ring.with(
//!         |mut producer| {
//!             if let Some(mut issuer) = producer.issuer() {
//!                 for kb in 0..k_blocks as i32 {
//!                     issuer.load(&a, 0, 64 * kb, &b, 0, 64 * kb);
//!                 }
//!             }
//!         },
//!         |mut consumer| {
//!             let row = 64 * consumer.index();
//!             let mut acc = Carried::new(Accumulator::<64>::zero(consumer.warpgroup()));
//!             for _ in 0..k_blocks {
//!                 acc = consumer.mma(acc, row, 0);
//!             }
//!             let d = consumer.finish(acc);
//!             # let _ = d;
//!         },
//!     );
//! }
//! ```
//!
//! # Why it is sound
//!
//! Stage `s` of the ring has two barriers of the ring's own `mbarriers!`
//! (initialised by the block's collective [`MBarriers::init`]): `full[s]`
//! (one arrival, the issuer's `arrive.expect_tx` of the stage's bytes, and
//! the copies' bytes) and `empty[s]` (one arrival of each consumer warp).
//! Load `i` goes to stage `i % STAGES`; every role counts its own loads or
//! stages, so the `u`-th use of a stage is phase `u` of both its barriers.
//!
//! - *Reads after the copies landed.* A consumer reads stage `i` (its
//!   `wgmma`s' descriptors are built here, from the ring's own layout, never
//!   from user addresses) only after waiting for phase `i / STAGES` of
//!   `full[i % STAGES]`, which completes once the issuer arrived with the
//!   stage's bytes and both boxes landed (the byte count is the stage's,
//!   from the types: the maps' boxes are the stage's tiles).
//! - *No copy over a stage being read.* The issuer copies into a stage it
//!   used before only after phase `u - 1` of its `empty` barrier completed:
//!   every consumer warp arrived, and a warp arrives only in
//!   [`Consumer::mma`] or [`Consumer::finish`], after `wgmma.wait_group`
//!   retired every product that read the stage (lane 0 arrives for the
//!   warp, whose lanes are converged: each call checks the active mask).
//! - *Parities are never ambiguous.* A barrier never runs more than one
//!   phase ahead of a role's wait: `full[s]`'s phase `u + 1` needs `empty[s]`
//!   phase `u`, so every consumer's release of use `u`; `empty[s]`'s phase
//!   `u` needs the issuer's load of use `u`.
//! - *No copy outlives the ring.* Role handles live only inside
//!   [`TmaRing::with`] (their lifetime is their closure's own). When its
//!   closure returns, the issuer waits until each of its copies landed,
//!   each consumer waits for its products (`wgmma.wait_group 0`), and every
//!   thread arrives on the ring's `done` barrier, which thread 0 waits for:
//!   the block leaves the ring (and may exit, freeing its shared memory)
//!   with nothing in flight. Only then does thread 0 mark the barriers
//!   free: initialising them while they are live (a ring made again from
//!   the same `mbarriers!` inside its own scope, or aliased) is refused by
//!   [`MBarriers::init`]'s check of the block's tag.
//! - *The memory.* The ring takes the block's dynamic shared memory whole
//!   ([`DynamicShared`] by value: nothing else reaches it), checks at
//!   [`TmaRing::new`] that it holds [`SHARED_BYTES`](TmaRing::SHARED_BYTES),
//!   and aligns its stages to 1024 bytes, the 128-byte swizzle's pattern.
//! - *Roles.* The role is the warpgroup's (the last one produces): the
//!   block's size is checked to be whole warpgroups, at least two.
//!
//! What is not checked, as on any GPU: a consumer that stops early, or an
//! issuer that loads fewer stages than the consumers read, leaves the other
//! role waiting: the block hangs on the GPU (no memory rule is broken), and
//! the simulator's watchdog reports the stall.

use super::{misaligned_column, TensorMap2d, TileSwizzle};
use crate::arch;
use crate::mbarrier::{MBarrier, MBarriers, ScopeEnd, MAX_COUNT};
use crate::mma::SixteenBit;
use crate::shared::DynamicShared;
use crate::wgmma::{Accumulator, Carried, Operand16, Shape, Swizzle, Warpgroup, M64N};

mod b_major;

pub use b_major::{BMajor, KMajor, MnMajor};
use core::cell::Cell;
use core::marker::PhantomData;

/// A ring of `STAGES` stages, each `A_ROWS` rows of A then B's tile of
/// `B_ROWS` (its N), rows of `S::BYTES` bytes (`S::BYTES / 2` elements of
/// `O`, one k-block) swizzled by `S`, filled by bulk tensor copies and
/// read by `wgmma`: see the [module](self). `L` is the B tile's layout:
/// [`KMajor`] (`B_ROWS` rows of `Bᵀ`, one box) or [`MnMajor`] (`B_ROWS`
/// columns of a row-major B, in boxes of the swizzle's width).
pub struct TmaRing<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L = KMajor>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    base: *mut u8,
    /// The ring's barriers: `full` (stages), `empty` (stages), `done`.
    barriers: *mut u64,
    /// Their initialisation (`MBarriers::<2 STAGES + 1>::init_scoped`, its
    /// length out of the type) with the arrivals of `empty` and `done`.
    init: fn(*mut u64, u32, u32) -> ScopeEnd,
    _types: PhantomData<(O, S, L)>,
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L>
    TmaRing<O, S, STAGES, A_ROWS, B_ROWS, L>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    /// The bytes of a stage's A tile.
    pub const A_BYTES: usize = A_ROWS * S::BYTES;
    /// The bytes of a stage: its A tile, then its B tile.
    pub const STAGE_BYTES: usize = {
        assert!(STAGES >= 1, "a TMA ring has at least one stage");
        assert!(
            A_ROWS >= 8 && A_ROWS <= 256 && A_ROWS.is_multiple_of(8),
            "a TMA ring's A tile has 8 to 256 rows, a multiple of 8 (a box's rows, the swizzle's pattern)"
        );
        assert!(
            B_ROWS >= 8 && B_ROWS <= 256 && B_ROWS.is_multiple_of(8),
            "a TMA ring's B tile has 8 to 256 rows, a multiple of 8"
        );
        assert!(
            (A_ROWS + B_ROWS) * S::BYTES <= MAX_COUNT as usize,
            "a TMA ring's stage is below 2^20 bytes, an mbarrier's transaction limit"
        );
        (A_ROWS + B_ROWS) * S::BYTES
    };
    /// The dynamic shared memory a launch gives the ring: its stages, and
    /// 1024 bytes to align them.
    pub const SHARED_BYTES: usize = STAGES * Self::STAGE_BYTES + 1024;
    /// The barriers the ring takes: `mbarriers!(BARRIERS)`.
    pub const BARRIERS: usize = 2 * STAGES + 1;

    /// The ring over the block's dynamic shared memory `smem`, with the
    /// barriers `barriers` (`mbarriers!(2 * STAGES + 1)`: checked at
    /// compile time). Panics (a trap on the GPU, a report on the simulator)
    /// when `smem` holds fewer than [`SHARED_BYTES`](Self::SHARED_BYTES)
    /// bytes.
    #[inline(always)]
    #[track_caller]
    pub fn new<const N: usize>(smem: DynamicShared<O::Element>, barriers: MBarriers<N>) -> Self {
        let () = const {
            assert!(
                N == 2 * STAGES + 1,
                "a TMA ring of STAGES stages takes mbarriers!(2 * STAGES + 1)"
            )
        };
        let _ = Self::STAGE_BYTES;
        let (ptr, len) = smem.into_parts();
        let bytes = len * core::mem::size_of::<O::Element>();
        if bytes < Self::SHARED_BYTES {
            too_little_shared(bytes, Self::SHARED_BYTES)
        }
        // The GPU swizzles by address bits, so stages start at a multiple
        // of 1024 bytes; the simulator swizzles from a tile's start (its
        // dynamic memory is 16-byte aligned), so there the start is kept.
        let skip = if cfg!(target_arch = "nvptx64") {
            (ptr as usize).wrapping_neg() % 1024
        } else {
            0
        };
        // Arrivals a phase: `full`, one (the issuer's); `empty`, one a
        // consumer warp; `done`, every thread.
        let init: fn(*mut u64, u32, u32) -> ScopeEnd = |first, consumer_warps, threads| {
            // SAFETY: `first` is the `N` barriers `new` was given (`with`,
            // the only caller, passes them), in the block's shared memory,
            // with their tag after them.
            let barriers = unsafe { MBarriers::<N>::from_raw(first) };
            let (_, scope) = barriers.init_scoped(core::array::from_fn(|i| match i / STAGES {
                0 => 1,
                1 => consumer_warps,
                _ => threads,
            }));
            scope
        };
        TmaRing {
            base: ptr.cast::<u8>().wrapping_add(skip),
            barriers: barriers.first_word(),
            init,
            _types: PhantomData,
        }
    }

    /// Initialises the ring's barriers (a collective: every thread of the
    /// block calls it together) and runs this thread's role: `producer`
    /// in the block's last warpgroup, `consumer` in the others. When the
    /// role returns, nothing the ring started is in flight (see the
    /// [module](self)). Panics unless the block is at least two whole
    /// warpgroups.
    ///
    /// Two closures, not one taking an enum of the roles: a role handle
    /// inside an enum kept the ring's counters in local memory (a load and
    /// a store on each k-block's path, `benches/NOTES.md`).
    #[inline(always)]
    #[track_caller]
    pub fn with<R>(
        self,
        producer: impl for<'r> FnOnce(Producer<'r, O, S, STAGES, A_ROWS, B_ROWS, L>) -> R,
        consumer: impl for<'r> FnOnce(Consumer<'r, O, S, STAGES, A_ROWS, B_ROWS, L>) -> R,
    ) -> R {
        let threads = crate::block_size();
        if threads < 256 || !threads.is_multiple_of(128) {
            not_two_warpgroups(threads)
        }
        let consumers = threads / 128 - 1;
        let scope = (self.init)(self.barriers, 4 * consumers as u32, threads as u32);
        let wg = Warpgroup::of_this_thread();
        let core = RingCore {
            base: self.base,
            barriers: self.barriers,
            issued: Cell::new(0),
            consumed: Cell::new(0),
            unreleased: Cell::new(None),
            _types: PhantomData,
        };
        let is_producer = wg.index() == consumers;
        let result = if is_producer {
            producer(Producer {
                core: &core,
                wg,
                _brand: PhantomData,
            })
        } else {
            consumer(Consumer {
                core: &core,
                index: wg.index(),
                consumers,
                wg,
                _brand: PhantomData,
            })
        };
        // Nothing in flight past the scope: the issuer's copies landed, a
        // consumer's products are done.
        core.drain_copies();
        if !is_producer {
            arch::wgmma::wait_group::<0>();
        }
        let mut done = core.handle(2 * STAGES, threads as u32);
        done.arrive();
        if crate::thread_rank() == 0 {
            let _ = done.wait();
        }
        // SAFETY: thread 0 waited until every thread arrived on `done`
        // after its last use of the ring's barriers (the roles' handles
        // ended with their closures): a later `with` of the same barriers
        // may initialise them again.
        unsafe { scope.release() };
        result
    }
}

/// The scope's brand: invariant, so a handle cannot leave its closure.
type Brand<'r> = PhantomData<fn(&'r ()) -> &'r ()>;

/// What a thread knows of the ring in the scope: its place, its barriers
/// and its own count of loads (the issuer) or stages (a consumer).
struct RingCore<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L = KMajor>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    base: *mut u8,
    barriers: *mut u64,
    /// Loads issued (the issuer).
    issued: Cell<u32>,
    /// Stages waited for (a consumer).
    consumed: Cell<u32>,
    /// The stage whose products may still run, not released yet (a
    /// consumer).
    unreleased: Cell<Option<u32>>,
    _types: PhantomData<(O, S, L)>,
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L>
    RingCore<O, S, STAGES, A_ROWS, B_ROWS, L>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    /// Barrier `i`'s word: `full[s]` is `s`, `empty[s]` `STAGES + s`, `done`
    /// `2 STAGES`.
    #[inline(always)]
    fn word(&self, i: usize) -> *mut u64 {
        #[cfg(target_arch = "nvptx64")]
        let words = 1;
        #[cfg(not(target_arch = "nvptx64"))]
        let words = arch::tma::WORDS;
        self.barriers.wrapping_add(i * words)
    }

    /// A handle of barrier `i` (for `done`, which each thread uses once).
    #[inline(always)]
    fn handle(&self, i: usize, arrivals: u32) -> MBarrier {
        // SAFETY: barrier `i` of the ring's, initialised by `with`'s
        // collective with `arrivals`.
        unsafe { MBarrier::from_raw(self.word(i), i as u32, arrivals) }
    }

    /// Waits until phase `phase` of barrier `i` completed.
    #[inline(always)]
    fn wait(&self, i: usize, phase: u32) {
        // SAFETY: an initialised barrier of the ring (`with`).
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::wait_parity(self.word(i), phase & 1);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::wait_parity(self.word(i), i, phase & 1);
        }
    }

    /// Stage `s`'s first byte.
    #[inline(always)]
    fn stage(&self, s: usize) -> *mut u8 {
        self.base
            .wrapping_add(s * TmaRing::<O, S, STAGES, A_ROWS, B_ROWS, L>::STAGE_BYTES)
    }

    /// The issuer: waits until each of its copies landed (the last use of
    /// each stage; the earlier ones landed before it was refilled).
    #[inline(always)]
    fn drain_copies(&self) {
        let issued = self.issued.get() as usize;
        for i in issued.saturating_sub(STAGES)..issued {
            self.wait(i % STAGES, (i / STAGES) as u32);
        }
    }

    /// A consumer warp hands stage `s` back: lane 0 arrives on `empty[s]`
    /// for the warp (converged: checked by the caller's `wgmma`).
    #[inline(always)]
    fn release(&self, s: u32) {
        if arch::lane_id() == 0 {
            let i = STAGES + s as usize;
            // SAFETY: an initialised barrier of the ring.
            unsafe {
                #[cfg(target_arch = "nvptx64")]
                arch::tma::arrive(self.word(i));
                #[cfg(not(target_arch = "nvptx64"))]
                arch::tma::arrive(self.word(i), i);
            }
        }
    }
}

/// The producer warpgroup's handle, inside [`TmaRing::with`].
pub struct Producer<
    'r,
    O,
    S,
    const STAGES: usize,
    const A_ROWS: usize,
    const B_ROWS: usize,
    L = KMajor,
> where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    core: &'r RingCore<O, S, STAGES, A_ROWS, B_ROWS, L>,
    wg: Warpgroup,
    _brand: Brand<'r>,
}

impl<'r, O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L>
    Producer<'r, O, S, STAGES, A_ROWS, B_ROWS, L>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    /// This thread's warpgroup (to lower its register limit: a producer
    /// needs few).
    #[inline(always)]
    pub fn warpgroup(&self) -> &Warpgroup {
        &self.wg
    }

    /// The issuing thread's handle: `Some` in the warpgroup's first thread
    /// only, which alone copies.
    #[inline(always)]
    pub fn issuer(&mut self) -> Option<Issuer<'_, 'r, O, S, STAGES, A_ROWS, B_ROWS, L>> {
        (self.wg.rank() == 0).then_some(Issuer { producer: self })
    }
}

/// The thread that copies the stages: from [`Producer::issuer`].
pub struct Issuer<
    'p,
    'r,
    O,
    S,
    const STAGES: usize,
    const A_ROWS: usize,
    const B_ROWS: usize,
    L = KMajor,
> where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    producer: &'p mut Producer<'r, O, S, STAGES, A_ROWS, B_ROWS, L>,
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize>
    Issuer<'_, '_, O, S, STAGES, A_ROWS, B_ROWS, KMajor>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
{
    /// Fills the next stage: the box of `a` at (`a_row`, `a_col`) into its
    /// A tile and the box of `b` (rows of `Bᵀ`) at (`b_row`, `b_col`) into
    /// its B tile (elements past the tensors' edges land as zeros), once
    /// every consumer warp handed the stage back. The maps' boxes are the
    /// stage's tiles, rows of one swizzle span (`COLS` elements: checked
    /// at compile time). Each box's first column lies a multiple of 16
    /// bytes into its row, or this panics, as [`TmaTile::load`](super::TmaTile::load).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    #[track_caller]
    pub fn load<const COLS: usize>(
        &mut self,
        a: &TensorMap2d<O::Element, A_ROWS, COLS, S>,
        a_row: i32,
        a_col: i32,
        b: &TensorMap2d<O::Element, B_ROWS, COLS, S>,
        b_row: i32,
        b_col: i32,
    ) {
        self.fill::<COLS>(a, a_row, a_col, b_col, |tile, full, s| {
            // SAFETY: `tile` is the stage's B tile, `B_ROWS` rows of
            // `S::BYTES` (`fill`'s contract), the box of `b`.
            unsafe { copy_box(tile, b, full, s, b_col, b_row) };
        });
    }
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize>
    Issuer<'_, '_, O, S, STAGES, A_ROWS, B_ROWS, MnMajor>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
{
    /// Fills the next stage: the box of `a` at (`a_row`, `a_col`) into its
    /// A tile, and B's `B_ROWS` columns from `b_col` of its k-block's rows
    /// from `b_row` into its B tile, as `B_ROWS / COLS` boxes of `b` (a
    /// row-major `K × N` B) side by side (elements past the tensors' edges
    /// land as zeros), once every consumer warp handed the stage back. A
    /// box of `a` is rows of one swizzle span (`COLS` elements), a box of
    /// `b` that many rows of that many columns (checked at compile time).
    /// Each box's first column lies a multiple of 16 bytes into its row,
    /// or this panics, as [`TmaTile::load`](super::TmaTile::load).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    #[track_caller]
    pub fn load<const COLS: usize>(
        &mut self,
        a: &TensorMap2d<O::Element, A_ROWS, COLS, S>,
        a_row: i32,
        a_col: i32,
        b: &TensorMap2d<O::Element, COLS, COLS, S>,
        b_row: i32,
        b_col: i32,
    ) {
        let () = const {
            assert!(
                B_ROWS.is_multiple_of(COLS),
                "an MN-major ring's B tile is a whole number of boxes of B's columns"
            )
        };
        self.fill::<COLS>(a, a_row, a_col, b_col, |tile, full, s| {
            let chunk = COLS * <S as Swizzle>::BYTES;
            for j in 0..B_ROWS / COLS {
                let col = b_col.wrapping_add((j * COLS) as i32);
                // SAFETY: `tile` is the stage's B tile, `B_ROWS / COLS`
                // chunks of `chunk` bytes (`fill`'s contract: the same
                // bytes as `B_ROWS` rows of `S::BYTES`); chunk `j`, at a
                // multiple of 1024 bytes, takes the box at column `col`.
                unsafe { copy_box(tile.wrapping_add(j * chunk), b, full, s, col, b_row) };
            }
        });
    }
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L>
    Issuer<'_, '_, O, S, STAGES, A_ROWS, B_ROWS, L>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    /// The next stage, once every consumer warp handed it back: arms its
    /// `full` barrier with the stage's bytes, copies A's box into its A
    /// tile and lets `copy_b` copy B's (`copy_b(tile, full, stage)`: its B
    /// tile, `B_ROWS * S::BYTES` bytes at a multiple of 1024 on the GPU,
    /// whose copies complete on `full`).
    #[inline(always)]
    #[track_caller]
    fn fill<const COLS: usize>(
        &mut self,
        a: &TensorMap2d<O::Element, A_ROWS, COLS, S>,
        a_row: i32,
        a_col: i32,
        b_col: i32,
        copy_b: impl FnOnce(*mut u8, *mut u64, usize),
    ) {
        let () = const {
            assert!(
                COLS * 2 == <S as Swizzle>::BYTES,
                "a TMA ring's boxes have rows of one swizzle span"
            )
        };
        // Two checks, not a loop over an array: ptxas kept that array in
        // local memory, a store and two loads on the producer's path.
        if a_col % 8 != 0 {
            misaligned_column(a_col, 2);
        }
        if b_col % 8 != 0 {
            misaligned_column(b_col, 2);
        }
        let core = self.producer.core;
        let i = core.issued.get();
        let s = i as usize % STAGES;
        let u = i / STAGES as u32;
        if u > 0 {
            // Every consumer warp handed use `u - 1` of the stage back.
            core.wait(STAGES + s, u - 1);
        }
        let bytes = TmaRing::<O, S, STAGES, A_ROWS, B_ROWS, L>::STAGE_BYTES as u32;
        let a_bytes = TmaRing::<O, S, STAGES, A_ROWS, B_ROWS, L>::A_BYTES;
        let full = core.word(s);
        let tile = core.stage(s);
        // SAFETY: `full[s]`, initialised with one arrival; this is its one
        // arrival of phase `u` (the issuer arrives once a load, and load
        // `i` is the stage's use `u`); `bytes` is below 2^20 (`STAGE_BYTES`).
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::arrive_expect_tx(full, bytes);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::arrive_expect_tx(full, s, bytes);
        }
        // SAFETY: the stage's A tile, `A_BYTES` inside the ring's checked
        // memory, 1024-byte aligned on the GPU; no consumer reads the stage
        // until `full[s]`'s phase `u` completes, which needs these copies'
        // bytes (A's box and B's, `STAGE_BYTES` in all: the maps' boxes
        // are the stage's tiles), and every consumer's reads of use
        // `u - 1` were retired before its release (waited above); the
        // maps are live maps of these boxes and swizzle (`from_kernel_param`).
        unsafe { copy_box(tile, a, full, s, a_col, a_row) };
        copy_b(tile.wrapping_add(a_bytes), full, s);
        core.issued.set(i + 1);
    }
}

/// A consumer warpgroup's handle, inside [`TmaRing::with`].
pub struct Consumer<
    'r,
    O,
    S,
    const STAGES: usize,
    const A_ROWS: usize,
    const B_ROWS: usize,
    L = KMajor,
> where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    core: &'r RingCore<O, S, STAGES, A_ROWS, B_ROWS, L>,
    index: usize,
    consumers: usize,
    wg: Warpgroup,
    _brand: Brand<'r>,
}

impl<O, S, const STAGES: usize, const A_ROWS: usize, const B_ROWS: usize, L>
    Consumer<'_, O, S, STAGES, A_ROWS, B_ROWS, L>
where
    O: SixteenBit + Operand16,
    S: Swizzle + TileSwizzle,
    L: BMajor,
{
    /// This consumer's number, 0 to [`consumers()`](Self::consumers) - 1
    /// (its warpgroup's index).
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The block's consumer warpgroups.
    #[inline(always)]
    pub fn consumers(&self) -> usize {
        self.consumers
    }

    /// This thread's warpgroup (for its accumulators and register limit).
    #[inline(always)]
    pub fn warpgroup(&self) -> &Warpgroup {
        &self.wg
    }

    /// Waits for the next stage to land and issues `D = A Bᵀ + D` from it:
    /// `A` the 64 rows of its A tile from `a_row`, `B` the `N` rows of its
    /// B tile from `b_row`, over the stage's K (`S::BYTES / 2`). Then waits
    /// for every older product of the warpgroup (`wgmma.wait_group 1`) and
    /// hands the stage before back to the producer. The new product is in
    /// flight, carried. Every thread of the warpgroup calls it together;
    /// panics when the rows are not inside the tiles or not a multiple of 8
    /// (the swizzle's pattern).
    #[inline(always)]
    #[track_caller]
    pub fn mma<const N: usize>(&mut self, acc: Carried<N>, a_row: usize, b_row: usize) -> Carried<N>
    where
        M64N<N>: Shape,
    {
        if a_row.saturating_add(64) > A_ROWS || !a_row.is_multiple_of(8) {
            rows_outside("rows of the A tile", a_row, 64, A_ROWS, 8)
        }
        if b_row.saturating_add(N) > B_ROWS || !b_row.is_multiple_of(L::operand_step::<S>()) {
            rows_outside(L::B_LINES, b_row, N, B_ROWS, L::operand_step::<S>())
        }
        let core = self.core;
        let i = core.consumed.get();
        let s = i as usize % STAGES;
        core.wait(s, i / STAGES as u32);
        let stage = core.stage(s);
        let a = stage.wrapping_add(a_row * <S as Swizzle>::BYTES);
        let b = stage.wrapping_add(
            TmaRing::<O, S, STAGES, A_ROWS, B_ROWS, L>::A_BYTES + L::operand_offset::<S>(b_row),
        );
        // SAFETY: `a` is 64 rows and `b` `N` of B's rows or columns of the
        // stage's tiles (checked above), at multiples of 8 rows (of a
        // chunk) from a stage that starts at a multiple of 1024 bytes on
        // the GPU (`new`), laid out in `L`'s major with the swizzle `S` as
        // the copies landed them: `full[s]`'s phase for this use completed
        // (waited above); the stage is refilled only after this warp's
        // release, which `mma`/`finish` make only after a `wait_group`
        // that retires these products.
        let acc = unsafe { L::issue::<O, S, N>(acc, &self.wg, a.cast(), b.cast()) };
        // Every product but the one just issued is done.
        arch::wgmma::wait_group::<1>();
        if let Some(previous) = core.unreleased.replace(Some(s as u32)) {
            core.release(previous);
        }
        core.consumed.set(i + 1);
        acc
    }

    /// Waits for every product of the warpgroup (`wgmma.wait_group 0`),
    /// hands the last stage back and gives the accumulator. Every thread of
    /// the warpgroup calls it together.
    #[inline(always)]
    #[track_caller]
    pub fn finish<const N: usize>(&mut self, acc: Carried<N>) -> Accumulator<N>
    where
        M64N<N>: Shape,
    {
        let acc = acc.wait_all(&self.wg);
        if let Some(previous) = self.core.unreleased.take() {
            self.core.release(previous);
        }
        acc
    }
}

/// The box of `map` at (`row`, `col`) into `tile`, its bytes completing on
/// `full` (barrier `s` of the ring, which the simulator names): the one
/// place a ring's copies are issued, on either target.
///
/// # Safety
/// As `arch::tma::copy_2d`: `tile` holds the box's `ROWS` rows of
/// `S::BYTES`, at a multiple of 1024 bytes on the GPU, and nothing reads it
/// until `full` completes; `full` is armed for the box's bytes; `map` is a
/// live map of this box and swizzle.
#[inline(always)]
unsafe fn copy_box<E, S: Swizzle + TileSwizzle, const ROWS: usize, const COLS: usize>(
    tile: *mut u8,
    map: &TensorMap2d<E, ROWS, COLS, S>,
    full: *mut u64,
    s: usize,
    col: i32,
    row: i32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        #[cfg(target_arch = "nvptx64")]
        {
            let _ = s;
            arch::tma::copy_2d(tile, map.map, full, col, row);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        arch::tma::copy_2d(
            tile,
            ROWS * <S as Swizzle>::BYTES,
            map.map,
            [COLS as u32, ROWS as u32],
            <S as TileSwizzle>::MODE,
            full,
            s,
            col,
            row,
        );
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_little_shared(bytes: usize, needed: usize) -> ! {
    panic!("TmaRing::new: the launch gave {bytes} bytes of dynamic shared memory; the ring needs {needed} (TmaRing::SHARED_BYTES: its stages and 1024 bytes to align them)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_two_warpgroups(threads: usize) -> ! {
    panic!("TmaRing::with: the block has {threads} threads; a ring needs whole warpgroups of 128 threads, at least two (consumers, then the producer)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn rows_outside(lines: &str, row: usize, rows: usize, tile_rows: usize, step: usize) -> ! {
    panic!("Consumer::mma: {lines} {row} to {}: a stage's tile has {tile_rows}, and an operand's start at a multiple of {step}", row + rows - 1)
}
