//! Shared tiles that bulk tensor copies fill: [`TmaTileSlotNd<T, B,
//! S>`](TmaTileSlotNd) from [`tma_tile!`](crate::tma_tile), its handle
//! [`TmaTileNd`] inside [`TmaTileSlotNd::with`], a copy in flight
//! ([`Loading`]) and a landed box ([`Landed`]). [`TmaTileSlot`] and
//! [`TmaTile`] name the 2-D ones by rows and columns. The soundness notes
//! are the [module's](super).

use super::map::{Box2d, BoxShape, TensorMap2d, TensorMapNd};
use super::{misaligned_column, swizzle, NoSwizzle, TileSwizzle};
use crate::arch;
use crate::cluster::Cluster;
use crate::mbarrier::{Completed, MBarrier, MBarriers};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};

/// One 1024-byte aligned block of a tile's shared memory (any swizzle's
/// pattern repeats within 1024 bytes); for `tma_tile!`.
#[doc(hidden)]
#[repr(C, align(1024))]
pub struct TileBlock([u8; 1024]);

/// The barriers of a TMA tile (for `tma_tile!`): `full` (a copy landed),
/// `empty` (every thread stopped reading the tile), `done` (every
/// thread left the tile's scope) and, in a multicast scope, `ready` (rank
/// 0's: every block of the cluster is ready for the next copy).
#[doc(hidden)]
pub const __TILE_BARRIERS: usize = 4;

/// The words of a multicast load's request, after the barriers' words: the
/// map's address and the box's five coordinates, two a word. Each block's
/// thread 0 writes its own before it tells rank 0 it is ready; rank 0's
/// compares every block's with its own before it copies.
const REQUEST_WORDS: usize = 4;

/// The `u64` words of a TMA tile's barriers, their tag and a multicast
/// load's request (for `tma_tile!`).
#[doc(hidden)]
pub const __TILE_WORDS: usize = crate::mbarrier::__words(__TILE_BARRIERS) + REQUEST_WORDS;

/// The bytes of a box of shape `B` of elements of `size` bytes under
/// swizzle span `span` (0: none); fails to compile unless the copy engine
/// takes the box: 1 to 256 elements in each dimension, rows (the innermost
/// extent) a multiple of 16 bytes and, with a swizzle, at most its span,
/// and fewer bytes than an mbarrier's transaction limit.
#[allow(clippy::manual_range_contains)]
pub(crate) const fn box_bytes<B: BoxShape>(size: usize, span: usize) -> usize {
    let mut elements = 1;
    let mut i = 0;
    while i < 5 {
        let d = B::DIMS[i] as usize;
        assert!(
            d >= 1 && d <= 256,
            "a TMA box has 1 to 256 elements in each dimension"
        );
        elements *= d;
        i += 1;
    }
    let row = B::DIMS[0] as usize * size;
    assert!(
        row.is_multiple_of(16),
        "a TMA box's rows (its innermost extent) are a multiple of 16 bytes"
    );
    assert!(
        span == 0 || row <= span,
        "a swizzled TMA box's rows are at most the swizzle's span"
    );
    assert!(
        elements * size <= crate::mbarrier::MAX_COUNT as usize,
        "a TMA box's bytes are below 2^20, an mbarrier's transaction limit"
    );
    elements * size
}

/// The byte offset of element `index` (innermost first) of a box of shape
/// `B` in its tile, the swizzle undone; `None` outside the box.
#[inline(always)]
pub(crate) fn tile_offset<B: BoxShape>(index: [usize; 5], size: usize, mode: u32) -> Option<usize> {
    let mut linear = 0;
    let mut i = 5;
    while i > 0 {
        i -= 1;
        let d = B::DIMS[i] as usize;
        if index[i] >= d {
            return None;
        }
        linear = linear * d + index[i];
    }
    Some(swizzle(mode, linear * size))
}

