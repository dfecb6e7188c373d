//! Warp-level operations: shuffles, votes, matching, the active lanes and
//! the lane index.
//!
//! `mask` names the lanes taking part (bit *i* for lane *i*); every lane named
//! must execute the same call. `FULL_MASK` names all 32.
//!
//! A lane that calls a warp function must be named in its mask: PTX leaves
//! `shfl.sync`, `vote.sync` and `bar.warp.sync` undefined otherwise, so every
//! function here tests it and panics (a trap on the GPU; on the simulator a
//! report naming the kernel and thread) when the mask leaves the calling lane
//! out. With `FULL_MASK` the test folds away. A shuffle's value from a lane
//! that does not take part (outside the mask, exited, or past the end of a
//! partial warp) is unspecified, as in CUDA: some value of the type, since
//! only integers and floats shuffle.
//!
//! A shuffle's lane or delta counts modulo 32, as the hardware takes its low
//! five bits: `shfl_down_sync(m, v, 33)` is `shfl_down_sync(m, v, 1)`.
//!
//! The warp collectives, [`reduce`], [`inclusive_scan`], [`exclusive_scan`]
//! and their sums, take part over the whole warp (see
//! [`collective`](crate::collective)): over the lanes of the caller's warp
//! that exist in its block (all 32, or in the last warp of a block whose
//! size is not a multiple of 32, lanes `0 .. size % 32`). Every one of
//! those lanes must call the same collective: a lane that does not leaves
//! the others waiting (a hang on the GPU, a report naming the kernel and
//! the lanes on the simulator). Lanes are combined in lane order.

use crate::arch::{self, ShuffleMode};

mod collective;

pub(crate) use collective::Lanes;
pub use collective::{
    exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum, reduce, scan, sum, WarpScan,
};

/// The number of threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// The mask naming all 32 lanes of a warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// This thread's lane within its warp, `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    arch::lane_id()
}

#[cold]
#[inline(never)]
#[track_caller]
fn lane_not_in_mask(function: &str, lane: u32, mask: u32) -> ! {
    panic!("{function} was called by lane {lane} with the mask {mask:#010x}, which leaves that lane out: every lane that calls a warp function must be in its mask")
}

/// Panics unless `mask` names the calling lane (see the module documentation).
#[inline(always)]
#[track_caller]
pub(crate) fn require_own_lane(function: &str, mask: u32) {
    if mask != FULL_MASK {
        let lane = lane_id();
        if mask & (1 << (lane & 31)) == 0 {
            lane_not_in_mask(function, lane, mask)
        }
    }
}

/// A bit for each lane in `mask` whose `predicate` is true (`__ballot_sync`).
/// Panics if `mask` leaves the calling lane out.
#[inline(always)]
#[track_caller]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    require_own_lane("warp::ballot_sync", mask);
    arch::ballot(mask, predicate)
}

/// The lanes of the warp executing this call together, the caller's
/// included (`__activemask()`, Numba's `cuda.activemask()`).
///
/// A GPU may run the lanes of a warp apart (independent thread scheduling),
/// so the mask only says which lanes happen to be together here, as in
/// CUDA; it does not make them converge. The simulator runs each lane of a
/// warp until it waits or exits, and gives the lanes that reached an
/// `activemask()` meanwhile: in converged code the whole warp, after an early
/// `return` the lanes that did not return. A warp function given this mask
/// waits for every lane it names, on both.
#[inline(always)]
pub fn activemask() -> u32 {
    arch::active_mask()
}

/// The lanes in `mask` whose `value` equals this lane's, bit for bit
/// (`__match_any_sync`; floats compare by their bits, so `NaN` matches the
/// same `NaN`). Every lane in `mask` must call it. Panics if `mask` leaves
/// the calling lane out.
#[inline(always)]
#[track_caller]
pub fn match_any_sync<T: Shuffle>(mask: u32, value: T) -> u32 {
    require_own_lane("warp::match_any_sync", mask);
    let (lo, hi) = value.to_words();
    arch::match_any(mask, lo, hi, T::WIDE)
}

