//! A double buffer whose loop body is written once: the phase as a run-time
//! bit ([`Alternating`]) and a pair of arrays that swap roles at each
//! barrier ([`DoubleBuffer`], [`DoubleBuffer2d`]), CUDA's `buf ^= 1`.
//!
//! A step that reads other threads' slots and writes its own (a tree
//! reduction's `a[t] += a[t + s]`, a Hillis-Steele scan's step) then costs
//! one barrier, as in CUDA, where two typed phases (read, then write) cost
//! two.
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

use super::array::{for_each_own_slot, out_of_range, own_slot, Shared2d};
use super::phase::{Block, Phase};
use super::SharedElement;
use crate::arch;
use crate::ownership::{AxisMap, SharedMap, ThreadOrder, Tiles};
use crate::race_check;
use core::marker::PhantomData;

/// A thread's phase token with the phase as a run-time bit: the same type
/// after every [`sync`](Self::sync), so that a double-buffered loop is
/// written once. From [`Block::alternate`]; `P` is the phase it started in,
/// to which [`into_block`](Self::into_block) returns.
pub struct Alternating<P: Phase> {
    block: Block<P>,
    /// 1 when the block is in [`Reading`](super::Reading) now, else 0;
    /// never anything else (only `alternate` and `sync` write it), which
    /// the buffers' pointers rely on: `read_index` and `write_index` are 0
    /// or 1. A `u32`, not a `bool`: the buffers' offsets
    /// are this times a constant, with no masking or select to a wider
    /// register in the loop (a `bool` cost two instructions a k-tile in the
    /// SGEMM, `benches/NOTES.md`).
    reading: u32,
}

impl<P: Phase> Block<P> {
    /// This token as an [`Alternating`] one, in the same phase.
    #[inline(always)]
    pub fn alternate(self) -> Alternating<P> {
        Alternating {
            block: self,
            reading: u32::from(P::READING),
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
        self.reading ^= 1;
    }

    /// Whether the block is in the [`Reading`](super::Reading) phase now.
    #[inline(always)]
    pub fn is_reading(&self) -> bool {
        self.reading != 0
    }

    /// The typed token of phase `P`, after one more barrier when the block
    /// is in the other phase now.
    #[inline(always)]
    #[track_caller]
    #[must_use = "the token is the only way to use shared memory after this"]
    pub fn into_block(mut self) -> Block<P> {
        if self.is_reading() != P::READING {
            self.sync();
        }
        self.block
    }

    /// This thread's linear index in its block ([`Block::thread_rank`]).
    #[inline(always)]
    pub fn thread_rank(&self) -> usize {
        self.block.thread_rank()
    }

    /// The number of threads in the block ([`Block::size`]).
    #[inline(always)]
    pub fn size(&self) -> usize {
        self.block.size()
    }

    /// The index of this thread's `k`-th owned slot, `t + k * B`, or `None`
    /// when it is not below `len` ([`Block::own_slot`]).
    #[inline(always)]
    pub fn own_slot(&self, k: usize, len: usize) -> Option<usize> {
        self.block.own_slot(k, len)
    }

    /// Which of a double buffer's two arrays is read in this phase: 1 (the
    /// second) in `Writing`, 0 in `Reading`.
    #[inline(always)]
    fn read_index(&self) -> usize {
        (self.reading ^ 1) as usize
    }

    /// Which of a double buffer's two arrays is written in this phase: 0
    /// (the first) in `Writing`, 1 in `Reading`.
    #[inline(always)]
    fn write_index(&self) -> usize {
        self.reading as usize
    }

    /// The underlying token (its rank and size; its phase type is stale).
    #[inline(always)]
    fn block(&self) -> &Block<P> {
        &self.block
    }
}

/// Two arrays of `N` slots, in one array, that swap roles at each barrier
/// of an [`Alternating`] token: in each phase one is read by every thread
/// and the other written, each thread writing only its own slots `t + k *
/// B` (the default map). The first is written in `Writing`, the second in
/// `Reading`. From `shared_array!(T; N, buffers = 2)`.
///
/// A block reduction with one barrier a step, as CUDA writes it:
///
/// ```no_run
/// # use gpu_device::prelude::*;
/// # fn body(input: &[f32], block: Block) -> f32 {
/// let tile = shared_array!(f32; 256, buffers = 2);
/// let mut step = block.alternate();
/// tile.fill(&mut step, |s| input.get(s).copied().unwrap_or(0.0));
/// step.sync();
/// let mut stride = 128;
/// while stride > 0 {
///     let t = step.thread_rank();
///     if t < stride {
///         let sum = tile.get(&step, t) + tile.get(&step, t + stride);
///         tile.set_own(&mut step, 0, sum);
///     }
///     step.sync();
///     stride /= 2;
/// }
/// tile.get(&step, 0) // every thread reads the sum
/// # }
/// ```
pub struct DoubleBuffer<T, const N: usize> {
    /// The first array; the second is `N` slots on.
    ptr: *mut T,
}

impl<T, const N: usize> Clone for DoubleBuffer<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for DoubleBuffer<T, N> {}

impl<T: SharedElement, const N: usize> DoubleBuffer<T, N> {
    /// Wraps the static array at `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of `2 * N` slots of `T` in the block's
    /// shared memory, aligned for `T`, reserved for this handle.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        super::opaque_contents(ptr);
        DoubleBuffer { ptr }
    }

