//! The block collectives' scratch: one small shared array per element type,
//! which no code outside the collectives can reach.
//!
//! The collectives write it outside the ownership rule of the phase token
//! (the last lane of warp `w` writes slot `w`, which is not a slot it owns),
//! `unsafe` writes whose soundness rests on nobody else writing the array.
//! So the array is reachable only through a trait in a private module (it
//! cannot be implemented elsewhere, so no other array can pose as the
//! scratch), whose method takes a token that cannot be made elsewhere (a
//! sealed trait's methods are still callable through a generic bound `T:
//! ReduceElement`; without a token, they are not).
//!
//! The protocol, which every collective follows: slots `0 .. 32` hold the
//! warps' partial results, slot [`BROADCAST`] one value for the whole block
//! and slot [`CLAIM`] a claimed tile's index; each is written by one thread,
//! then read by others after a barrier (a phase barrier, or the collectives'
//! own, `COLLECTIVE_BARRIER`). A collective starts in the Writing phase (its
//! caller's token) and returns in the Reading phase, so every read of one
//! collective ends before the phase barrier that gives the next one its
//! Writing token. Two collectives write a slot outside the Writing phase,
//! each read after the collectives' barrier: a tile claim writes
//! [`CLAIM`] and keeps the Writing token until its scan's phase barrier
//! (`crate::lookback`), and the look-back writes [`BROADCAST`] in the
//! Reading phase its scan began, where no other collective reads it.

use super::SharedElement;
use crate::warp::Shuffle;

/// Types a block collective combines: those a warp shuffle moves (32- and
/// 64-bit integers and floats). Sealed: the collectives' scratch array is
/// theirs alone.
pub trait ReduceElement: Shuffle + SharedElement + Copy + private::Scratch {}

/// The number of slots: one per warp of the largest block, and two more.
pub(crate) const SLOTS: usize = 34;

/// The warps' slots, `0 .. WARP_SLOTS`.
pub(crate) const WARP_SLOTS: usize = 32;

/// The slot of a value broadcast to the whole block.
pub(crate) const BROADCAST: usize = 32;

/// The slot of a claimed tile's index (`crate::lookback::claim_tile`), in
/// the `u32` scratch.
pub(crate) const CLAIM: usize = 33;

pub(crate) mod private {
    use super::SLOTS;
    use crate::shared::Shared;

    /// Proof that the caller is this crate's collectives.
    pub struct Token(());

    /// The scratch of a type.
    pub trait Scratch: Sized {
        /// This type's scratch array: a static shared array private to
        /// this module (see the parent module).
        fn scratch(token: Token) -> Shared<Self, SLOTS>;
    }

    macro_rules! scratch {
        ($($t:ty),*) => {$(
            impl Scratch for $t {
                #[inline(always)]
                fn scratch(_: Token) -> Shared<$t, SLOTS> {
                    crate::shared_array!($t; 34)
                }
            }
            impl super::ReduceElement for $t {}
        )*};
    }
    scratch!(u32, i32, f32, u64, i64, f64);

    /// The scratch of `T`.
    #[inline(always)]
    pub(crate) fn scratch<T: Scratch>() -> Shared<T, SLOTS> {
        T::scratch(Token(()))
    }
}

pub(crate) use private::scratch;
