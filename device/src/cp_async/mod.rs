//! Asynchronous copies from global to shared memory (`cp.async`, sm_80 and
//! later) through a ring of stages: [`CpAsyncRing`], the multi-stage
//! pipeline of CUTLASS's sm_80 GEMMs.
//!
//! The ring takes over the block's dynamic shared memory and divides it
//! into `STAGES` stages of rows of 128 bytes. Each thread queues its copies
//! into the next free stage ([`CpAsyncRing::fill`]: 16-byte chunks, the
//! chunks of a stage divided among the threads, each chunk zero-filled past
//! the bytes it was given), and [`CpAsyncRing::wait`] hands out the oldest
//! filled stage once every thread's copies into it have landed
//! (`cp.async.wait_group`, then a block barrier) as a [`Ready`] stage, which
//! reads it (`get`, and `ldmatrix` through
//! [`FragmentA::load_stage`](crate::mma::FragmentA::load_stage) and
//! [`FragmentB::load_stage_pair`](crate::mma::FragmentB::load_stage_pair)).
//! Within a row, 16-byte chunk `j` of row `r` is stored at chunk `j ^ (r %
//! 8)` (the 128-byte XOR swizzle), so that `ldmatrix`'s eight rows of one
//! chunk and the copies' eight chunks of one row each hit eight different
//! bank groups; reads name the logical position and never see the swizzle.
//!
//! ```no_run
//! use gpu_device::cp_async::{CpAsyncRing, CpAsyncSource, StageFill};
//! use gpu_device::prelude::*;
//!
//! // With `#[kernel(arch = "sm_80")]`, 64 threads and `2 * 128` bytes of
//! // dynamic shared memory: thread `t` sums column `t` of `x` (rows of 64
//! // `u16`), the rows streamed through a 2-stage ring, a row a stage.
//! pub fn column_sums(x: &[u16], mut out: DisjointSlice<u32>, smem: DynamicShared<u16>) {
//!     let rows = x.len() / 64;
//!     let src = CpAsyncSource::new(x);
//!     let mut ring = CpAsyncRing::<u16, 2>::new(smem, 1);
//!     // Threads 0 to 7 copy a 16-byte chunk of the row each.
//!     let copy_row = |stage: &mut StageFill<'_, u16>, row: usize| {
//!         if let Some((_, chunk)) = stage.own_chunk(0) {
//!             stage.copy(0, src, row * 64 + 8 * chunk, 8);
//!         }
//!     };
//!     ring.fill(|stage| if rows > 0 { copy_row(stage, 0) });
//!     let mut sum = 0;
//!     for row in 0..rows {
//!         let mut stage = ring.wait();
//!         // The next row lands while this one is read.
//!         stage.fill(|next| if row + 1 < rows { copy_row(next, row + 1) });
//!         sum += stage.get(0, thread_rank() % 64) as u32;
//!     }
//!     out.set(thread_index(), sum);
//! }
//! ```
//!
//! # Why it is sound
//!
//! A copy writes its shared chunk at some time before the issuing thread's
//! `cp.async.wait_group` covers it; nothing may touch the chunk meanwhile.
//!
//! - *No read before the wait.* The ring's memory is reached only through
//!   the ring (it consumes the [`DynamicShared`] handle, at most one per
//!   kernel, so there is also at most one ring per kernel), and a stage is
//!   read only through a [`Ready`] stage, which only [`CpAsyncRing::wait`]
//!   makes: it waits until this thread's group of that stage has landed
//!   (the groups not older than it may stay in flight), then waits at the
//!   ring's own block barrier. The `k + 2`-th arrival of every thread at
//!   that barrier is its `k`-th `wait` (no other code uses the barrier; the
//!   first two are the ring's construction), so when it opens every
//!   thread's copies into the stage have landed, and the barrier orders
//!   them before the reads.
//! - *One ring, made alike by every thread.* Each thread's ring counts its
//!   own fills and waits over the same memory, so all must agree on the
//!   stages, their rows, the element size and how far fills run ahead:
//!   making the ring is a collective that compares each thread's with
//!   thread 0's (written into stage 0 before any fill, between two of the
//!   ring's barriers), and a difference is a panic naming both
//!   (`agreement.rs`).
//! - *No copy into a stage someone may still read.* `fill` targets the
//!   stage `STAGES - 1` fills ahead of the oldest unread one, and refuses
//!   (panics) unless this thread has passed the `wait` after its last read
//!   (`fills - waits <= STAGES - 2`). A thread's reads of a stage end when
//!   its `Ready` does (the `Ready` borrows the ring mutably, so the next
//!   `wait` ends it), so by that barrier every thread's reads are done.
//!   While a `Ready` lives, its own stage is never the one `fill` targets.
//!   A ring made by [`CpAsyncRing::with_async_reads`] lets `wgmma`
//!   products read a stage for one more wait, and fills one stage less
//!   ahead (`async_reads.rs` says why that is enough).
//! - *No two copies into one chunk.* A thread copies only its own chunks of
//!   a stage: chunk `i = t + k B` (thread rank `t` of `B`), at its swizzled
//!   place (the XOR is a permutation of a row's chunks). The copies of one
//!   fill are given to a closure as a `&mut StageFill` of a lifetime the
//!   closure cannot name, so the handle never outlives its fill, and two
//!   fills are never open at once (`&mut` borrows of the ring): each group
//!   is committed right after its closure, and the group count the waits
//!   rely on is the ring's own, not a destructor's.
//! - *Sources.* A copy reads `valid` elements of a [`CpAsyncSource`], a
//!   slice checked to be in global memory (as `cp.async` needs), in
//!   bounds, and 16-byte aligned where anything is read: a misaligned
//!   source is a panic (a trap on the GPU, a report on the simulator),
//!   never undefined behaviour. A copy of nothing is a `cp.async` with a
//!   source size of 0 (the chunk zero-filled) from a static zero chunk,
//!   never read. [`CpAsyncMatrix`] proves the checks of a whole matrix's
//!   chunks once, and [`OwnChunks`] those of a thread's chunks of a stage,
//!   so that the copy of one chunk checks only
//!   which of its elements are inside the matrix.
//! - *Element types* are `SharedElement`s: any bit pattern is a value, so
//!   the zero-filled tails and chunks no thread copied are values too.
//!
//! The simulator copies at once; since nothing can read a stage before its
//! wait, no kernel can tell.

