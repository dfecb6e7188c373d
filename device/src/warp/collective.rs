//! Warp collectives: a reduction, an inclusive and an exclusive scan of one
//! value per lane, for any associative [`Operator`] (see
//! [`collective`](crate::collective)).
//!
//! They take part over the lanes of the caller's warp that exist in its
//! block: all 32, or in the last warp of a block whose size is not a
//! multiple of 32, lanes `0 .. size % 32`. Every one of those lanes must
//! call the same collective (as for `__shfl_sync` with their mask): a lane
//! that does not, because it returned early or took another branch, leaves
//! the others waiting (a hang on the GPU, a report naming the kernel and the
//! lanes on the simulator). Lanes are combined in lane order.

use super::{shuffle_in_mask, Shuffle};
use crate::arch::ShuffleMode;
use crate::collective::{Arithmetic, Operator, Sum};

/// The lanes of this thread's warp that exist in its block: their mask,
/// their number, and this thread's lane.
#[derive(Clone, Copy)]
pub(crate) struct Lanes {
    pub(crate) mask: u32,
    pub(crate) count: u32,
    pub(crate) lane: u32,
}

impl Lanes {
    /// The lanes of the warp of the thread of rank `rank` in a block of
    /// `size` threads. The mask names the calling lane, `rank % 32`:
    /// `rank < size`, so `rank % 32 < count`.
    #[inline(always)]
    pub(crate) fn of(rank: usize, size: usize) -> Lanes {
        let count = (size - rank / 32 * 32).min(32) as u32;
        let mask = if count == 32 {
            u32::MAX
        } else {
            (1u32 << count) - 1
        };
        Lanes {
            mask,
            count,
            lane: (rank % 32) as u32,
        }
    }

    /// The lanes of the caller's warp.
    #[inline(always)]
    pub(crate) fn of_this_thread() -> Lanes {
        Lanes::of(crate::thread::thread_rank(), crate::thread::block_size())
    }

    #[inline(always)]
    fn shuffle<T: Shuffle>(self, mode: ShuffleMode, value: T, lane_or_delta: u32) -> T {
        // `mask` names the calling lane (`Lanes::of`).
        shuffle_in_mask(mode, self.mask, value, lane_or_delta)
    }

    /// `op` over the lanes' values, in lane order; every lane gets it.
    #[inline(always)]
    pub(crate) fn reduce<T: Shuffle>(self, value: T, op: &impl Operator<T>) -> T {
        if let Some(total) = hardware_reduce(op, self.mask, value) {
            return total;
        }
        let mut v = value;
        if self.count == 32 {
            // The butterfly, distances 1, 2, 4, ...: after the step of
            // distance `d`, each lane holds the reduction of its aligned
            // group of `2 d` lanes, combined in lane order (the lane whose bit
            // `d` is set holds the group's later half).
            let mut d = 1;
            while d < 32 {
                let other = self.shuffle(ShuffleMode::Xor, v, d);
                v = if self.lane & d == 0 {
                    op.combine(v, other)
                } else {
                    op.combine(other, v)
                };
                d *= 2;
            }
            v
        } else {
            // A partial warp: lanes at or past `count` hold no value, so
            // reduce downwards into lane 0, then broadcast. Distances 1, 2,
            // 4, ...: after the step of distance `d`, lane `i` holds lanes
            // `i .. i + 2 d` (those below `count`), in order.
            let mut d = 1;
            while d < 32 {
                let other = self.shuffle(ShuffleMode::Down, v, d);
                if self.lane + d < self.count {
                    v = op.combine(v, other);
                }
                d *= 2;
            }
            self.shuffle(ShuffleMode::Index, v, 0)
        }
    }

    /// The inclusive scan of the lanes' values, in lane order (Kogge and
    /// Stone's: five shuffles up). Lane `i` reads lanes below `i` only, all
    /// of which exist, so partial warps need no test.
    #[inline(always)]
    pub(crate) fn inclusive_scan<T: Shuffle>(self, value: T, op: &impl Operator<T>) -> T {
        let mut v = value;
        let mut d = 1;
        while d < 32 {
            let other = self.shuffle(ShuffleMode::Up, v, d);
            if self.lane >= d {
                v = op.combine(other, v);
            }
            d *= 2;
        }
        v
    }

    /// The value of the warp's last lane (an inclusive scan's total).
    #[inline(always)]
    pub(crate) fn last<T: Shuffle>(self, value: T) -> T {
        self.shuffle(ShuffleMode::Index, value, self.count - 1)
    }

