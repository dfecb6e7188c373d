//! The maps of one-dimensional outputs ([`DisjointSlice<T, M>`]): one
//! element per thread, per block or per warp, and several per thread, by
//! grid stride, blocked or striped.

use super::{sealed, Map, NotSend, SharedMap, SliceMap};
use crate::disjoint::DisjointSlice;
use crate::leader::{block_rank, BlockLeader, WarpLeader};
use crate::race_check;
use crate::thread_owner::Owner;
use crate::vector::{load_vectors, write_run, VectorElement};
use core::marker::PhantomData;

/// Thread `g = grid_1d()` owns element `g`, named by its
/// [`ThreadIndex`](crate::ThreadIndex): the map of a plain
/// [`DisjointSlice<T>`](crate::DisjointSlice).
pub enum ByThread {}

/// Block `b` owns element `b` of the output (its linear index in the grid,
/// [`block_rank`]), written by its leader, rank 0
/// ([`block_leader`](crate::leader::block_leader)). In shared memory: every
/// slot of the array, written by the leader.
///
/// Disjoint: one leader per block, and distinct blocks have distinct
/// linear indices.
pub enum ByBlock {}

/// Warp `w` owns element `w` of the output (its index in the grid, see
/// [`WarpLeader::warp`]), written by its lane `LANE`
/// ([`warp_leader::<LANE>`](crate::leader::warp_leader)). In shared memory:
/// slot `rank / 32` (its index in the block).
///
/// Disjoint: one lane `LANE` per warp, and distinct warps have distinct
/// indices.
pub enum ByWarp<const LANE: u32 = 0> {}

/// Thread `g = b B + t` (its linear index in the launch, of `G` threads)
/// owns elements `g + k G`, `k = 0, 1, ...`: the grid-stride loop.
///
/// Disjoint: element `e` is owned by thread `e mod G` alone (`g < G`).
pub enum GridStride {}

/// Thread `t` of block `b` (of `B` threads) owns the `K` consecutive
/// elements `(b B + t) K + k`, `k < K`: CUB's "blocked" arrangement, tiles of
/// `B K` elements per block.
///
/// Disjoint: the runs of distinct `g = b B + t` are disjoint intervals.
pub enum Blocked<const K: usize> {}

/// Thread `t` of block `b` (of `B` threads) owns elements `b B K + t + k B`,
/// `k < K`: CUB's "striped" arrangement (a warp's `k`-th accesses are
/// consecutive), tiles of `B K` elements per block.
///
/// Disjoint: block `b`'s tile is `[b B K, (b + 1) B K)`, and inside it
/// `t + k B` with `t < B`, `k < K` names each offset once.
pub enum Striped<const K: usize> {}

impl sealed::Sealed for ByThread {}
impl sealed::Sealed for ByBlock {}
impl<const LANE: u32> sealed::Sealed for ByWarp<LANE> {}
impl sealed::Sealed for GridStride {}
impl<const K: usize> sealed::Sealed for Blocked<K> {}
impl<const K: usize> sealed::Sealed for Striped<K> {}
impl Map for ByThread {}
impl Map for ByBlock {}
impl<const LANE: u32> Map for ByWarp<LANE> {}
impl Map for GridStride {}
impl<const K: usize> Map for Blocked<K> {}
impl<const K: usize> Map for Striped<K> {}
impl SliceMap for ByThread {}
impl SliceMap for ByBlock {}
impl<const LANE: u32> SliceMap for ByWarp<LANE> {}
impl SliceMap for GridStride {}
impl<const K: usize> SliceMap for Blocked<K> {}
impl<const K: usize> SliceMap for Striped<K> {}
impl SharedMap for ByBlock {}
impl<const LANE: u32> SharedMap for ByWarp<LANE> {}

/// The maps whose threads own several elements, named by [`Owned`] values
/// from [`Items`].
pub trait ItemMap: SliceMap {}
impl ItemMap for GridStride {}
impl<const K: usize> ItemMap for Blocked<K> {}
impl<const K: usize> ItemMap for Striped<K> {}

/// An element index this thread owns under map `M`: no other thread of the
/// launch holds an `Owned<M>` of the same value. From [`Items::get`] or
/// [`Items::below`]; neither `Send` nor `Sync`.
pub struct Owned<M> {
    index: usize,
    owner: Owner,
    _map: PhantomData<fn() -> M>,
    _thread: NotSend,
}

impl<M> Clone for Owned<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Owned<M> {}

impl<M> core::fmt::Debug for Owned<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Owned").field(&self.index).finish()
    }
}