/// A tile of a box of shape `B` of elements `T` in the block's shared
/// memory, with its barriers, not initialised yet: from
/// [`tma_tile!`](crate::tma_tile).
pub struct TmaTileSlotNd<T, B: BoxShape, S: TileSwizzle = NoSwizzle> {
    pub(super) tile: *mut T,
    pub(super) barriers: MBarriers<__TILE_BARRIERS>,
    /// [`REQUEST_WORDS`] words: this block's request of a multicast load.
    pub(super) request: *mut u64,
    pub(super) _shape: PhantomData<(B, S)>,
}

/// A 2-D tile of `ROWS x COLS` elements (see [`TmaTileSlotNd`]).
pub type TmaTileSlot<T, const ROWS: usize, const COLS: usize, S = NoSwizzle> =
    TmaTileSlotNd<T, Box2d<ROWS, COLS>, S>;

impl<T, B: BoxShape, S: TileSwizzle> TmaTileSlotNd<T, B, S> {
    /// The tile's bytes: a box's, what its barrier expects of a copy.
    /// Fails to compile unless the box is one the copy engine takes: 1 to
    /// 256 elements in each dimension, rows a multiple of 16 bytes and, with
    /// a swizzle, at most its span.
    pub const BYTES: usize = box_bytes::<B>(core::mem::size_of::<T>(), S::SPAN);

    /// The 1024-byte blocks the tile takes (for `tma_tile!`).
    #[doc(hidden)]
    pub const BLOCKS: usize = Self::BYTES.div_ceil(1024);

