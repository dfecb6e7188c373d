//! The MN-major B tile `wgmma` reads transposed (`imm-trans-b` 1): B as it
//! is stored row-major (`K × N`, N contiguous), so a GEMM of row-major
//! operands needs no transposed copy of B.

use super::tile::{place, swizzled, AsyncReading, Swizzle};
use crate::arch::SharedMatrix;
use crate::mma::SixteenBit;
use crate::shared::DynamicShared;
use core::marker::PhantomData;

/// An MN-major tile of `N` columns and [`K`](Self::K) rows (k) of the
/// block's dynamic shared memory, as `wgmma` reads a row-major B: the
/// columns in chunks of [`COLUMNS`](Self::COLUMNS) (the swizzle's width),
/// each chunk `K` rows of `S::BYTES` bytes whose 16-byte pieces are
/// swizzled by `S`, the chunks one after another ([`CHUNK_BYTES`](Self::CHUNK_BYTES)
/// apart: what a bulk tensor copy of a `K × COLUMNS` box lands, box after
/// box). The tile starts at a multiple of the pattern's size (`S::ALIGN`
/// bytes). Its element `(k, col)` is at slot [`slot(k, col)`](Self::slot).
///
/// Made only by [`MnMajorTile::new`], which checks its place; its size and
/// swizzle are its type's, so the descriptor `wgmma` gets always describes
/// the tile as it is. As [`KMajorTile`](super::KMajorTile), it is read in an
/// [`AsyncReading`] phase.
pub struct MnMajorTile<'r, T: SixteenBit, S: Swizzle, const N: usize> {
    base: *const T::Element,
    _borrow: PhantomData<&'r [T::Element]>,
    _swizzle: PhantomData<fn() -> S>,
}

impl<'r, T: SixteenBit, S: Swizzle, const N: usize> MnMajorTile<'r, T, S, N> {
    /// The tile's rows (its K): the swizzle's width in elements, as a
    /// K-major tile's, so both operands of a product share K.
    pub const K: usize = S::BYTES / 2;
    /// The columns of a chunk: a row of the swizzle's width.
    pub const COLUMNS: usize = S::BYTES / 2;
    /// The bytes of a chunk: `K` rows of `S::BYTES`.
    pub const CHUNK_BYTES: usize = Self::K * S::BYTES;
    /// The tile's elements.
    pub const ELEMENTS: usize = N * Self::K;
    /// Columns a whole number of chunks (checked at compile time).
    const COLUMNS_CHECKED: () = assert!(
        N > 0 && N.is_multiple_of(S::BYTES / 2),
        "an MN-major tile's columns are a multiple of its swizzle's width (64, 32 or 16 elements)"
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
    ) -> MnMajorTile<'r, T, S, N> {
        let () = Self::COLUMNS_CHECKED;
        MnMajorTile {
            base: place::<T, S>(shared, phase, offset, Self::ELEMENTS, "MnMajorTile"),
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }

    /// The tile at `base`, for the rings that place tiles themselves.
    ///
    /// # Safety
    /// `base` starts `N / COLUMNS` chunks of `CHUNK_BYTES` of the block's
    /// shared memory, at a multiple of `S::ALIGN` bytes on the GPU,
    /// readable for `'r` by the async proxy.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(base: *const T::Element) -> MnMajorTile<'r, T, S, N> {
        let () = Self::COLUMNS_CHECKED;
        MnMajorTile {
            base,
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }

    /// The slot, from the tile's start, of element `(k, col)`. Panics
    /// unless `k < K` and `col < N`.
    #[inline(always)]
    #[track_caller]
    pub fn slot(k: usize, col: usize) -> usize {
        assert!(
            k < Self::K && col < N,
            "MnMajorTile::slot: ({k}, {col}) is outside the tile's {} × {N} elements",
            Self::K
        );
        let chunk = col / Self::COLUMNS;
        let offset = k * S::BYTES + 2 * (col % Self::COLUMNS);
        (chunk * Self::CHUNK_BYTES + swizzled(S::BYTES, offset)) / 2
    }

    /// The element `(k, col)` stored at `slot` (from the tile's start): the
    /// inverse of [`slot`](Self::slot), to fill a tile slot by slot. Panics
    /// when `slot >= ELEMENTS`.
    #[inline(always)]
    #[track_caller]
    pub fn coordinates(slot: usize) -> (usize, usize) {
        assert!(
            slot < Self::ELEMENTS,
            "MnMajorTile::coordinates: slot {slot} is past the tile's {} elements",
            Self::ELEMENTS
        );
        let (chunk, within) = (2 * slot / Self::CHUNK_BYTES, 2 * slot % Self::CHUNK_BYTES);
        let at = swizzled(S::BYTES, within);
        (at / S::BYTES, chunk * Self::COLUMNS + at % S::BYTES / 2)
    }

    /// The operand of the `wgmma` of K step `step` (rows `16 step` to
    /// `16 step + 15`).
    #[inline(always)]
    pub(super) fn k_step(&self, step: usize) -> SharedMatrix {
        SharedMatrix {
            base: self.base.cast(),
            k_byte_offset: (16 * step * S::BYTES) as u32,
            row_bytes: S::BYTES as u32,
            layout_type: S::LAYOUT_TYPE,
            chunk_bytes: Self::CHUNK_BYTES as u32,
        }
    }
}