/// `(mask, true)` when every lane in `mask` has the same `value`, bit for
/// bit, `(0, false)` otherwise (`__match_all_sync`). Every lane in `mask`
/// must call it. Panics if `mask` leaves the calling lane out.
#[inline(always)]
#[track_caller]
pub fn match_all_sync<T: Shuffle>(mask: u32, value: T) -> (u32, bool) {
    require_own_lane("warp::match_all_sync", mask);
    let (lo, hi) = value.to_words();
    arch::match_all(mask, lo, hi, T::WIDE)
}

/// Values that can move between lanes with a shuffle: 32- and 64-bit integers and floats.
///
/// Sealed. Its hidden items are safe to call: they convert a value to and
/// from its bits, and no `unsafe` code relies on them (a shuffle moves
/// plain words, and every type here is valid for every bit pattern).
pub trait Shuffle: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn to_words(self) -> (u32, u32);
    #[doc(hidden)]
    fn from_words(lo: u32, hi: u32) -> Self;
    #[doc(hidden)]
    const WIDE: bool;
    /// An integer type (`redux.sync` reduces the 32-bit ones).
    #[doc(hidden)]
    const INTEGER: bool;
    /// A signed type (`redux.sync.min`/`.max` compare as its sign says).
    #[doc(hidden)]
    const SIGNED: bool;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! shuffle32 {
    ($($t:ty, $integer:literal, $signed:literal: $to:expr, $from:expr);*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)] fn to_words(self) -> (u32, u32) { ($to(self), 0) }
            #[inline(always)] fn from_words(lo: u32, _hi: u32) -> Self { $from(lo) }
            const WIDE: bool = false;
            const INTEGER: bool = $integer;
            const SIGNED: bool = $signed;
        }
    )*};
}
shuffle32!(
    u32, true, false: |v| v, |w| w;
    i32, true, true: |v: i32| v as u32, |w| w as i32;
    f32, false, true: f32::to_bits, f32::from_bits
);

macro_rules! shuffle64 {
    ($($t:ty, $integer:literal, $signed:literal: $to:expr, $from:expr);*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)] fn to_words(self) -> (u32, u32) { let b: u64 = $to(self); (b as u32, (b >> 32) as u32) }
            #[inline(always)] fn from_words(lo: u32, hi: u32) -> Self { $from((hi as u64) << 32 | lo as u64) }
            const WIDE: bool = true;
            const INTEGER: bool = $integer;
            const SIGNED: bool = $signed;
        }
    )*};
}
shuffle64!(
    u64, true, false: |v| v, |w| w;
    i64, true, true: |v: i64| v as u64, |w| w as i64;
    f64, false, true: f64::to_bits, f64::from_bits
);

/// A shuffle whose `mask` the caller knows to name the calling lane (the
/// public functions test it first; the block reduction knows it).
#[inline(always)]
pub(crate) fn shuffle_in_mask<T: Shuffle>(
    mode: ShuffleMode,
    mask: u32,
    value: T,
    lane_or_delta: u32,
) -> T {
    let (lo, hi) = value.to_words();
    let lo = arch::shuffle(mode, mask, lo, lane_or_delta);
    let hi = if T::WIDE {
        arch::shuffle(mode, mask, hi, lane_or_delta)
    } else {
        0
    };
    T::from_words(lo, hi)
}

macro_rules! shuffle_fn {
    ($(#[$doc:meta])* $name:ident, $mode:ident) => {
        $(#[$doc])*
        ///
        /// Panics if `mask` leaves the calling lane out.
        #[inline(always)]
        #[track_caller]
        pub fn $name<T: Shuffle>(mask: u32, value: T, lane_or_delta: u32) -> T {
            require_own_lane(concat!("warp::", stringify!($name)), mask);
            shuffle_in_mask(ShuffleMode::$mode, mask, value, lane_or_delta)
        }
    };
}

shuffle_fn!(
    /// The value from lane `lane_id() + delta` (`__shfl_down_sync`); lanes past
    /// the end of the warp keep their own value.
    shfl_down_sync, Down
);
shuffle_fn!(
    /// The value from lane `lane_id() - delta` (`__shfl_up_sync`); lanes below
    /// `delta` keep their own value.
    shfl_up_sync, Up
);
shuffle_fn!(
    /// The value from lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`), the
    /// butterfly used by warp reductions.
    shfl_xor_sync, Xor
);
shuffle_fn!(
    /// The value from lane `src_lane` (`__shfl_sync`): a broadcast.
    shfl_sync, Index
);