    /// The tile at `tile` with its barriers at `barriers`.
    ///
    /// # Safety
    /// `tile` is the start of [`BLOCKS`](Self::BLOCKS) 1024-byte aligned
    /// blocks of the block's shared memory, and `barriers` of
    /// [`__TILE_WORDS`] words (the barriers', their tag's and a multicast
    /// request's), which nothing but this slot and its handles reaches:
    /// what `tma_tile!` passes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(tile: *mut TileBlock, barriers: *mut u64) -> Self {
        TmaTileSlotNd {
            tile: tile.cast(),
            // SAFETY: the caller's contract.
            barriers: unsafe { MBarriers::from_raw(barriers) },
            // The words after the barriers' and their tag's (the caller's
            // `__TILE_WORDS`).
            request: barriers.wrapping_add(crate::mbarrier::__words(__TILE_BARRIERS)),
            _shape: PhantomData,
        }
    }

    /// Initialises the tile's barriers and runs `f` with this thread's
    /// handle; at its end, waits for a copy still in flight, and thread 0
    /// waits until every thread of the block has (the tile's `done`
    /// barrier). Every thread of the block calls it together. The scope is
    /// what makes the end sure: no copy is still writing the tile when its
    /// thread moves on (or the block exits, freeing its shared memory),
    /// whatever `f` does with the handle, and no thread still uses the
    /// barriers when thread 0 initialises them again (a later `with` of the
    /// same `tma_tile!`). A `with` of the same `tma_tile!` inside `f` (the
    /// invocation evaluated again: a closure called twice) panics in every
    /// thread: its barriers are this scope's, in use.
    ///
    /// The handle's type is branded with its scope (`'s`, a lifetime of its
    /// own for each call): handles of two scopes of the same tile type do
    /// not swap (`core::mem::swap` of two `&mut` handles is a compile
    /// error), so no handle outlives its scope's barriers.
    #[inline(always)]
    #[track_caller]
    pub fn with<R>(self, f: impl for<'s> FnOnce(&mut TmaTileNd<'s, T, B, S>) -> R) -> R {
        let _ = Self::BYTES;
        // At most 1024 threads a block: in an arrival count's range.
        let threads = crate::block_size() as u32;
        let ([full, empty, done, _], end) = self.barriers.init_scoped([1, threads, threads, 1]);
        let (result, _) = TmaTileNd::run(self.tile, full, empty, None, f);
        Self::end(done, end);
        result
    }

    /// [`with`](Self::with) for every block of a cluster together: each
    /// [`load_box`](TmaTileNd::load_box) (or [`load`](TmaTile::load)) in
    /// `f` is one copy of the box, which the copy engine writes into this
    /// tile of every block of the cluster at once (`.multicast::cluster`):
    /// a box read from global memory once for the whole cluster, as
    /// CUTLASS's multicast loads do. Every thread of every block of the
    /// cluster calls it together, on the same `tma_tile!`, and makes the
    /// same loads in it, of the same map and coordinates: a block asking
    /// for another box than rank 0 is a panic naming both (rank 0's
    /// thread 0 compares the requests before each copy).
    ///
    /// A copy is issued once every block's threads have called the load
    /// (each block's thread 0 tells rank 0's through a barrier of rank 0's
    /// tile), so no copy lands in a block's tile while it is being read.
    /// Entering and leaving the scope are cluster operations (as
    /// [`Cluster::sync`]): a block elsewhere then (in another tile's scope,
    /// a sync or an exchange, or finished) is a panic naming it, and so is
    /// a block that makes fewer loads than rank 0, or more (leaving the
    /// scope is a request compared as a load's).
    #[inline(always)]
    #[track_caller]
    pub fn with_multicast<R>(
        self,
        cluster: &Cluster,
        f: impl for<'s> FnOnce(&mut TmaTileNd<'s, T, B, S>) -> R,
    ) -> R {
        let bytes = Self::BYTES as u32;
        let threads = crate::block_size() as u32;
        // At most 16 blocks a cluster: in an arrival count's range.
        let ([full, empty, done, ready], end) =
            self.barriers
                .init_scoped([1, threads, threads, cluster.size()]);
        #[cfg(not(target_arch = "nvptx64"))]
        if crate::thread_rank() == 0 {
            // SAFETY: thread 0 initialised them, and no other thread uses
            // them before the cluster pair below.
            unsafe {
                arch::tma::mark_cluster(full.word(), full.index() as usize, false);
                arch::tma::mark_cluster(ready.word(), ready.index() as usize, true);
            }
        }
        // Every block's barriers initialised (and published: `init`'s
        // fences) before any block's thread 0 arrives on rank 0's `ready`
        // or a copy completes on a peer's `full`.
        cluster.multicast_scope(self.tile.cast::<u8>(), bytes, true);
        let multicast = Multicast {
            ready,
            request: self.request,
        };
        let (result, multicast) = TmaTileNd::run(self.tile, full, empty, Some(multicast), f);
        // Every block leaves after as many loads as rank 0: a request of
        // its own, compared as a load's (one fewer or one more load is a
        // panic naming the block, not a wait for a copy that never comes).
        if let (Some(mut multicast), 0) = (multicast, crate::thread_rank()) {
            multicast.agree(LEAVING);
        }
        // Every block's copies landed (each thread waited for its own):
        // no block arrives on rank 0's `ready`, and no copy writes a tile,
        // once this pair is passed; rank 0 may initialise `ready` again
        // (a later scope) and a block may exit.
        cluster.multicast_scope(self.tile.cast::<u8>(), bytes, false);
        Self::end(done, end);
        result
    }

    /// The end of a scope: every thread arrives on `done`, and thread 0
    /// waits for all of them, then releases the barriers.
    #[inline(always)]
    fn end(mut done: MBarrier, end: crate::mbarrier::ScopeEnd) {
        done.arrive();
        if crate::thread_rank() == 0 {
            let _ = done.wait();
            // SAFETY: thread 0, once every thread of the block arrived on
            // `done` after its last use of the tile's handles (the scope's
            // callers use the tile no more after `f` and their wait for
            // the copy in flight; `Landed`s borrowed it within `f`), and no
            // copy is in flight (each thread waited for its own before
            // arriving).
            unsafe { end.release() };
        }
    }
}

/// This thread's handle of a TMA tile, inside [`TmaTileSlotNd::with`]
/// (`'s` brands the scope it belongs to).
pub struct TmaTileNd<'s, T, B: BoxShape, S: TileSwizzle = NoSwizzle> {
    tile: *mut T,
    /// One arrival (thread 0's, with the box's bytes) and the copy's
    /// bytes a phase: the copy landed.
    full: MBarrier,
    /// Every thread's arrival a phase: none reads the tile any more (each
    /// arrives in `load`, thread 0 waits before it issues the copy).
    empty: MBarrier,
    /// In a multicast scope: this block's `ready` barrier and request.
    multicast: Option<Multicast>,
    /// A copy issued that this thread has not waited for.
    in_flight: bool,
    /// This thread arrived on `empty` and has not waited for that phase
    /// (threads other than thread 0 wait for it at their next load, where
    /// it has completed: the copy they waited for was issued after it).
    empty_pending: bool,
    _shape: PhantomData<(B, S)>,
    /// Invariant in `'s`: the scope's brand.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
}

