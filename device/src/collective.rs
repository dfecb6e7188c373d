//! Collectives: reductions and scans over the threads of a warp or a block,
//! for any associative operation, as CUB's `WarpReduce`, `WarpScan`,
//! `BlockReduce` and `BlockScan` and cooperative groups' `cg::reduce`,
//! `cg::inclusive_scan` and `cg::exclusive_scan` compute them.
//!
//! | over | reduce | inclusive scan | exclusive scan | sums |
//! |---|---|---|---|---|
//! | a warp | [`warp::reduce`](crate::warp::reduce) | [`warp::inclusive_scan`](crate::warp::inclusive_scan) | [`warp::exclusive_scan`](crate::warp::exclusive_scan) | [`warp::sum`](crate::warp::sum), [`warp::inclusive_sum`](crate::warp::inclusive_sum), [`warp::exclusive_sum`](crate::warp::exclusive_sum) |
//! | a block | [`block_reduce`](crate::shared::block_reduce) | [`block_inclusive_scan`](crate::shared::block_inclusive_scan) | [`block_exclusive_scan`](crate::shared::block_exclusive_scan) | [`block_sum`](crate::shared::block_sum), [`block_inclusive_sum`](crate::shared::block_inclusive_sum), [`block_exclusive_sum`](crate::shared::block_exclusive_sum) |
//!
//! The operation is an [`Operator`]: one of [`Sum`], [`Min`], [`Max`],
//! [`BitAnd`], [`BitOr`], [`BitXor`], or any closure `|a, b| ...`. It must
//! be associative; it need not be commutative: every collective combines
//! values in thread order (lane order in a warp, rank order in a block), so
//! a scan with `|a, b| b` gives each thread the value of the last thread
//! before it, and the result is the same on every run, on a GPU and on the
//! simulator (float sums included: the same tree of additions).
//!
//! On sm_80 and later, a warp reduction of 32-bit integers with [`Sum`],
//! [`Min`], [`Max`], [`BitAnd`], [`BitOr`] or [`BitXor`] is one `redux.sync`
//! instruction; otherwise, and for scans, warp collectives are shuffles.
//! Block collectives add one round through a small shared array of their
//! own, which no other code can reach, and take the phase token
//! ([`Block`](crate::Block)) for the barrier.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::collective::Max;
//! use gpu_device::shared::block_exclusive_sum;
//!
//! // With `#[kernel]`: each thread's exclusive prefix sum within its block,
//! // and the block's maximum over a warp.
//! pub fn prefixes(x: &[u32], mut out: DisjointSlice<u32>, mut maxima: DisjointSlice<u32>, block: Block) {
//!     let i = thread_index();
//!     let v = x.get(i.get()).copied().unwrap_or(0);
//!     let warp_max = gpu_device::warp::reduce(v, Max);
//!     let (_r, scan) = block_exclusive_sum(block, v);
//!     out.set(i, scan.value);
//!     maxima.set(i, warp_max);
//! }
//! ```

use crate::warp::Shuffle;

/// An associative operation that collectives combine values with.
///
/// Implemented by the built-in operations ([`Sum`], [`Min`], [`Max`],
/// [`BitAnd`], [`BitOr`], [`BitXor`]) and by every `Fn(T, T) -> T`, so a
/// closure is an operator: `warp::reduce(v, |a: f32, b: f32| a.max(b))`.
/// Collectives call `combine(earlier, later)` with the values of lower and
/// higher threads in that order.
///
/// The hidden methods let the built-in operations use faster instructions
/// (their defaults, used by closures, say "none"). They are safe: an
/// implementation that lies gives wrong values, never undefined behaviour.
pub trait Operator<T> {
    /// `a` combined with `b`, `a` from the earlier thread.
    fn combine(&self, a: T, b: T) -> T;

    /// The hardware warp reduction (`redux.sync`) that computes this
    /// operation, if any.
    #[doc(hidden)]
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        None
    }

    /// The value `e` with `combine(e, value) == inclusive`, when the
    /// operation can undo a combination exactly (integer sums): an
    /// exclusive scan from an inclusive one without another shuffle.
    #[doc(hidden)]
    #[inline(always)]
    fn uncombine(&self, inclusive: T, value: T) -> Option<T> {
        let _ = (inclusive, value);
        None
    }
}