    /// The exclusive scan of the lanes' values from their `inclusive` scan,
    /// without `initial`: `None` in lane 0.
    #[inline(always)]
    pub(crate) fn exclusive_from_inclusive<T: Shuffle>(
        self,
        inclusive: T,
        value: T,
        op: &impl Operator<T>,
    ) -> Option<T> {
        // An operation that undoes itself needs no shuffle; the shuffle is
        // made by every lane either way (lane 0 included), as it must be.
        let before = match op.uncombine(inclusive, value) {
            Some(before) => before,
            None => self.shuffle(ShuffleMode::Up, inclusive, 1),
        };
        (self.lane > 0).then_some(before)
    }
}

/// A warp scan's results for one lane: see [`scan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpScan<T> {
    /// `op` over the values of lanes `0 ..= lane`.
    pub inclusive: T,
    /// `op` over the values of lanes `0 .. lane`; `None` in lane 0.
    pub exclusive: Option<T>,
    /// `op` over every lane's value, the same in every lane.
    pub total: T,
}

/// The inclusive and exclusive scans and the total at once, in lane order
/// (CUB's `WarpScan::Scan` with its warp aggregate): six shuffles, seven
/// where `op` cannot undo a combination (floats, closures). Every lane of
/// the warp that exists in the block must call it (see the [module
/// documentation](crate::warp)).
#[inline(always)]
pub fn scan<T: Shuffle>(value: T, op: impl Operator<T>) -> WarpScan<T> {
    let lanes = Lanes::of_this_thread();
    let inclusive = lanes.inclusive_scan(value, &op);
    let exclusive = lanes.exclusive_from_inclusive(inclusive, value, &op);
    WarpScan {
        inclusive,
        exclusive,
        total: lanes.last(inclusive),
    }
}

/// `redux.sync` for the operations and types it has, on sm_80 and later.
#[inline(always)]
#[allow(unused_variables)]
fn hardware_reduce<T: Shuffle>(op: &impl Operator<T>, mask: u32, value: T) -> Option<T> {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    if let Some(kind) = op.redux() {
        // `redux` is `Some` only for 32-bit integers (`collective::redux_for`),
        // whose bits are the low word; `mask` names the calling lane.
        let (lo, _) = value.to_words();
        return Some(T::from_words(
            crate::arch::redux(kind, T::SIGNED, mask, lo),
            0,
        ));
    }
    None
}

/// `op` over the values of every lane of the warp, combined in lane order;
/// every lane gets the result (`cg::reduce`, CUB's `WarpReduce::Reduce`).
/// One `redux.sync` for 32-bit integers with a built-in operation on sm_80
/// and later, else five shuffles.
///
/// Every lane of the warp that exists in the block must call it (see the
/// [module documentation](crate::warp)).
#[inline(always)]
pub fn reduce<T: Shuffle>(value: T, op: impl Operator<T>) -> T {
    Lanes::of_this_thread().reduce(value, &op)
}

/// The sum over the warp (wrapping for integers): [`reduce`] with [`Sum`].
#[inline(always)]
pub fn sum<T: Arithmetic>(value: T) -> T {
    reduce(value, Sum)
}

/// Lane `i` gets `op` over the values of lanes `0 ..= i`, in lane order
/// (`cg::inclusive_scan`, CUB's `WarpScan::InclusiveScan`): five shuffles.
///
/// Every lane of the warp that exists in the block must call it (see the
/// [module documentation](crate::warp)).
#[inline(always)]
pub fn inclusive_scan<T: Shuffle>(value: T, op: impl Operator<T>) -> T {
    Lanes::of_this_thread().inclusive_scan(value, &op)
}

/// The inclusive prefix sum over the warp: [`inclusive_scan`] with [`Sum`].
#[inline(always)]
pub fn inclusive_sum<T: Arithmetic>(value: T) -> T {
    inclusive_scan(value, Sum)
}

/// Lane 0 gets `initial`, lane `i > 0` gets `initial` combined with the
/// values of lanes `0 .. i`, in lane order (CUB's
/// `WarpScan::ExclusiveScan(input, output, initial, op)`): six shuffles,
/// five for an integer [`Sum`].
///
/// Every lane of the warp that exists in the block must call it (see the
/// [module documentation](crate::warp)).
#[inline(always)]
pub fn exclusive_scan<T: Shuffle>(value: T, initial: T, op: impl Operator<T>) -> T {
    let lanes = Lanes::of_this_thread();
    let inclusive = lanes.inclusive_scan(value, &op);
    match lanes.exclusive_from_inclusive(inclusive, value, &op) {
        Some(before) => op.combine(initial, before),
        None => initial,
    }
}

/// The exclusive prefix sum over the warp, 0 in lane 0: [`exclusive_scan`]
/// with [`Sum`].
#[inline(always)]
pub fn exclusive_sum<T: Arithmetic>(value: T) -> T {
    let lanes = Lanes::of_this_thread();
    let inclusive = lanes.inclusive_scan(value, &Sum);
    lanes
        .exclusive_from_inclusive(inclusive, value, &Sum)
        .unwrap_or(T::ZERO)
}