/// A multicast scope's part of a tile handle.
struct Multicast {
    /// This block's `ready` barrier, of one arrival a phase from each
    /// block's thread 0; rank 0's thread 0 waits on its own, the others
    /// arrive on rank 0's.
    ready: MBarrier,
    /// This block's request words ([`REQUEST_WORDS`]), which its thread 0
    /// writes and rank 0's thread 0 reads.
    request: *mut u64,
}

impl Multicast {
    /// Thread 0's part of a request (a load's, or [`LEAVING`]): writes
    /// `mine` to this block's request words and arrives on rank 0's
    /// `ready`; in rank 0, waits for every block's arrival on the phase
    /// and compares their requests with its own, a panic naming the first
    /// that differs. Whether this is rank 0 (the copy's issuer).
    #[inline(always)]
    #[track_caller]
    fn agree(&mut self, mine: [u64; REQUEST_WORDS]) -> bool {
        let request = self.request;
        // SAFETY: this block's request words, 8-byte aligned, which only
        // its thread 0 writes (here) and rank 0's thread 0 reads, after
        // this block's arrival below and before the copy (or the scope's
        // end) that this thread waits for before it writes them again
        // (atomically all the same: another block reads them).
        unsafe {
            for (i, word) in mine.iter().enumerate() {
                AtomicU64::from_ptr(request.add(i)).store(*word, Ordering::Relaxed);
            }
        }
        // SAFETY: rank 0's `ready` is initialised (before the scope's entry
        // pair, which every block passed) and rank 0 has not left the scope
        // (it leaves only after a phase of `ready` that needs this
        // arrival, and then through the exit pair); rank 0 is in the
        // cluster.
        unsafe {
            #[cfg(target_arch = "nvptx64")]
            arch::tma::arrive_on_rank(self.ready.word(), 0);
            #[cfg(not(target_arch = "nvptx64"))]
            arch::tma::arrive_on_rank(self.ready.word(), self.ready.index() as usize, 0);
        }
        if arch::cluster::block_rank() != 0 {
            return false;
        }
        // One arrival a phase from each block's thread 0, each (for a
        // load) after its block's `empty` phase completed and its `full`
        // was armed: every block's tile is free for this copy.
        let _ = self.ready.wait_cluster();
        for rank in 1..arch::cluster::size() {
            // SAFETY: `rank` is below the cluster's size and the words are
            // in this block's shared memory.
            let theirs =
                unsafe { arch::cluster::map_shared_rank(request.cast::<u8>(), rank) }.cast::<u64>();
            // SAFETY: block `rank`'s request words (the same `tma_tile!`:
            // the scope's entry pair checked), 8-byte aligned, which its
            // thread 0 wrote before its arrival on this `ready` phase
            // (release at the cluster's scope, acquired by the wait above),
            // and writes again only once this copy has landed in its tile
            // (or, leaving, never in this scope); the block is in the
            // scope, so its shared memory is live.
            let peer = core::array::from_fn(|i| unsafe {
                AtomicU64::from_ptr(theirs.add(i).cast_mut()).load(Ordering::Relaxed)
            });
            if peer != mine {
                different_requests(rank, peer, mine);
            }
        }
        true
    }
}

/// The request of a block leaving a multicast scope, after its last load:
/// no map's address is 0. Every block makes it once, so a block making
/// fewer loads than rank 0 (or more) is named, not waited for.
const LEAVING: [u64; REQUEST_WORDS] = [0; REQUEST_WORDS];

/// The handle of a 2-D tile of `ROWS x COLS` elements (see [`TmaTileNd`]).
pub type TmaTile<'s, T, const ROWS: usize, const COLS: usize, S = NoSwizzle> =
    TmaTileNd<'s, T, Box2d<ROWS, COLS>, S>;

