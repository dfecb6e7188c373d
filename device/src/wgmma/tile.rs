//! The shared tiles `wgmma` reads: K-major, swizzled, aligned to their
//! swizzle pattern, with their swizzle and size in their type; and the
//! block phase in which they may be read by the async proxy.

use crate::arch::SharedMatrix;
use crate::mma::SixteenBit;
use crate::shared::{Block, DynamicShared, Reading, Writing};
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// A shared-memory swizzle mode of `wgmma` and TMA: rows of
/// [`BYTES`](Self::BYTES) bytes whose 16-byte chunks are permuted by the
/// row's index within a group of 8 rows (address bits 4.. XORed with bits
/// 7..), so that a column of 16-byte chunks is spread over the banks.
/// Sealed: [`Swizzle128B`], [`Swizzle64B`], [`Swizzle32B`].
pub trait Swizzle: sealed::Sealed {
    /// The width of a row: 128, 64 or 32 bytes.
    const BYTES: usize;
    /// The pattern's size, 8 rows, and the alignment a tile needs (1024
    /// bytes for the 128-byte swizzle).
    const ALIGN: usize = 8 * Self::BYTES;
    /// The descriptor's layout type.
    #[doc(hidden)]
    const LAYOUT_TYPE: u8;
}

/// The 128-byte swizzle: rows of 64 16-bit elements, tiles aligned to 1024
/// bytes.
pub enum Swizzle128B {}
/// The 64-byte swizzle: rows of 32 16-bit elements, tiles aligned to 512
/// bytes.
pub enum Swizzle64B {}
/// The 32-byte swizzle: rows of 16 16-bit elements, tiles aligned to 256
/// bytes.
pub enum Swizzle32B {}

impl sealed::Sealed for Swizzle128B {}
impl sealed::Sealed for Swizzle64B {}
impl sealed::Sealed for Swizzle32B {}
impl Swizzle for Swizzle128B {
    const BYTES: usize = 128;
    const LAYOUT_TYPE: u8 = 1;
}
impl Swizzle for Swizzle64B {
    const BYTES: usize = 64;
    const LAYOUT_TYPE: u8 = 2;
}
impl Swizzle for Swizzle32B {
    const BYTES: usize = 32;
    const LAYOUT_TYPE: u8 = 3;
}

/// The Reading phase of a block whose shared-memory writes the async proxy
/// (`wgmma`'s operand reads) sees: every thread fenced its writes
/// (`fence.proxy.async.shared::cta`) before the barrier. Made by
/// [`sync_for_async`]; [`KMajorTile`]s are read in it.
pub struct AsyncReading {
    block: Block<Reading>,
}

/// Fences this thread's shared-memory writes for the async proxy, then
/// [`Block::sync`]: the Reading phase in which `wgmma` may read what the
/// block wrote.
#[inline(always)]
#[track_caller]
pub fn sync_for_async(block: Block<Writing>) -> AsyncReading {
    crate::arch::wgmma::fence_proxy_async();
    AsyncReading {
        block: block.sync(),
    }
}

impl AsyncReading {
    /// The Reading phase's token, for the block's other reads.
    #[inline(always)]
    pub fn block(&self) -> &Block<Reading> {
        &self.block
    }

    /// Ends the phase: a barrier, then the Writing phase. A tile, and a
    /// `wgmma` in flight reading one, borrow this token, so the block
    /// writes its shared memory again only once they are done.
    #[inline(always)]
    #[track_caller]
    pub fn sync(self) -> Block<Writing> {
        self.block.sync()
    }
}

/// A K-major tile of `ROWS` rows of the block's dynamic shared memory, as
/// `wgmma` reads its A (64 rows) and B (N rows, `Bᵀ` row-major) operands:
/// each row is [`K`](Self::K) 16-bit elements (the swizzle's width), their
/// 16-byte chunks swizzled by `S`; the tile starts at a multiple of the
/// pattern's size (`S::ALIGN` bytes, 1024 for [`Swizzle128B`]). Its
/// element `(row, k)` is at slot [`slot(row, k)`](Self::slot) of the tile.
///
/// Made only by [`KMajorTile::new`], which checks its place; its size and
/// swizzle are its type's, so the descriptor `wgmma` gets always describes
/// the tile as it is.
pub struct KMajorTile<'r, T: SixteenBit, S: Swizzle, const ROWS: usize> {
    base: *const T::Element,
    /// The tile, borrowed with the phase it is read in (`new`'s `'r`).
    _borrow: PhantomData<&'r [T::Element]>,
    _swizzle: PhantomData<fn() -> S>,
}

impl<'r, T: SixteenBit, S: Swizzle, const ROWS: usize> KMajorTile<'r, T, S, ROWS> {
    /// The elements of a row (the tile's K): 64, 32 or 16.
    pub const K: usize = S::BYTES / 2;
    /// The tile's elements.
    pub const ELEMENTS: usize = ROWS * Self::K;
    /// Rows a multiple of 8, the pattern (checked at compile time).
    const ROWS_CHECKED: () = assert!(
        ROWS > 0 && ROWS.is_multiple_of(8),
        "a K-major tile has a multiple of 8 rows"
    );

