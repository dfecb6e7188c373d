//! The maps that only shared arrays have: the default rule, and the halo.
//! (Shared arrays also take [`ByBlock`](super::ByBlock),
//! [`ByWarp`](super::ByWarp), [`Blocked`](super::Blocked) and
//! [`Tiles`](super::Tiles); their methods are in `shared/mapped.rs`.)

use super::{sealed, Blocked, Map, SharedMap};

/// Thread `t` of a block of `B` threads owns slots `t + k B`, `k = 0, 1,
/// ...` (of a 2-D array: the slots whose logical index `row * COLS + col` is
/// one of those): the default map of shared arrays, whose `fill` writes
/// every slot whatever the block's size.
///
/// Disjoint: slot `s` is owned by thread `s mod B` alone.
pub enum BlockStride {}

/// The halo form of a 1-D stencil's shared span, for a block of `B` threads
/// and a radius `R`: thread `t` owns slot `t + R` (its own input), and the
/// first `R` threads also own slots `t` (the left halo) and `t + B + R` (the
/// right halo). A span of `B + 2 R` slots is filled with one load per thread
/// and two more per edge thread, and no second barrier.
///
/// Disjoint: the centre slots `R .. B + R` are owned by threads `0 .. B`
/// one each; the left halo `0 .. R` and the right halo `B + R .. B + 2 R`
/// by threads `0 .. R` one each (threads `t < min(R, B)`); the three ranges
/// do not meet.
pub enum Halo<const R: usize> {}

impl sealed::Sealed for BlockStride {}
impl<const R: usize> sealed::Sealed for Halo<R> {}
impl Map for BlockStride {}
impl<const R: usize> Map for Halo<R> {}
impl SharedMap for BlockStride {}
impl<const R: usize> SharedMap for Halo<R> {}
impl<const K: usize> SharedMap for Blocked<K> {}