impl<T, B: BoxShape, S: TileSwizzle> TmaTileNd<'_, T, B, S> {
    /// Runs `f` with this thread's handle of the tile at `tile`
    /// (`multicast`: a multicast scope's), then waits for a copy still in flight: the
    /// part of a scope between its barriers' initialisation and its end.
    #[inline(always)]
    #[track_caller]
    fn run<R>(
        tile: *mut T,
        full: MBarrier,
        empty: MBarrier,
        multicast: Option<Multicast>,
        f: impl for<'s> FnOnce(&mut TmaTileNd<'s, T, B, S>) -> R,
    ) -> (R, Option<Multicast>) {
        let mut handle = TmaTileNd {
            tile,
            full,
            empty,
            multicast,
            in_flight: false,
            empty_pending: false,
            _shape: PhantomData,
            _scope: PhantomData,
        };
        let result = f(&mut handle);
        if handle.in_flight {
            let _ = handle.full.wait();
        }
        (result, handle.multicast)
    }
}

impl<'s, T: Copy, B: BoxShape, S: TileSwizzle> TmaTileNd<'s, T, B, S> {
    /// Copies the box of `map` whose first element is at `at` (outermost
    /// first) into the tile (`cp.async.bulk.tensor.Nd`, N the box's rank,
    /// by thread 0): elements past the tensor's edges (negative coordinates
    /// too) land as zeros. Every thread of the block calls it together,
    /// with the same map and coordinates (thread 0's are the ones copied);
    /// see the module's soundness notes. The copy is in flight until
    /// [`Loading::wait`].
    ///
    /// The innermost coordinate lies a multiple of 16 bytes into the row (a
    /// multiple of 4 elements for `f32`, of 8 for `bf16`): the copy engine
    /// faults on any other start, so another is a panic naming it (on the
    /// simulator, the launch's report; on the GPU a trap, as the copy
    /// engine's own fault).
    #[inline(always)]
    #[track_caller]
    pub fn load_box(
        &mut self,
        map: &TensorMapNd<T, B, S>,
        at: B::Coords,
    ) -> Loading<'_, 's, T, B, S> {
        let coords = B::coords_inner_first(at);
        // The copy engine takes a box whose first element lies a multiple
        // of 16 bytes into the row: any other faults the kernel on the GPU
        // (an illegal instruction, measured on an H100, negative columns
        // too), so it is refused here, on every target, before the copy.
        let element = core::mem::size_of::<T>();
        let offset = i64::from(coords[0]) * element as i64;
        if offset % 16 != 0 {
            misaligned_column(coords[0], element);
        }
        if self.in_flight {
            let _ = self.full.wait();
        }
        // This thread's reads of the tile before the async proxy's writes,
        // then its arrival: it reads the tile no more (a `Landed` borrows
        // this handle, so none is left).
        arch::tma::fence_proxy_async();
        if self.empty_pending {
            // Complete: this thread waited for the copy issued after it
            // (above, or through `Loading::wait`). One arrival a phase.
            let _ = self.empty.wait();
        }
        self.empty.arrive();
        self.empty_pending = crate::thread_rank() != 0;
        if crate::thread_rank() == 0 {
            // Every thread of the block arrived on this tile's own barrier:
            // no arrival of another tile's code (or of this tile's scope
            // end) counts here.
            let _ = self.empty.wait();
            let bytes = TmaTileSlotNd::<T, B, S>::BYTES as u32;
            self.full.arrive_expect_tx(bytes);
            match &mut self.multicast {
                Some(multicast) => {
                    copy_multicast::<T, B, S>(self.tile, &self.full, multicast, map, coords)
                }
                // SAFETY: the tile is this slot's `BYTES` bytes, 1024-byte
                // aligned, which no thread reads until the `full` barrier's
                // phase completes (every thread arrived on `empty` above
                // after its last read); `full` is the tile's own, armed
                // with the box's bytes; `map` is a live map of this rank,
                // box and swizzle (its `from_kernel_param` contract).
                None => unsafe {
                    #[cfg(target_arch = "nvptx64")]
                    arch::tma::copy_nd(
                        self.tile.cast(),
                        map.map,
                        self.full.word(),
                        B::RANK,
                        coords,
                    );
                    #[cfg(not(target_arch = "nvptx64"))]
                    arch::tma::copy_nd(
                        self.tile.cast(),
                        TmaTileSlotNd::<T, B, S>::BYTES,
                        map.map,
                        (B::RANK, B::DIMS, S::MODE),
                        self.full.word(),
                        self.full.index() as usize,
                        coords,
                    );
                },
            }
        }
        self.in_flight = true;
        Loading { tile: self }
    }
}