impl<M> Owned<M> {
    /// The index, for reading inputs and for bounds checks.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.index
    }

    /// The index, for the output that writes it: checked to be the running
    /// thread's (on the simulator; see [`thread_owner`](crate::thread_owner)).
    #[inline(always)]
    #[track_caller]
    fn owned(self) -> usize {
        self.owner.check("an Owned element index");
        self.index
    }
}

/// This thread's elements under map `M`: `first + k * step` for `k <
/// count`, none of which overflows. Made by `Items::<M>::mine()`.
pub struct Items<M> {
    first: usize,
    step: usize,
    count: usize,
    owner: Owner,
    _map: PhantomData<fn() -> M>,
    _thread: NotSend,
}

impl<M> Clone for Items<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Items<M> {}

impl<M: ItemMap> Items<M> {
    /// `count` items from `first`, `step` apart, or none where the last
    /// would overflow (no element is reached by wrapping); `count ==
    /// usize::MAX` has no last item, and `index` checks each.
    #[inline(always)]
    fn new(first: Option<usize>, step: usize, count: usize) -> Self {
        let fits = match first {
            None => false,
            Some(_) if count == usize::MAX => true,
            Some(f) => step
                .checked_mul(count.saturating_sub(1))
                .and_then(|d| d.checked_add(f))
                .is_some(),
        };
        Items {
            first: first.unwrap_or(0),
            step,
            count: if fits { count } else { 0 },
            owner: Owner::current(),
            _map: PhantomData,
            _thread: PhantomData,
        }
    }

    /// The index of this thread's first element.
    #[inline(always)]
    pub fn first(&self) -> usize {
        self.first
    }

    /// The distance between this thread's consecutive elements.
    #[inline(always)]
    pub fn step(&self) -> usize {
        self.step
    }

    /// How many elements this thread owns (`usize::MAX` for a grid stride,
    /// which has no end).
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// This thread's `k`-th element, or `None` for `k >= count`.
    #[inline(always)]
    pub fn get(&self, k: usize) -> Option<Owned<M>> {
        self.index(k).map(|index| Owned {
            index,
            owner: self.owner,
            _map: PhantomData,
            _thread: PhantomData,
        })
    }

    /// The index of this thread's `k`-th element, as a number (for reading
    /// inputs), or `None` for `k >= count`.
    #[inline(always)]
    pub fn index(&self, k: usize) -> Option<usize> {
        if k >= self.count {
            return None;
        }
        if self.count == usize::MAX {
            // A grid stride: no last item was checked.
            k.checked_mul(self.step)?.checked_add(self.first)
        } else {
            // `k < count`: at most the last item, which `new` checked.
            Some(self.first + k * self.step)
        }
    }

    /// This thread's elements below `len`, in order.
    #[inline(always)]
    pub fn below(&self, len: usize) -> impl Iterator<Item = Owned<M>> + use<M> {
        let items = *self;
        let mut k = 0;
        core::iter::from_fn(move || {
            let owned = items.get(k).filter(|o| o.index < len)?;
            k += 1;
            Some(owned)
        })
    }
}

impl Items<GridStride> {
    /// This thread's elements of the grid-stride loop: `g, g + G, ...`.
    #[inline(always)]
    pub fn mine() -> Self {
        let (b, t) = (block_rank(), crate::thread::thread_rank());
        let size = crate::thread::block_size();
        let grid = crate::thread::grid_dim().count();
        // `g < G = grid * size`, which the runtime keeps below 2^64.
        Items::new(Some(b * size + t), grid * size, usize::MAX)
    }
}

impl<const K: usize> Items<Blocked<K>> {
    /// This thread's `K` consecutive elements, `(b B + t) K ..`.
    #[inline(always)]
    pub fn mine() -> Self {
        let (b, t) = (block_rank(), crate::thread::thread_rank());
        let g = b * crate::thread::block_size() + t;
        Items::new(g.checked_mul(K), 1, K)
    }
}

impl<const K: usize> Items<Striped<K>> {
    /// This thread's `K` elements `b B K + t + k B`.
    #[inline(always)]
    pub fn mine() -> Self {
        let (b, t) = (block_rank(), crate::thread::thread_rank());
        let size = crate::thread::block_size();
        let tile = b.checked_mul(size).and_then(|s| s.checked_mul(K));
        Items::new(tile.and_then(|s| s.checked_add(t)), size, K)
    }
}