    /// The tile at slot `offset` of the block's dynamic shared memory.
    /// Panics (a trap on the GPU, a report on the simulator) when it does
    /// not fit the array, or its start is not aligned to the swizzle's
    /// pattern (`offset` a multiple of `S::ALIGN / 2` slots, in an array
    /// whose start is aligned too).
    #[inline(always)]
    #[track_caller]
    pub fn new(
        shared: &'r DynamicShared<T::Element>,
        phase: &'r AsyncReading,
        offset: usize,
    ) -> KMajorTile<'r, T, S, ROWS> {
        let () = Self::ROWS_CHECKED;
        KMajorTile {
            base: place::<T, S>(shared, phase, offset, Self::ELEMENTS, "KMajorTile"),
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }

    /// The tile at `base`, for the rings that place tiles themselves.
    ///
    /// # Safety
    /// `base` starts `ROWS` rows of `S::BYTES` bytes of the block's shared
    /// memory, at a multiple of `S::ALIGN` bytes on the GPU, readable for
    /// `'r` by the async proxy.
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) unsafe fn from_raw(base: *const T::Element) -> KMajorTile<'r, T, S, ROWS> {
        let () = Self::ROWS_CHECKED;
        KMajorTile {
            base,
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }

    /// The slot, from the tile's start, of element `(row, k)`. Panics
    /// unless `row < ROWS` and `k < K`.
    #[inline(always)]
    #[track_caller]
    pub fn slot(row: usize, k: usize) -> usize {
        assert!(
            row < ROWS && k < Self::K,
            "KMajorTile::slot: ({row}, {k}) is outside the tile's {ROWS} × {} elements",
            Self::K
        );
        swizzled(S::BYTES, row * S::BYTES + 2 * k) / 2
    }

    /// The element `(row, k)` stored at `slot` (from the tile's start): the
    /// inverse of [`slot`](Self::slot) (a swizzle is its own inverse), to
    /// fill a tile slot by slot. Panics when `slot >= ELEMENTS`.
    #[inline(always)]
    #[track_caller]
    pub fn coordinates(slot: usize) -> (usize, usize) {
        assert!(
            slot < Self::ELEMENTS,
            "KMajorTile::coordinates: slot {slot} is past the tile's {} elements",
            Self::ELEMENTS
        );
        let at = swizzled(S::BYTES, 2 * slot);
        (at / S::BYTES, at % S::BYTES / 2)
    }

    /// The operand of the `wgmma` of K step `step` (elements `16 step` to
    /// `16 step + 15` of each row).
    #[inline(always)]
    pub(super) fn k_step(&self, step: usize) -> SharedMatrix {
        SharedMatrix {
            base: self.base.cast(),
            k_byte_offset: (32 * step) as u32,
            row_bytes: S::BYTES as u32,
            layout_type: S::LAYOUT_TYPE,
            chunk_bytes: 0,
        }
    }
}

/// The start of a tile of `elements` at slot `offset` of the block's
/// dynamic shared memory, read in `phase`: checked to fit the array and to
/// start at a multiple of the swizzle's pattern (a report naming `tile`
/// otherwise).
#[inline(always)]
#[track_caller]
pub(super) fn place<'r, T: SixteenBit, S: Swizzle>(
    shared: &'r DynamicShared<T::Element>,
    phase: &'r AsyncReading,
    offset: usize,
    elements: usize,
    tile: &'static str,
) -> *const T::Element {
    let all = shared.as_slice(&phase.block);
    let end = offset.saturating_add(elements);
    if end > all.len() {
        tile_past_the_end(tile, end, all.len())
    }
    let start = &all[offset..end];
    // The simulator's dynamic shared memory is 16-byte aligned only: there
    // the offset is checked, and the swizzle is computed from the tile's
    // start, as the GPU's is from the aligned address.
    let placed = if cfg!(target_arch = "nvptx64") {
        start.as_ptr() as usize
    } else {
        offset * 2
    };
    if !placed.is_multiple_of(S::ALIGN) {
        tile_misaligned(tile, offset, S::ALIGN)
    }
    start.as_ptr()
}

/// The swizzled place of byte `offset` of a tile of rows of `row_bytes`:
/// bits 4.. XORed with bits 7.. (as many as a row has 16-byte chunks).
#[inline(always)]
pub(super) fn swizzled(row_bytes: usize, offset: usize) -> usize {
    offset ^ (((offset >> 7) & (row_bytes / 16 - 1)) << 4)
}

#[track_caller]
#[inline(never)]
#[cold]
fn tile_past_the_end(tile: &str, end: usize, len: usize) -> ! {
    panic!("{tile}::new: the tile ends at slot {end}, past the dynamic shared memory's {len} slots")
}