    /// The number of slots of each array, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the arrays have no slots.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The array read in the token's phase: the second in `Writing`, the
    /// first in `Reading`.
    #[inline(always)]
    fn read_ptr<P: Phase>(&self, block: &Alternating<P>) -> *mut T {
        self.ptr.wrapping_add(block.read_index() * N)
    }

    /// The array written in the token's phase.
    #[inline(always)]
    fn write_ptr<P: Phase>(&self, block: &Alternating<P>) -> *mut T {
        self.ptr.wrapping_add(block.write_index() * N)
    }

    /// Slot `index` of the array read in this phase, shared with the other
    /// readers. Panics if `index >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn get_ref<'r, P: Phase>(&self, block: &'r Alternating<P>, index: usize) -> &'r T {
        block.block().check_owner();
        if index >= N {
            out_of_range(index, N)
        }
        // SAFETY: `index < N`, in the array not written in this phase (see
        // the module documentation); the token's shared borrow keeps this
        // thread from reaching the next phase while the reference lives.
        let element = unsafe { self.read_ptr(block).add(index) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// This thread's `k`-th owned slot, `t + k * B`, of the array written in
    /// this phase, to write or read. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own_mut<'w, P: Phase>(&self, block: &'w mut Alternating<P>, k: usize) -> &'w mut T {
        let slot = own_slot(block.block(), k, N);
        // SAFETY: `slot < N` in the array written in this phase, where only
        // thread `t` touches slot `t + k * B`; the token's exclusive borrow
        // stops this thread from holding two references into it.
        let element = unsafe { self.write_ptr(block).add(slot) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { &mut *element }
    }

    /// Writes this thread's `k`-th owned slot of the array written in this
    /// phase. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_own<P: Phase>(&self, block: &mut Alternating<P>, k: usize, value: T) {
        *self.own_mut(block, k) = value;
    }

    /// Writes every slot this thread owns in the array written in this
    /// phase: slot `s` gets `f(s)` (all `N` slots, whatever the block's
    /// size).
    #[inline(always)]
    #[track_caller]
    pub fn fill<P: Phase>(&self, block: &mut Alternating<P>, f: impl FnMut(usize) -> T) {
        let ptr = self.write_ptr(block);
        for_each_own_slot(block.block(), N, f, |slot, value| {
            // SAFETY: `slot < N` is one of this thread's own slots of the
            // array written in this phase (see `own_mut`).
            let element = unsafe { ptr.add(slot) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { *element = value }
        });
    }
}

impl<T: SharedElement + Copy, const N: usize> DoubleBuffer<T, N> {
    /// Reads slot `index` of the array read in this phase. Panics (a trap
    /// on the GPU) if `index >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn get<P: Phase>(&self, block: &Alternating<P>, index: usize) -> T {
        *self.get_ref(block, index)
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
        self.ptr.wrapping_add(block.read_index() * Self::HALF)
    }

    /// The matrix written in the token's phase.
    #[inline(always)]
    fn write_ptr<P: Phase>(&self, block: &Alternating<P>) -> *mut T {
        self.ptr.wrapping_add(block.write_index() * Self::HALF)
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