use crate::arch;
use crate::race_check;
use crate::shared::{DynamicShared, SharedElement};
use crate::thread_owner::Owner;
use core::marker::PhantomData;

mod agreement;
mod async_reads;
mod matrix;
pub use matrix::{CpAsyncMatrix, OwnChunks};

/// The source of a copy that reads nothing (a source size of 0: the chunk
/// is zero-filled): 16 aligned bytes of global memory, never read.
#[repr(C, align(16))]
struct ZeroChunk([u8; CHUNK_BYTES]);
static ZERO_CHUNK: ZeroChunk = ZeroChunk([0; CHUNK_BYTES]);

impl ZeroChunk {
    #[inline(always)]
    fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }
}

/// Bytes in a ring's row (8 chunks, the swizzle's period).
const ROW_BYTES: usize = 128;
/// Bytes one copy moves.
const CHUNK_BYTES: usize = 16;
/// Chunks in a row.
pub const CHUNKS_PER_ROW: usize = ROW_BYTES / CHUNK_BYTES;

/// A slice of global memory that `cp.async` may read: checked when made
/// (on the GPU, `isspacep.global`; a slice in shared or local memory is a
/// panic).
pub struct CpAsyncSource<'a, T> {
    slice: &'a [T],
}

impl<T> Clone for CpAsyncSource<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for CpAsyncSource<'_, T> {}

impl<'a, T: Copy> CpAsyncSource<'a, T> {
    /// `slice` as a source of copies. Panics unless it is in global memory
    /// (a kernel's slice parameters are).
    #[inline(always)]
    #[track_caller]
    pub fn new(slice: &'a [T]) -> Self {
        if !slice.is_empty() && !arch::mma::is_global(slice.as_ptr()) {
            not_global()
        }
        CpAsyncSource { slice }
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the slice is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }
}

/// A ring of `STAGES` (2 to 8) stages of `T` in the block's dynamic shared
/// memory, filled by `cp.async` and read once landed; see the
/// [module](self). Neither `Send` nor `Sync`: each thread has its own, all
/// over the same memory, used in step.
pub struct CpAsyncRing<T, const STAGES: usize> {
    base: *mut T,
    stage_rows: usize,
    /// Groups this thread committed (one a fill).
    fills: u32,
    /// Stages this thread waited for.
    waits: u32,
    /// Waits a stage may still be read asynchronously after its `Ready`
    /// ended: 0, or 1 for a ring made by [`with_async_reads`](Self::with_async_reads).
    lag: u32,
    /// The stage (its wait's index, plus one; 0 for none) whose reads by
    /// this thread's `wgmma`s in flight may not be over (`async_reads.rs`).
    async_reads: core::cell::Cell<u32>,
    rank: usize,
    threads: usize,
    owner: Owner,
    _not_send: PhantomData<*mut ()>,
}