/// Thread 0's part of a multicast load, `full` armed: publishes this
/// block's request (the map and the coordinates) and tells rank 0's thread
/// 0 that this block is ready ([`Multicast::agree`]); in rank 0, once every
/// block is and asked for the same box (a panic naming the first that did
/// not: a copy of rank 0's box would silently be another block's), copies
/// it into the tile of every block of the cluster.
#[inline(always)]
#[track_caller]
fn copy_multicast<T, B: BoxShape, S: TileSwizzle>(
    tile: *mut T,
    full: &MBarrier,
    multicast: &mut Multicast,
    map: &TensorMapNd<T, B, S>,
    coords: [i32; 5],
) {
    if !multicast.agree(request_words(map.map as u64, coords)) {
        return;
    }
    let size = arch::cluster::size();
    // The cluster's blocks, at most 16: ranks 0 to size - 1.
    let mask = ((1u32 << size) - 1) as u16;
    // SAFETY: in every block of the cluster, the tile at this tile's offset
    // (the same `tma_tile!`: the entry pair checked every block is in this
    // tile's scope) is `BYTES` bytes, 1024-byte aligned, that no thread
    // reads until its `full` (at this barrier's offset, the tile's own,
    // armed with the box's bytes by its thread 0 before its arrival on
    // `ready`) completes the phase; no block leaves the scope (nor exits)
    // before its copy landed; `map` is a live map of this rank, box and
    // swizzle.
    unsafe {
        #[cfg(target_arch = "nvptx64")]
        arch::tma::copy_nd_multicast(tile.cast(), map.map, full.word(), B::RANK, coords, mask);
        #[cfg(not(target_arch = "nvptx64"))]
        arch::tma::copy_nd_multicast(
            tile.cast(),
            TmaTileSlotNd::<T, B, S>::BYTES,
            map.map,
            (B::RANK, B::DIMS, S::MODE),
            full.word(),
            full.index() as usize,
            coords,
            mask,
        );
    }
}

impl<'s, T: Copy, const ROWS: usize, const COLS: usize, S: TileSwizzle>
    TmaTile<'s, T, ROWS, COLS, S>
{
    /// Copies the box of `map` whose first element is at (`row`, `col`)
    /// into the tile: [`load_box`](TmaTileNd::load_box) of `[row, col]`.
    /// `col` lies a multiple of 16 bytes into the row.
    #[inline(always)]
    #[track_caller]
    pub fn load(
        &mut self,
        map: &TensorMap2d<T, ROWS, COLS, S>,
        row: i32,
        col: i32,
    ) -> Loading<'_, 's, T, Box2d<ROWS, COLS>, S> {
        self.load_box(map, [row, col])
    }
}

/// A copy into a tile in flight: from [`TmaTileNd::load_box`].
#[must_use = "the tile is read through what `wait` returns"]
pub struct Loading<'a, 's, T, B: BoxShape, S: TileSwizzle> {
    tile: &'a mut TmaTileNd<'s, T, B, S>,
}

impl<'a, T: Copy, B: BoxShape, S: TileSwizzle> Loading<'a, '_, T, B, S> {
    /// Waits for the copy to land: the tile, readable.
    #[inline(always)]
    #[track_caller]
    pub fn wait(self) -> Landed<'a, T, B, S> {
        let completed = self.tile.full.wait();
        self.tile.in_flight = false;
        Landed {
            tile: self.tile.tile,
            completed,
            _borrow: PhantomData,
            _shape: PhantomData,
        }
    }
}