impl<'a, T, M: ItemMap> DisjointSlice<'a, T, M> {
    /// The element at `index`, or `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, index: Owned<M>) -> Option<&mut T> {
        let index = index.owned();
        if index < self.len {
            // SAFETY: in bounds; `index` is this thread's alone under `M`,
            // the map of every thread's view of this output, and `&mut self`
            // stops this thread from holding two references to it.
            let element = unsafe { self.ptr.add(index) };
            race_check::write(element);
            // SAFETY: as above.
            Some(unsafe { &mut *element })
        } else {
            None
        }
    }

    /// Writes `value` at `index`; returns `false` (and drops the value)
    /// past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, index: Owned<M>, value: T) -> bool {
        let index = index.owned();
        if index < self.len {
            // SAFETY: as in `get_mut`.
            let element = unsafe { self.ptr.add(index) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(value) };
            true
        } else {
            false
        }
    }
}

impl<'a, T: VectorElement, const K: usize> DisjointSlice<'a, T, Blocked<K>> {
    /// Writes this thread's `K` consecutive elements, those below the end:
    /// 16-byte vector stores where the run is whole and aligned.
    #[inline(always)]
    #[track_caller]
    pub fn set_run(&mut self, items: &Items<Blocked<K>>, values: [T; K]) {
        items.owner.check("an Items token");
        if items.count == K {
            // SAFETY: `first .. first + K` are this thread's (as in
            // `get_mut`); `write_run` writes only those below `len`.
            unsafe { write_run(self.ptr, items.first, self.len, values) };
        }
    }

    /// Reads this thread's `K` consecutive elements, `fill` for those past
    /// the end: 16-byte vector loads where the run is whole and aligned.
    /// With [`set_run`](Self::set_run), CUDA's read-modify-write of a
    /// thread's blocked items in place (CUB's `BlockLoad`/`BlockStore` over
    /// one array): no other thread writes them.
    #[inline(always)]
    #[track_caller]
    pub fn run_or(&self, items: &Items<Blocked<K>>, fill: T) -> [T; K] {
        items.owner.check("an Items token");
        let mut run = [fill; K];
        if items.count != K || items.first >= self.len {
            return run;
        }
        let first = self.ptr.wrapping_add(items.first);
        let whole = self.len - items.first >= K;
        race_check::read_range(first, K.min(self.len - items.first));
        if whole
            && core::mem::size_of::<[T; K]>().is_multiple_of(16)
            && (first as usize).is_multiple_of(16)
        {
            // SAFETY: `first + K <= len`: inside the output, whose elements
            // `first .. first + K` are this thread's alone (no other thread
            // writes them; `&self` keeps this thread's own writes out while
            // the run is read); aligned (tested), whole vectors.
            return unsafe { load_vectors(first) };
        }
        // Constant indices (unrolled): the run stays in registers. Volatile,
        // as `vector::load_elements`, so that ptxas keeps the aligned path's
        // 16-byte loads of the same addresses.
        crate::unroll::full::<K>(|i| {
            if items.first + i < self.len {
                // SAFETY: in bounds, and this thread's alone (as above).
                run[i] = unsafe { first.add(i).read_volatile() };
            }
        });
        run
    }
}

impl<'a, T> DisjointSlice<'a, T, ByBlock> {
    /// The leader's element, its block's, or `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, leader: BlockLeader) -> Option<&mut T> {
        let b = leader.owned();
        if b < self.len {
            // SAFETY: in bounds; only this block's leader holds a
            // `BlockLeader` of block `b` (`crate::leader`).
            let element = unsafe { self.ptr.add(b) };
            race_check::write(element);
            // SAFETY: as above.
            Some(unsafe { &mut *element })
        } else {
            None
        }
    }

    /// Writes `value` at the leader's block's element; returns `false` past
    /// the end.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, leader: BlockLeader, value: T) -> bool {
        let b = leader.owned();
        if b < self.len {
            // SAFETY: as in `get_mut`.
            let element = unsafe { self.ptr.add(b) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(value) };
            true
        } else {
            false
        }
    }
}

impl<'a, T, const LANE: u32> DisjointSlice<'a, T, ByWarp<LANE>> {
    /// The leader's warp's element, or `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, leader: WarpLeader<LANE>) -> Option<&mut T> {
        let (_, w) = leader.owned();
        if w < self.len {
            // SAFETY: in bounds; only lane `LANE` of warp `w` holds a
            // `WarpLeader<LANE>` of warp `w` (`crate::leader`).
            let element = unsafe { self.ptr.add(w) };
            race_check::write(element);
            // SAFETY: as above.
            Some(unsafe { &mut *element })
        } else {
            None
        }
    }

    /// Writes `value` at the leader's warp's element; returns `false` past
    /// the end.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, leader: WarpLeader<LANE>, value: T) -> bool {
        let (_, w) = leader.owned();
        if w < self.len {
            // SAFETY: as in `get_mut`.
            let element = unsafe { self.ptr.add(w) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(value) };
            true
        } else {
            false
        }
    }
}