impl<T: SharedElement + Copy, const STAGES: usize> CpAsyncRing<T, STAGES> {
    /// Elements in a row.
    const ROW: usize = {
        assert!(
            2 <= STAGES && STAGES <= 8,
            "a cp.async ring has 2 to 8 stages"
        );
        assert!(
            core::mem::size_of::<T>() > 0 && CHUNK_BYTES.is_multiple_of(core::mem::size_of::<T>()),
            "a cp.async ring's element divides its 16-byte chunks"
        );
        ROW_BYTES / core::mem::size_of::<T>()
    };
    /// Elements in a chunk.
    const CHUNK: usize = CHUNK_BYTES / core::mem::size_of::<T>();

    /// The ring over the block's dynamic shared memory, each stage
    /// `stage_rows` rows of 128 bytes. Every thread of the block makes it
    /// together (it passes the ring's barrier twice), the same way: a
    /// thread whose `STAGES`, `stage_rows`, element type or constructor
    /// differs from thread 0's panics (see the [module](self)). Panics
    /// when the launch gave less than `STAGES * stage_rows * 128` bytes,
    /// or `stage_rows` is 0.
    #[inline(always)]
    #[track_caller]
    pub fn new(shared: DynamicShared<T>, stage_rows: usize) -> Self {
        Self::agreed(shared, stage_rows, 0)
    }

    /// The ring, `lag` waits a stage may be read past its `Ready`, once
    /// every thread of the block has made it the same way
    /// (`agreement.rs`).
    #[inline(always)]
    #[track_caller]
    fn agreed(shared: DynamicShared<T>, stage_rows: usize, lag: u32) -> Self {
        let row = Self::ROW;
        let (base, len) = shared.into_parts();
        let needed = stage_rows.saturating_mul(STAGES).saturating_mul(row);
        if stage_rows == 0 || needed > len || !(base as usize).is_multiple_of(CHUNK_BYTES) {
            too_little_shared(STAGES, stage_rows, needed, len, core::mem::size_of::<T>())
        }
        agreement::agree(
            base.cast(),
            agreement::RingShape {
                stages: STAGES as u32,
                stage_rows: u32::try_from(stage_rows).unwrap_or(u32::MAX),
                lag,
                element_bytes: core::mem::size_of::<T>() as u32,
            },
        );
        CpAsyncRing {
            base,
            stage_rows,
            fills: 0,
            waits: 0,
            lag,
            async_reads: core::cell::Cell::new(0),
            rank: crate::thread_rank(),
            threads: crate::block_size(),
            owner: Owner::current(),
            _not_send: PhantomData,
        }
    }

    /// The rows of a stage.
    #[inline(always)]
    pub fn stage_rows(&self) -> usize {
        self.stage_rows
    }

    #[inline(always)]
    fn stage(&self, index: u32) -> *mut T {
        let stage = index as usize % STAGES;
        // In bounds: `stage < STAGES` stages fit (checked in `new`).
        self.base.wrapping_add(stage * self.stage_rows * Self::ROW)
    }

    /// Queues this thread's copies into the next stage (`copies` gets the
    /// stage), and commits them as one group. Every thread of the block
    /// fills the same stages in the same order (and may copy nothing).
    /// Panics when the stage may still be read: after `STAGES - 1` fills
    /// ahead of the stages waited for (`STAGES - 2` for a ring made by
    /// [`with_async_reads`](Self::with_async_reads)).
    #[inline(always)]
    #[track_caller]
    pub fn fill(&mut self, copies: impl for<'s> FnOnce(&mut StageFill<'s, T>)) {
        self.owner.check("a CpAsyncRing");
        if self.fills - self.waits > STAGES as u32 - 2 - self.lag {
            fill_ahead(STAGES, STAGES as u32 - 1 - self.lag, self.fills, self.waits)
        }
        let mut stage = StageFill {
            base: self.stage(self.fills),
            rows: self.stage_rows,
            rank: self.rank,
            threads: self.threads,
            _fill: PhantomData,
        };
        copies(&mut stage);
        arch::mma::cp_async_commit();
        self.fills += 1;
    }

    /// Waits for the oldest filled stage not waited for yet (this thread's
    /// copies into it, then a barrier of the whole block, so everyone's) and
    /// gives it for reading. Every thread of the block calls it together
    /// (as `sync_threads`). Panics when no fill is waiting.
    #[inline(always)]
    #[track_caller]
    pub fn wait(&mut self) -> Ready<'_, T, STAGES> {
        self.wait_then_fence(|| {})
    }

    /// [`wait`](Self::wait), with `fence` run by each thread between its
    /// copies' wait and the barrier (`wgmma`'s stages fence them for the
    /// async proxy: `crate::wgmma::wait_stage`).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn wait_then_fence(&mut self, fence: impl FnOnce()) -> Ready<'_, T, STAGES> {
        self.owner.check("a CpAsyncRing");
        if self.fills == self.waits {
            nothing_filled()
        }
        self.check_async_reads_over();
        // The groups younger than the stage's may stay in flight.
        arch::mma::cp_async_wait(self.fills - self.waits - 1);
        fence();
        arch::barrier(arch::PIPELINE_BARRIER);
        let (base, index) = (self.stage(self.waits), self.waits);
        self.waits += 1;
        Ready {
            base,
            rows: self.stage_rows,
            index,
            ring: self,
        }
    }

    /// Waits for all of this thread's copies and gives the memory up
    /// (`cp.async.wait_group 0`).
    #[inline(always)]
    pub fn finish(self) {
        arch::mma::cp_async_wait(0);
    }
}

