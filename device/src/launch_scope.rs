//! What a `#[kernel]` entry point uses to hand the launch's memory to the
//! kernel's body: a scope that ends the slices' lifetimes with the entry
//! point's call.
//!
//! An entry point rebuilds each slice parameter from the pointer and length
//! the launcher passed; a bare `from_raw_parts` would let the body choose
//! any lifetime, `'static` included, and a kernel declaring
//! `counters: &'static [DeviceAtomic<u32>]` could keep them (in a static
//! behind a lock) for a later launch, after the host has freed the buffer.
//! Every slice instead goes through a [`LaunchScope`], a local of the entry
//! point, and borrows it.

use crate::disjoint::{DisjointSlice, DisjointSlice3d};
use crate::matrix::{DisjointSlice2dOf, MatrixIndex};
use crate::ownership::{DisjointMatrix, MatrixMap, SliceMap};

/// A local of a `#[kernel]` entry point that the slices it hands to the
/// body borrow (see the [module documentation](self)).
///
/// Public for the macro, and safe: its methods return what they are given,
/// with a shorter lifetime. Code that makes a scope of its own gains nothing
/// it did not have (a lifetime can only be shortened), so no invariant rests
/// on who makes one.
#[doc(hidden)]
pub struct LaunchScope {
    _private: (),
}

impl LaunchScope {
    /// The scope of one entry point's call.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        LaunchScope { _private: () }
    }

    /// `slice`, living no longer than this scope.
    #[inline(always)]
    pub fn input<'s, T>(&'s self, slice: &'s [T]) -> &'s [T] {
        slice
    }

    /// `slice`, living no longer than this scope.
    #[inline(always)]
    pub fn output<'s, T, M: SliceMap>(
        &'s self,
        slice: DisjointSlice<'s, T, M>,
    ) -> DisjointSlice<'s, T, M> {
        slice
    }

    /// `matrix`, living no longer than this scope.
    #[inline(always)]
    pub fn output_mapped<'s, T, M: MatrixMap>(
        &'s self,
        matrix: DisjointMatrix<'s, T, M>,
    ) -> DisjointMatrix<'s, T, M> {
        matrix
    }

    /// `matrix` (of either index type), living no longer than this scope.
    #[inline(always)]
    pub fn output_2d<'s, T, const R: usize, I: MatrixIndex>(
        &'s self,
        matrix: DisjointSlice2dOf<'s, T, R, I>,
    ) -> DisjointSlice2dOf<'s, T, R, I> {
        matrix
    }

    /// `grid`, living no longer than this scope.
    #[inline(always)]
    pub fn output_3d<'s, T>(&'s self, grid: DisjointSlice3d<'s, T>) -> DisjointSlice3d<'s, T> {
        grid
    }
}
