//! A double buffer whose loop body is written once: the phase as a run-time
//! bit ([`Alternating`]) and a pair of arrays that swap roles at each
//! barrier ([`DoubleBuffer2d`]), CUDA's `buf ^= 1`.
//!
//! With [`Block`]'s phase in the type, a loop with one barrier per step must
//! be written twice (a Writing half and a Reading half), and the GPU's
//! register allocator then assigns a register tile's accumulators once per
//! half, with moves and register-bank conflicts the single loop body of the
//! CUDA C form does not have (SGEMM: see `benches/NOTES.md`). An
//! [`Alternating`] token is the same type in every step, so the loop body
//! is one.
//!
//! # Why it is sound
//!
//! It is the phase rule of the [module documentation](super), with the
//! phase held in a bit instead of a type. [`Block::alternate`] consumes the
//! token (so no typed access happens while the bit is in use) and starts the
//! bit at the token's phase; [`Alternating::sync`] is the same phase barrier
//! as [`Block::sync`] and flips the bit; so after `k` barriers every thread's
//! bit is the phase of barrier count `k`, the same in all threads between two
//! barriers. A [`DoubleBuffer2d`] holds an array written in `Writing` and one
//! written in `Reading` (their types say so: two different `shared_array!`
//! invocations, hence two disjoint arrays), and in each phase reads the one
//! not written in it and writes, by its ownership map, the one written in
//! it: exactly what the two typed handles allow in that phase. Writes
//! borrow the token mutably, reads return values, so nothing outlives a
//! `sync`. [`Alternating::into_block`] returns the typed token of the
//! current barrier count's phase, after one more barrier when the count
//! went odd.

use super::array::Shared2d;
use super::phase::{Block, Phase};
use super::SharedElement;
use crate::arch;
use crate::ownership::{AxisMap, SharedMap, ThreadOrder, Tiles};
use core::marker::PhantomData;

/// A thread's phase token with the phase as a run-time bit: the same type
/// after every [`sync`](Self::sync), so that a double-buffered loop is
/// written once. From [`Block::alternate`]; `P` is the phase it started in,
/// to which [`into_block`](Self::into_block) returns.
pub struct Alternating<P: Phase> {
    block: Block<P>,
    /// Whether the block is in [`Reading`](super::Reading) now.
    reading: bool,
}

impl<P: Phase> Block<P> {
    /// This token as an [`Alternating`] one, in the same phase.
    #[inline(always)]
    pub fn alternate(self) -> Alternating<P> {
        Alternating {
            block: self,
            reading: P::READING,
        }
    }
}

impl<P: Phase> Alternating<P> {
    /// Waits until every thread of the block has finished this phase, as
    /// [`Block::sync`], and moves to the other phase.
    #[inline(always)]
    #[track_caller]
    pub fn sync(&mut self) {
        self.block.check_owner();
        arch::barrier(arch::PHASE_BARRIER);
        self.reading = !self.reading;
    }

    /// Whether the block is in the [`Reading`](super::Reading) phase now.
    #[inline(always)]
    pub fn is_reading(&self) -> bool {
        self.reading
    }

    /// The typed token of phase `P`, after one more barrier when the block
    /// is in the other phase now.
    #[inline(always)]
    #[track_caller]
    #[must_use = "the token is the only way to use shared memory after this"]
    pub fn into_block(mut self) -> Block<P> {
        if self.reading != P::READING {
            self.sync();
        }
        self.block
    }

    /// The underlying token (its rank and size; its phase type is stale).
    #[inline(always)]
    fn block(&self) -> &Block<P> {
        &self.block
    }
}

/// Two `ROWS x COLS` shared matrices under one ownership map, in one
/// array, that swap roles at each barrier of an [`Alternating`] token: in
/// each phase one is read by every thread and the other written by its
/// owners. The first is written in `Writing`, the second in `Reading`. From
/// `shared_array!(T; ROWS, COLS, map = M, buffers = 2)`.
pub struct DoubleBuffer2d<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, M> {
    /// The first matrix; the second is `ROWS * STRIDE` slots on.
    ptr: *mut T,
    _map: PhantomData<M>,
}

impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, M> Clone
    for DoubleBuffer2d<T, ROWS, COLS, STRIDE, M>
{
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, M> Copy
    for DoubleBuffer2d<T, ROWS, COLS, STRIDE, M>
{
}

impl<T: SharedElement, const ROWS: usize, const COLS: usize, const STRIDE: usize, M: SharedMap>
    DoubleBuffer2d<T, ROWS, COLS, STRIDE, M>
{
    /// Slots of one matrix.
    const HALF: usize = ROWS * STRIDE;

    /// Wraps the static array at `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of `2 * ROWS * STRIDE` slots of `T` in
    /// the block's shared memory, aligned for `T` (16 bytes, as every
    /// static shared array), reserved for this handle, and `STRIDE >= COLS`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        super::opaque_contents(ptr);
        DoubleBuffer2d {
            ptr,
            _map: PhantomData,
        }
    }

    /// The matrix read in the token's phase: the second in `Writing`, the
    /// first in `Reading`. An offset from one address, as CUDA's
    /// `as[buf]`, so that each access is that register plus a constant.
    #[inline(always)]
    fn read_ptr<P: Phase>(&self, block: &Alternating<P>) -> *mut T {
        self.ptr
            .wrapping_add(usize::from(!block.reading) * Self::HALF)
    }

    /// The matrix written in the token's phase.
    #[inline(always)]
    fn write_ptr<P: Phase>(&self, block: &Alternating<P>) -> *mut T {
        self.ptr
            .wrapping_add(usize::from(block.reading) * Self::HALF)
    }

    /// Slots `(row, V q .. V q + V)` of the array read in this phase, with
    /// 16-byte loads, as [`Shared2d::row_vector`].
    #[inline(always)]
    #[track_caller]
    pub fn row_vector<P: Phase, const V: usize>(
        &self,
        block: &Alternating<P>,
        row: usize,
        q: usize,
    ) -> [T; V]
    where
        T: Copy,
    {
        block.block().check_owner();
        // SAFETY: the matrix not written in the token's phase (see the
        // module documentation): `ROWS * STRIDE` slots at `read_ptr`, inside
        // the array of `2 * ROWS * STRIDE`, 16-byte aligned as the array is
        // (`HALF` slots are a multiple of 16 bytes where `read_row_vector`
        // compiles: rows are).
        unsafe {
            Shared2d::<T, ROWS, COLS, STRIDE, M>::read_row_vector(self.read_ptr(block), row, q)
        }
    }
}

impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, R, C, O>
    DoubleBuffer2d<T, ROWS, COLS, STRIDE, Tiles<R, C, O>>
where
    T: SharedElement,
    R: AxisMap,
    C: AxisMap,
    O: ThreadOrder,
{
    /// Writes this thread's tile element `(i, j)` of the array written in
    /// this phase, as [`Shared2d::set`]. Panics outside the thread's tile.
    #[inline(always)]
    #[track_caller]
    pub fn set<P: Phase>(&self, block: &mut Alternating<P>, i: usize, j: usize, value: T) {
        let ptr = self.write_ptr(block);
        // SAFETY: the matrix written in the token's phase (see the module
        // documentation): `ROWS * STRIDE` slots inside the array.
        unsafe {
            Shared2d::<T, ROWS, COLS, STRIDE, Tiles<R, C, O>>::write_tile(
                ptr,
                block.block(),
                i,
                j,
                value,
            )
        }
    }

    /// Writes run `r` of this thread's tile row `i` in the array written in
    /// this phase, as [`Shared2d::set_run`].
    #[inline(always)]
    #[track_caller]
    pub fn set_run<P: Phase, const N: usize>(
        &self,
        block: &mut Alternating<P>,
        i: usize,
        r: usize,
        values: [T; N],
    ) where
        T: crate::vector::VectorElement,
    {
        let ptr = self.write_ptr(block);
        // SAFETY: the matrix written in the token's phase (see the module
        // documentation): `ROWS * STRIDE` slots inside the array.
        unsafe {
            Shared2d::<T, ROWS, COLS, STRIDE, Tiles<R, C, O>>::write_tile_run(
                ptr,
                block.block(),
                i,
                r,
                values,
            )
        }
    }
}