/// This thread's part of the stage a [`CpAsyncRing::fill`] targets: its
/// own chunks, `i = t + k B` for thread rank `t` of `B`, chunk `i % 8` of
/// row `i / 8` of the stage.
pub struct StageFill<'s, T> {
    base: *mut T,
    rows: usize,
    rank: usize,
    threads: usize,
    _fill: PhantomData<(&'s mut T, *mut ())>,
}

impl<T: SharedElement + Copy> StageFill<'_, T> {
    /// The `(row, chunk)` of this thread's `k`-th chunk, or `None` past the
    /// stage.
    #[inline(always)]
    pub fn own_chunk(&self, k: usize) -> Option<(usize, usize)> {
        let i = k.checked_mul(self.threads)?.checked_add(self.rank)?;
        (i < self.rows * CHUNKS_PER_ROW).then_some((i / CHUNKS_PER_ROW, i % CHUNKS_PER_ROW))
    }

    /// Queues the copy of `src[start .. start + valid]` into this thread's
    /// `k`-th chunk ([`own_chunk`](Self::own_chunk)), the rest of the chunk
    /// zero; returns `false` (copying nothing) when the chunk is past the
    /// stage. Panics when `valid` is more than a chunk (16 bytes of `T`),
    /// when the elements are not all in `src`, or, if `valid > 0`, when
    /// `&src[start]` is not 16-byte aligned.
    #[inline(always)]
    #[track_caller]
    pub fn copy(
        &mut self,
        k: usize,
        src: CpAsyncSource<'_, T>,
        start: usize,
        valid: usize,
    ) -> bool {
        let Some((row, chunk)) = self.own_chunk(k) else {
            return false;
        };
        let elements = CHUNK_BYTES / core::mem::size_of::<T>();
        if valid > elements || start.checked_add(valid).is_none_or(|end| end > src.len()) {
            copy_out_of_range(start, valid, elements, src.len())
        }
        let slot = row * CHUNKS_PER_ROW + (chunk ^ (row % CHUNKS_PER_ROW));
        // In the stage: `row < rows` (`own_chunk`).
        let dst = self.base.wrapping_add(slot * elements);
        race_check::write_range(dst, elements);
        let from = if valid == 0 {
            // Nothing to read: the copy zero-fills the chunk (a source size
            // of 0), from a source that is never read.
            ZERO_CHUNK.as_ptr()
        } else {
            // SAFETY: `start + valid <= src.len()`, checked above.
            let from = unsafe { src.slice.as_ptr().add(start) };
            if !(from as usize).is_multiple_of(CHUNK_BYTES) {
                misaligned_source(start)
            }
            from.cast()
        };
        // SAFETY: `dst`: this thread's chunk of a stage nobody reads (see
        // the module), 16-byte aligned (the ring's base is, and chunks are
        // 16 bytes), 16 bytes in bounds, and nothing touches it until this
        // thread's wait covers the copy; `from`: in global memory
        // (`CpAsyncSource`, or the zero chunk), 16-byte aligned, `valid`
        // elements readable, `valid * size <= 16` bytes.
        unsafe {
            arch::mma::cp_async_16(
                self.base.cast(),
                slot * CHUNK_BYTES,
                from,
                (valid * core::mem::size_of::<T>()) as u32,
            )
        };
        true
    }
}