impl<T, F: Fn(T, T) -> T> Operator<T> for F {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        self(a, b)
    }
}

/// The operations of `redux.sync` (sm_80's warp reduction of 32-bit integers).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redux {
    /// `redux.sync.add`
    Add,
    /// `redux.sync.min`
    Min,
    /// `redux.sync.max`
    Max,
    /// `redux.sync.and`
    And,
    /// `redux.sync.or`
    Or,
    /// `redux.sync.xor`
    Xor,
}

/// Addition: wrapping for integers (as `redux.sync.add` and CUDA's `+` on
/// unsigned values), IEEE for floats.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;

/// The smaller value; for floats `f32::min`, which ignores a NaN operand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

/// The larger value; for floats `f32::max`, which ignores a NaN operand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

/// Bitwise and, of integers.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitAnd;

/// Bitwise or, of integers.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitOr;

/// Bitwise exclusive or, of integers.
#[derive(Clone, Copy, Debug, Default)]
pub struct BitXor;

mod sealed {
    pub trait Sealed {}
}

/// The types the built-in operations apply to: the integers and floats a
/// warp shuffle moves (`u32`, `i32`, `f32`, `u64`, `i64`, `f64`). Sealed.
pub trait Arithmetic: Shuffle + PartialOrd + sealed::Sealed {
    /// Zero, the start of a sum ([`warp::exclusive_sum`](crate::warp::exclusive_sum) gives it to lane 0).
    const ZERO: Self;
    #[doc(hidden)]
    fn sum(a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn unsum(inclusive: Self, value: Self) -> Option<Self>;
    #[doc(hidden)]
    fn min(a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn max(a: Self, b: Self) -> Self;
}

/// The integer types of [`Arithmetic`], for the bitwise operations. Sealed.
pub trait Integer:
    Arithmetic
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
{
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Arithmetic for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn unsum(inclusive: Self, value: Self) -> Option<Self> { Some(inclusive.wrapping_sub(value)) }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { Ord::min(a, b) }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { Ord::max(a, b) }
        }
        impl Integer for $t {}
    )*};
}
integer!(u32, i32, u64, i64);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Arithmetic for $t {
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a + b }
            // `(a + b) - b` need not be `a` in floating point.
            #[inline(always)]
            fn unsum(_: Self, _: Self) -> Option<Self> { None }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { crate::math::Float::min(a, b) }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { crate::math::Float::max(a, b) }
        }
    )*};
}
float!(f32, f64);

/// Whether `redux.sync` reduces `T`: 32-bit integers. (Its add, min and
/// max are exact for both signs; the instruction's type says which
/// comparison.)
#[inline(always)]
fn redux_for<T: Shuffle>(op: Redux) -> Option<Redux> {
    (!T::WIDE && T::INTEGER).then_some(op)
}

impl<T: Arithmetic> Operator<T> for Sum {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        T::sum(a, b)
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::Add)
    }
    #[inline(always)]
    fn uncombine(&self, inclusive: T, value: T) -> Option<T> {
        T::unsum(inclusive, value)
    }
}

impl<T: Arithmetic> Operator<T> for Min {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        T::min(a, b)
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::Min)
    }
}

impl<T: Arithmetic> Operator<T> for Max {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        T::max(a, b)
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::Max)
    }
}

impl<T: Integer> Operator<T> for BitAnd {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        a & b
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::And)
    }
}

impl<T: Integer> Operator<T> for BitOr {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        a | b
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::Or)
    }
}

impl<T: Integer> Operator<T> for BitXor {
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        a ^ b
    }
    #[inline(always)]
    fn redux(&self) -> Option<Redux> {
        redux_for::<T>(Redux::Xor)
    }
}

/// What a scan gives each thread: its scanned value and the total over all
/// the threads taking part (the warp's, or the block's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scanned<T> {
    /// This thread's inclusive or exclusive scan value.
    pub value: T,
    /// Every thread's values combined, the same in every thread.
    pub total: T,
}
