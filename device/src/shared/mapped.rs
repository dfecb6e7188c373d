//! Shared arrays under the maps other than the default (see
//! [`ownership`](crate::ownership)): written by the block's leader, by each
//! warp's leader, in runs ([`Blocked`]), in the halo form ([`Halo`]) or in
//! register tiles ([`Tiles`]); and the 16-byte vector reads every array
//! has in its read phase.

use super::array::{Shared, Shared2d};
use super::phase::{Block, Phase};
use super::SharedElement;
use crate::leader::{BlockLeader, WarpLeader};
use crate::ownership::tiles::{along, positions};
use crate::ownership::{AxisMap, Blocked, ByBlock, ByWarp, Halo, SharedMap, ThreadOrder, Tiles};
use crate::race_check;

#[cold]
#[inline(never)]
#[track_caller]
fn slot_out_of_range(what: core::fmt::Arguments<'_>, len: usize) -> ! {
    panic!("{what} is out of range for a shared array of {len} slots")
}

#[cold]
#[inline(never)]
#[track_caller]
fn vector_out_of_range(start: usize, width: usize, len: usize) -> ! {
    panic!("shared array vector out of bounds: the len is {len} but the vector is {start}..{start} + {width}")
}

/// `N` slots aligned to 16 bytes: one shared vector access per 16 bytes.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned16<A>(A);

/// Whether `V` elements of `T` are whole 16-byte vectors (a compile error
/// otherwise, at the call).
const fn require_vector<T, const V: usize>() {
    assert!(
        V >= 1 && core::mem::size_of::<[T; V]>().is_multiple_of(16),
        "a shared vector is a multiple of 16 bytes: 4 f32 or u32, 2 f64, ..."
    );
}

impl<T: SharedElement + Copy, const N: usize, M: SharedMap, W: Phase> Shared<T, N, M, W> {
    /// Slots `V q .. V q + V`, the `q`-th vector of `V` slots, read with
    /// 16-byte loads (`LDS.128`): the array is 16-byte aligned and `V`
    /// slots are a multiple of 16 bytes (a compile error otherwise). Panics
    /// if the vector does not fit.
    #[inline(always)]
    #[track_caller]
    pub fn vector<const V: usize>(&self, block: &Block<W::Next>, q: usize) -> [T; V] {
        const { require_vector::<T, V>() };
        block.check_owner();
        let start = q.wrapping_mul(V);
        if q > N / V || start + V > N {
            vector_out_of_range(start, V, N)
        }
        race_check::read_range(self.ptr.wrapping_add(start), V);
        // SAFETY: `start + V <= N`; the storage is 16-byte aligned
        // (`SharedStorage`) and `start * size_of::<T>()` a multiple of 16
        // (`V` slots are): the aligned read is of exactly these slots, which
        // nobody writes in this phase (see `as_array`).
        unsafe { self.ptr.add(start).cast::<Aligned16<[T; V]>>().read().0 }
    }
}

impl<T: SharedElement + Copy, const ROWS: usize, const COLS: usize, const STRIDE: usize, M, W>
    Shared2d<T, ROWS, COLS, STRIDE, M, W>
where
    M: SharedMap,
    W: Phase,
{
    /// Slots `(row, V q .. V q + V)` of the read phase, with 16-byte loads
    /// (`LDS.128`): rows must be a multiple of 16 bytes apart (`STRIDE`
    /// slots) and `V` slots a multiple of 16 bytes, else a compile error.
    /// Panics outside the shape.
    #[inline(always)]
    #[track_caller]
    pub fn row_vector<const V: usize>(
        &self,
        block: &Block<W::Next>,
        row: usize,
        q: usize,
    ) -> [T; V] {
        block.check_owner();
        // SAFETY: this array's storage, in its read phase (the token).
        unsafe { Self::read_row_vector(self.ptr, row, q) }
    }

    /// [`row_vector`](Self::row_vector) of the array at `ptr`.
    ///
    /// # Safety
    /// `ptr` is the storage of an array of this type, which no thread
    /// writes in the caller's phase.
    #[inline(always)]
    #[track_caller]
    pub(super) unsafe fn read_row_vector<const V: usize>(
        ptr: *mut T,
        row: usize,
        q: usize,
    ) -> [T; V] {
        const {
            require_vector::<T, V>();
            assert!(
                (STRIDE * core::mem::size_of::<T>()).is_multiple_of(16),
                "vector reads need rows a multiple of 16 bytes apart"
            );
        };
        let start = q.wrapping_mul(V);
        if row >= ROWS || q > COLS / V || start + V > COLS {
            vector_out_of_range(start, V, COLS)
        }
        race_check::read_range(ptr.wrapping_add(row * STRIDE + start), V);
        // SAFETY: in the shape (`row < ROWS`, `start + V <= COLS <=
        // STRIDE`); aligned: 16-byte storage, rows a multiple of 16 bytes
        // apart, `start` a multiple of `V` slots; read-only in this phase
        // (the caller's guarantee).
        unsafe {
            ptr.add(row * STRIDE + start)
                .cast::<Aligned16<[T; V]>>()
                .read()
                .0
        }
    }
}