/// A stage whose copies have all landed, to read: from
/// [`CpAsyncRing::wait`]. It borrows the ring, so the next `wait` ends it;
/// meanwhile [`fill`](Self::fill) queues the next stage (never this one).
pub struct Ready<'r, T, const STAGES: usize> {
    ring: &'r mut CpAsyncRing<T, STAGES>,
    base: *const T,
    rows: usize,
    /// Which wait of the ring made it (0 for the first).
    index: u32,
}

impl<T: SharedElement + Copy, const STAGES: usize> Ready<'_, T, STAGES> {
    /// [`CpAsyncRing::fill`], while this stage is read.
    #[inline(always)]
    #[track_caller]
    pub fn fill(&mut self, copies: impl for<'s> FnOnce(&mut StageFill<'s, T>)) {
        self.ring.fill(copies)
    }

    /// The stage's rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Which of the ring's waits made it (0 for the first).
    #[inline(always)]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// The ring, for its record of asynchronous reads.
    #[inline(always)]
    pub(crate) fn ring(&self) -> &CpAsyncRing<T, STAGES> {
        self.ring
    }

    /// Element `col` (below `128 / size_of::<T>()`) of row `row`. Panics out
    /// of range.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, row: usize, col: usize) -> T {
        let row_len = CpAsyncRing::<T, STAGES>::ROW;
        if row >= self.rows || col >= row_len {
            stage_out_of_range(row, col, self.rows, row_len)
        }
        let chunk = CpAsyncRing::<T, STAGES>::CHUNK;
        let at = self.chunk_ptr(row, col / chunk).wrapping_add(col % chunk);
        race_check::read(at);
        // SAFETY: in the stage (checked above); landed and not written
        // while this `Ready` lives (see the module).
        unsafe { at.read() }
    }

    /// The first element of chunk `chunk` of row `row` (not checked: the
    /// caller checks `row < rows`, `chunk < 8`).
    #[inline(always)]
    fn chunk_ptr(&self, row: usize, chunk: usize) -> *const T {
        self.base.wrapping_byte_add(Self::chunk_offset(row, chunk))
    }

    /// The stage's first element: chunks are [`chunk_offset`](Self::chunk_offset)
    /// bytes past it (for `ldmatrix` on the GPU, and `wgmma`'s tiles).
    #[inline(always)]
    pub(crate) fn base(&self) -> *const T {
        self.base
    }

    /// The offset in bytes of chunk `chunk` of row `row` from the stage's
    /// first element (the swizzle applied).
    #[inline(always)]
    pub(crate) fn chunk_offset(row: usize, chunk: usize) -> usize {
        (row * CHUNKS_PER_ROW + (chunk ^ (row % CHUNKS_PER_ROW))) * CHUNK_BYTES
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_global() -> ! {
    panic!("CpAsyncSource::new: the slice is not in global memory; cp.async copies from global memory (a kernel's slice parameter) only")
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_little_shared(stages: usize, rows: usize, needed: usize, len: usize, size: usize) -> ! {
    if rows == 0 {
        panic!("CpAsyncRing::new: a stage of 0 rows holds nothing; give each stage at least one row of 128 bytes")
    }
    panic!("CpAsyncRing::new: {stages} stages of {rows} rows of 128 bytes need {} bytes of dynamic shared memory (16-byte aligned); the launch gave {}", needed.saturating_mul(size), len * size)
}

#[cold]
#[inline(never)]
#[track_caller]
fn fill_ahead(stages: usize, ahead: u32, fills: u32, waits: u32) -> ! {
    panic!("CpAsyncRing::fill: fill {fills} would overwrite a stage of the {stages} that may still be read ({waits} waited for): wait first (at most {ahead} fills ahead)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn nothing_filled() -> ! {
    panic!("CpAsyncRing::wait: every filled stage was waited for already: fill a stage first")
}

#[cold]
#[inline(never)]
#[track_caller]
fn copy_out_of_range(start: usize, valid: usize, chunk: usize, len: usize) -> ! {
    panic!("StageFill::copy: {valid} elements from {start} (a chunk holds {chunk}) do not fit a chunk or the source of {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned_source(start: usize) -> ! {
    panic!("StageFill::copy: the source at element {start} is not 16-byte aligned, as a 16-byte cp.async needs (rows of a multiple of 16 bytes, copies at multiples of 16 bytes)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn stage_out_of_range(row: usize, col: usize, rows: usize, cols: usize) -> ! {
    panic!("Ready: ({row}, {col}) is outside the stage's {rows} rows of {cols}")
}