/// A tile a copy has filled, readable until the tile's next load: from
/// [`Loading::wait`].
pub struct Landed<'a, T, B: BoxShape, S: TileSwizzle> {
    tile: *const T,
    completed: Completed,
    _borrow: PhantomData<&'a T>,
    _shape: PhantomData<(B, S)>,
}

impl<T: Copy, B: BoxShape, S: TileSwizzle> Landed<'_, T, B, S> {
    /// The witness of the barrier phase the copy completed.
    #[inline(always)]
    pub fn completed(&self) -> &Completed {
        &self.completed
    }

    /// Element `index` of the box (outermost first; the swizzle undone).
    /// Panics outside the box.
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, index: B::Index) -> T {
        let inner_first = B::index_inner_first(index);
        let size = core::mem::size_of::<T>();
        let Some(offset) = tile_offset::<B>(inner_first, size, S::MODE) else {
            outside(inner_first, B::RANK, B::DIMS)
        };
        // SAFETY: `offset` is inside the tile's 1024-byte blocks (the
        // swizzle moves a 16-byte chunk within its 128 bytes, and the
        // blocks are whole 128 bytes), at an element's alignment (rows
        // are whole chunks), where the copy put element `index`; the copy
        // landed (`completed`) and no copy writes the tile while this
        // borrow lives.
        unsafe { self.tile.cast::<u8>().add(offset).cast::<T>().read() }
    }
}

impl<T: Copy, const ROWS: usize, const COLS: usize, S: TileSwizzle>
    Landed<'_, T, Box2d<ROWS, COLS>, S>
{
    /// Element (`row`, `col`) of the box (the swizzle undone). Panics
    /// outside `ROWS x COLS`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, row: usize, col: usize) -> T {
        self.at([row, col])
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside(index: [usize; 5], rank: usize, dims: [u32; 5]) -> ! {
    let mut index = index;
    let mut dims = dims;
    index[..rank].reverse();
    dims[..rank].reverse();
    panic!(
        "Landed::at: element {:?} is outside the box of {:?} (outermost first)",
        &index[..rank],
        &dims[..rank]
    )
}

/// A multicast load's request as [`REQUEST_WORDS`] words: the map's
/// address, then the coordinates (innermost first) two a word.
#[inline(always)]
fn request_words(map: u64, c: [i32; 5]) -> [u64; REQUEST_WORDS] {
    let pair = |lo: i32, hi: i32| u64::from(lo as u32) | u64::from(hi as u32) << 32;
    [
        map,
        pair(c[0], c[1]),
        pair(c[2], c[3]),
        u64::from(c[4] as u32),
    ]
}

/// The coordinates (innermost first) of request words.
fn request_coords(words: [u64; REQUEST_WORDS]) -> [i32; 5] {
    let [_, a, b, c] = words;
    [
        a as i32,
        (a >> 32) as i32,
        b as i32,
        (b >> 32) as i32,
        c as i32,
    ]
}

#[cold]
#[inline(never)]
#[track_caller]
fn different_requests(rank: u32, theirs: [u64; REQUEST_WORDS], mine: [u64; REQUEST_WORDS]) -> ! {
    if theirs == LEAVING {
        let mine = request_coords(mine);
        panic!("a multicast load: block rank {rank} of the cluster left the multicast scope while rank 0 asks for the box at {mine:?} (every block makes the same loads)")
    }
    if mine == LEAVING {
        let theirs = request_coords(theirs);
        panic!("a multicast load: block rank {rank} of the cluster asked for the box at {theirs:?} after rank 0's last load (every block makes the same loads)")
    }
    if theirs[0] != mine[0] {
        panic!("a multicast load: block rank {rank} of the cluster passed another tensor map than rank 0 (every block loads the same box of the same map)")
    }
    let (theirs, mine) = (request_coords(theirs), request_coords(mine));
    panic!("a multicast load: block rank {rank} of the cluster asked for the box at {theirs:?}, rank 0 for {mine:?} (coordinates innermost first; every block loads the same box)")
}