impl<T: SharedElement, const N: usize, W: Phase> Shared<T, N, ByBlock, W> {
    /// Every slot of the array, to the block's leader, in the array's
    /// write phase.
    #[inline(always)]
    #[track_caller]
    pub fn own_all<'w>(&self, block: &'w mut Block<W>, leader: BlockLeader) -> &'w mut [T; N] {
        block.check_owner();
        leader.owned();
        race_check::write_range(self.ptr, N);
        // SAFETY: only the block's leader holds a `BlockLeader` of this
        // block (`crate::leader`), and under `ByBlock` it owns every slot in
        // the write phase; the token's exclusive borrow bounds the reference
        // to this phase and excludes a second one.
        unsafe { &mut *self.ptr.cast::<[T; N]>() }
    }

    /// Writes slot `index`, by the block's leader. Panics past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_by(&self, block: &mut Block<W>, leader: BlockLeader, index: usize, value: T) {
        match self.own_all(block, leader).get_mut(index) {
            Some(slot) => *slot = value,
            None => slot_out_of_range(format_args!("the block leader's slot {index}"), N),
        }
    }
}

impl<T: SharedElement, const N: usize, const LANE: u32, W: Phase> Shared<T, N, ByWarp<LANE>, W> {
    /// Writes the slot of the leader's warp, `rank / 32`, in the array's
    /// write phase. Panics if the block has more warps than slots.
    #[inline(always)]
    #[track_caller]
    pub fn set_by(&self, block: &mut Block<W>, leader: WarpLeader<LANE>, value: T) {
        block.check_owner();
        let (slot, _) = leader.owned();
        if slot >= N {
            slot_out_of_range(
                format_args!("warp {slot}'s slot (one slot per warp of the block)"),
                N,
            )
        }
        // SAFETY: in bounds; under `ByWarp<LANE>` slot `w` is owned by lane
        // `LANE` of warp `w` alone, whose `WarpLeader<LANE>` no other thread
        // holds (`crate::leader`); the token borrow keeps this in the write
        // phase.
        let element = unsafe { self.ptr.add(slot) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { element.write(value) };
    }
}

impl<T: SharedElement + crate::vector::VectorElement, const N: usize, const K: usize, W: Phase>
    Shared<T, N, Blocked<K>, W>
{
    /// Writes this thread's `j`-th run of `K` slots, `(t + j B) K ..`, with
    /// 16-byte stores where `K` slots are a multiple of 16 bytes. Panics
    /// if the run does not fit.
    #[inline(always)]
    #[track_caller]
    pub fn set_run(&self, block: &mut Block<W>, j: usize, values: [T; K]) {
        block.check_owner();
        let run = j
            .checked_mul(block.size())
            .and_then(|r| r.checked_add(block.thread_rank()))
            .and_then(|r| r.checked_mul(K))
            .filter(|&s| s <= N && N - s >= K);
        let Some(start) = run else {
            slot_out_of_range(
                format_args!(
                    "run {j} of thread {} ({K} slots a run)",
                    block.thread_rank()
                ),
                N,
            )
        };
        // SAFETY: slots `start .. start + K < N` are this thread's run under
        // `Blocked<K>` (run `t + j B` has the one owner `t`); written in the
        // write phase (the token). 16-byte storage and runs a multiple of
        // `K` slots: aligned when `K` slots are a multiple of 16 bytes,
        // else written one by one.
        unsafe { crate::vector::write_run(self.ptr, start, N, values) };
    }
}

impl<T: SharedElement, const N: usize, const R: usize, W: Phase> Shared<T, N, Halo<R>, W> {
    /// Writes this thread's slots of the halo form, slot `s` getting
    /// `f(s)`: slot `t + R`; for `t < R`, also slots `t` and `t + B + R`.
    /// Panics if one of them is past the end (the array holds `B + 2 R`
    /// slots for a block of `B` threads).
    #[inline(always)]
    #[track_caller]
    pub fn fill(&self, block: &mut Block<W>, mut f: impl FnMut(usize) -> T) {
        block.check_owner();
        let (t, b) = (block.thread_rank(), block.size());
        let ptr = self.ptr;
        let mut store = |slot: usize| {
            if slot >= N {
                slot_out_of_range(
                    format_args!("halo slot {slot} of thread {t} (a span holds B + 2 * {R} slots for a block of B = {b} threads)"),
                    N,
                )
            }
            // SAFETY: in bounds; under `Halo<R>` this slot is this thread's
            // alone (see `Halo`); written in the write phase (the token).
            let element = unsafe { ptr.add(slot) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(f(slot)) }
        };
        store(t + R);
        if t < R {
            store(t);
            store(t + b + R);
        }
    }
}

impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, R, C, O, W>
    Shared2d<T, ROWS, COLS, STRIDE, Tiles<R, C, O>, W>
where
    T: SharedElement,
    R: AxisMap,
    C: AxisMap,
    O: ThreadOrder,
    W: Phase,
{
    /// The slot of this thread's tile element `(i, j)`: panics outside the
    /// tile or unless the block has the map's thread count. (Any phase's
    /// token: the caller checks the phase.)
    #[inline(always)]
    #[track_caller]
    pub(super) fn tile_slot<Q: Phase>(block: &Block<Q>, i: usize, j: usize) -> usize {
        const {
            assert!(
                ROWS == R::SPAN && COLS == C::SPAN,
                "a shared array under Tiles<R, C> is R::SPAN x C::SPAN"
            )
        };
        block.check_owner();
        let (pr, pc) = positions::<R, C, O>(block.thread_rank(), block.size());
        match (along::<R>(pr, i), along::<C>(pc, j)) {
            (Some(row), Some(col)) => row * STRIDE + col,
            _ => slot_out_of_range(
                format_args!(
                    "element ({i}, {j}) of a {} x {} register tile",
                    R::PER_THREAD,
                    C::PER_THREAD
                ),
                ROWS * COLS,
            ),
        }
    }

    /// Writes this thread's tile element `(i, j)`, in the array's write
    /// phase. Panics outside the thread's tile.
    #[inline(always)]
    #[track_caller]
    pub fn set(&self, block: &mut Block<W>, i: usize, j: usize, value: T) {
        // SAFETY: this array's storage, in its write phase (the token).
        unsafe { Self::write_tile(self.ptr, block, i, j, value) }
    }

    /// [`set`](Self::set) on the array at `ptr`, for the thread of `block`.
    ///
    /// # Safety
    /// `ptr` is the storage of an array of this type, in its write phase.
    #[inline(always)]
    #[track_caller]
    pub(super) unsafe fn write_tile<Q: Phase>(
        ptr: *mut T,
        block: &Block<Q>,
        i: usize,
        j: usize,
        value: T,
    ) {
        let slot = Self::tile_slot(block, i, j);
        // SAFETY: `row < ROWS`, `col < COLS <= STRIDE`: in the array; the
        // element is this thread's under `Tiles<R, C, O>` (the block size was
        // checked), written in the write phase (the caller's guarantee).
        let element = unsafe { ptr.add(slot) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { element.write(value) };
    }

    /// Writes run `r` of this thread's tile row `i` (`C::RUN` consecutive
    /// slots; `N` must be `C::RUN`), with 16-byte stores where a run is a
    /// multiple of 16 bytes and rows are too.
    #[inline(always)]
    #[track_caller]
    pub fn set_run<const N: usize>(&self, block: &mut Block<W>, i: usize, r: usize, values: [T; N])
    where
        T: crate::vector::VectorElement,
    {
        // SAFETY: this array's storage, in its write phase (the token).
        unsafe { Self::write_tile_run(self.ptr, block, i, r, values) }
    }

    /// [`set_run`](Self::set_run) on the array at `ptr`, for the thread of
    /// `block`.
    ///
    /// # Safety
    /// `ptr` is the storage of an array of this type, in its write phase.
    #[inline(always)]
    #[track_caller]
    pub(super) unsafe fn write_tile_run<Q: Phase, const N: usize>(
        ptr: *mut T,
        block: &Block<Q>,
        i: usize,
        r: usize,
        values: [T; N],
    ) where
        T: crate::vector::VectorElement,
    {
        const { assert!(N == C::RUN, "a run of a tile has C::RUN columns") };
        let slot = Self::tile_slot(block, i, r.saturating_mul(C::RUN));
        // SAFETY: the run's slots `slot .. slot + RUN` are in row `row`
        // (runs start at multiples of `RUN` and end by `C::SPAN = COLS`) and
        // are this thread's, in the write phase (the caller's guarantee);
        // `write_run`'s vector path needs the address 16-byte aligned, which
        // it tests.
        unsafe { crate::vector::write_run(ptr, slot, slot + N, values) };
    }
}