#[track_caller]
#[inline(never)]
#[cold]
fn tile_misaligned(tile: &str, offset: usize, align: usize) -> ! {
    panic!("{tile}::new: the tile at slot {offset} does not start at a multiple of {align} bytes, as its swizzle's pattern needs")
}

/// A [`CpAsyncRing`](crate::cp_async::CpAsyncRing)'s landed stage that
/// `wgmma` may read: every thread's copies waited for and fenced for the
/// async proxy before the barrier. From [`wait_stage`]; as a
/// [`Ready`](crate::cp_async::Ready) stage, it borrows the ring, and
/// [`fill`](Self::fill) queues the next stage (never this one).
pub struct AsyncStage<'r, T, const STAGES: usize> {
    ready: crate::cp_async::Ready<'r, T, STAGES>,
}

/// [`CpAsyncRing::wait`](crate::cp_async::CpAsyncRing::wait) for a stage
/// `wgmma` reads: each thread's copies are fenced for the async proxy
/// (`fence.proxy.async`) before the barrier. Every thread of the block
/// calls it together.
#[inline(always)]
#[track_caller]
pub fn wait_stage<T: crate::shared::SharedElement + Copy, const STAGES: usize>(
    ring: &mut crate::cp_async::CpAsyncRing<T, STAGES>,
) -> AsyncStage<'_, T, STAGES> {
    AsyncStage {
        ready: ring.wait_then_fence(crate::arch::wgmma::fence_proxy_async),
    }
}

impl<T: crate::shared::SharedElement + Copy, const STAGES: usize> AsyncStage<'_, T, STAGES> {
    /// [`Ready::fill`](crate::cp_async::Ready::fill): queues the next stage.
    #[inline(always)]
    #[track_caller]
    pub fn fill(&mut self, copies: impl for<'s> FnOnce(&mut crate::cp_async::StageFill<'s, T>)) {
        self.ready.fill(copies)
    }

    /// The stage, for reads of its elements.
    #[inline(always)]
    pub fn ready(&self) -> &crate::cp_async::Ready<'_, T, STAGES> {
        &self.ready
    }
}

impl<'r, T: SixteenBit, const ROWS: usize> KMajorTile<'r, T, Swizzle128B, ROWS> {
    /// The tile of rows `first_row` to `first_row + ROWS - 1` of a landed
    /// ring stage: a ring's rows are 128 bytes, their chunks swizzled by
    /// the row's index within 8 rows, the 128-byte swizzle. Panics when the
    /// rows are not in the stage, `first_row` is not a multiple of 8, or
    /// the rows do not start at a multiple of 1024 bytes (a stage of a
    /// multiple of 8 rows, in dynamic shared memory aligned to 1024 bytes).
    #[inline(always)]
    #[track_caller]
    pub fn from_stage<const STAGES: usize>(
        stage: &'r AsyncStage<'_, T::Element, STAGES>,
        first_row: usize,
    ) -> KMajorTile<'r, T, Swizzle128B, ROWS> {
        let () = Self::ROWS_CHECKED;
        let ready = &stage.ready;
        let rows = ready.rows();
        if first_row.saturating_add(ROWS) > rows {
            stage_rows_past_the_end(first_row, ROWS, rows)
        }
        let base = ready.base().wrapping_byte_add(first_row * 128);
        // The ring swizzles a row's chunks by the row's index within its
        // stage, the GPU by the address's bits 7 to 9: they agree when the
        // stage starts at a multiple of 1024 bytes and the tile at a row
        // that is a multiple of 8 (an aligned address alone is not enough:
        // a stage of 12 rows at 512 bytes read from its row 4). As in
        // `new`: the simulator checks the stage's place from the ring's
        // start (stages of a multiple of 8 rows), the GPU its address.
        // Checked on the stage, not the tile's address: the stage's address
        // is the same in every thread, the row is often the warpgroup's, so
        // a branch on the tile's address is divergent to ptxas, which then
        // guards the k-loop's barrier against divergence (`benches/NOTES.md`).
        let stage_aligned = if cfg!(target_arch = "nvptx64") {
            (ready.base() as usize).is_multiple_of(Swizzle128B::ALIGN)
        } else {
            rows.is_multiple_of(8)
        };
        if !(stage_aligned && first_row.is_multiple_of(8)) {
            stage_rows_misaligned(first_row, rows)
        }
        KMajorTile {
            base,
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }
}

#[track_caller]
#[inline(never)]
#[cold]
fn stage_rows_past_the_end(first_row: usize, rows: usize, stage_rows: usize) -> ! {
    panic!(
        "KMajorTile::from_stage: rows {first_row} to {} are past the stage's {stage_rows}",
        first_row + rows - 1
    )
}

#[track_caller]
#[inline(never)]
#[cold]
fn stage_rows_misaligned(first_row: usize, stage_rows: usize) -> ! {
    panic!("KMajorTile::from_stage: row {first_row} of a stage of {stage_rows} rows does not start at a multiple of 1024 bytes, as the 128-byte swizzle needs (rows a multiple of 8 from a stage of a multiple of 8 rows, in aligned shared memory)")
}
