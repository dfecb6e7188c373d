//! How a [`TmaRing`](super::TmaRing)'s B tile is laid out: [`KMajor`], the
//! rows of `Bᵀ` (a GEMM's B stored `N × K`), or [`MnMajor`], the columns
//! of B as it is stored row-major (`K × N`), read by `wgmma` transposed.

use crate::mma::SixteenBit;
use crate::wgmma::{Carried, KMajorTile, MnMajorTile, Operand16, Shape, Swizzle, Warpgroup, M64N};

mod sealed {
    pub trait Sealed {}
}

/// A ring's B layout: [`KMajor`] or [`MnMajor`]. Sealed.
pub trait BMajor: sealed::Sealed {
    /// What an operand's start counts, for the errors.
    #[doc(hidden)]
    const B_LINES: &'static str;
    /// The step an operand's first row (K-major) or column (MN-major)
    /// is a multiple of.
    #[doc(hidden)]
    fn operand_step<S: Swizzle>() -> usize;
    /// The bytes from the B tile's start to the operand starting at
    /// `line` (a multiple of [`operand_step`](Self::operand_step)).
    #[doc(hidden)]
    fn operand_offset<S: Swizzle>(line: usize) -> usize;
    /// Issues the product of the A tile at `a` and the B operand at `b`
    /// (as [`Carried`]'s ring issue).
    ///
    /// # Safety
    /// `a` is a K-major tile of 64 rows and `b` an operand of `N` in this
    /// layout, of the block's shared memory, aligned to `S`'s pattern on
    /// the GPU, that nothing writes until a `wgmma.wait_group` of this
    /// warpgroup retires the product.
    #[doc(hidden)]
    unsafe fn issue<O: SixteenBit + Operand16, S: Swizzle, const N: usize>(
        acc: Carried<N>,
        warpgroup: &Warpgroup,
        a: *const O::Element,
        b: *const O::Element,
    ) -> Carried<N>
    where
        M64N<N>: Shape;
}

/// A B tile of `B_ROWS` rows of `Bᵀ` (B stored `N × K`), each a k-block's
/// `S::BYTES`: one box of the map a stage; operands of
/// [`KMajorTile`]s from any row that is a multiple of 8.
pub enum KMajor {}

/// A B tile of `B_ROWS` columns of B (stored row-major, `K × N`), in
/// chunks of the swizzle's width (64 columns for the 128-byte swizzle),
/// each the k-block's rows of it: `B_ROWS / 64` boxes of the map a stage;
/// operands of [`MnMajorTile`]s from any column that is a multiple of the
/// chunk's width.
pub enum MnMajor {}

impl sealed::Sealed for KMajor {}
impl sealed::Sealed for MnMajor {}

impl BMajor for KMajor {
    const B_LINES: &'static str = "rows of the B tile";
    #[inline(always)]
    fn operand_step<S: Swizzle>() -> usize {
        8
    }
    #[inline(always)]
    fn operand_offset<S: Swizzle>(line: usize) -> usize {
        line * S::BYTES
    }
    #[inline(always)]
    unsafe fn issue<O: SixteenBit + Operand16, S: Swizzle, const N: usize>(
        acc: Carried<N>,
        warpgroup: &Warpgroup,
        a: *const O::Element,
        b: *const O::Element,
    ) -> Carried<N>
    where
        M64N<N>: Shape,
    {
        // SAFETY: the caller's contract: `b` is `N` K-major rows.
        unsafe {
            let b = KMajorTile::<O, S, N>::from_raw(b);
            acc.issue_from_raw::<O, S, _>(warpgroup, a, &b)
        }
    }
}

impl BMajor for MnMajor {
    const B_LINES: &'static str = "columns of the B tile";
    #[inline(always)]
    fn operand_step<S: Swizzle>() -> usize {
        S::BYTES / 2
    }
    #[inline(always)]
    fn operand_offset<S: Swizzle>(line: usize) -> usize {
        // Chunks of `S::BYTES / 2` columns, each the k-block's as many rows.
        line / (S::BYTES / 2) * (S::BYTES / 2 * S::BYTES)
    }
    #[inline(always)]
    unsafe fn issue<O: SixteenBit + Operand16, S: Swizzle, const N: usize>(
        acc: Carried<N>,
        warpgroup: &Warpgroup,
        a: *const O::Element,
        b: *const O::Element,
    ) -> Carried<N>
    where
        M64N<N>: Shape,
    {
        // SAFETY: the caller's contract: `b` is `N` MN-major columns, in
        // chunks of the ring's k-block rows.
        unsafe {
            let b = MnMajorTile::<O, S, N>::from_raw(b);
            acc.issue_from_raw::<O, S, _>(warpgroup, a, &b)
        }
    }
}
