//! The bulk tensor store: a shared tile the block's threads wrote, copied
//! into a box of a tensor map by one thread
//! (`cp.async.bulk.tensor.Nd.global.shared::cta`).
//!
//! A kernel takes the map as a [`TensorMapOut<T, B, S>`](TensorMapOut)
//! parameter: the launcher takes a `&mut gpu_runtime::TensorMapOut<'_,
//! T>`, made from a mutable borrow of its buffer, and tracks the kernel's
//! write of the buffer across streams as an output's. The block stores
//! into its own box only, [`TensorMapOut::block_box`], and writes the tile
//! in [`TmaTileSlotNd::with_store`]'s scope through
//! [`TmaStoreTile::store`]:
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::tma::{Box2d, TensorMapOut};
//!
//! // With `#[kernel(arch = "sm_90")]`: each block writes its 16 x 32 box.
//! pub fn fill(out: TensorMapOut<f32, Box2d<16, 32>>, value: f32) {
//!     let Some(mine) = out.block_box() else { return };
//!     gpu_device::tma_tile!(f32, 16, 32).with_store(|tile| {
//!         tile.store(&mine, |[r, c]| value + (r * 32 + c) as f32);
//!     });
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *No two blocks write one element.* The box a block stores is the one
//!   its linear block index names, in the order of the tensor's boxes
//!   (innermost dimension fastest): two blocks' boxes are disjoint boxes
//!   of the coordinate space, and the host refuses an output map in which
//!   two coordinates name one element (each stride at least the span of
//!   the dimensions inside it), so they are disjoint in memory. No
//!   coordinate is taken from the kernel's code. A block past the last box
//!   gets none. The buffer is borrowed mutably by the map, so no other
//!   argument of the launch reaches it, and the launch is tracked as a
//!   write of it.
//! - *No two stores of one block race.* Only thread 0 issues stores, and
//!   it waits for every bulk group it committed to complete
//!   (`cp.async.bulk.wait_group 0`) before it issues the next, so a box
//!   written twice is written in program order.
//! - *The tile is whole when read.* Each thread writes its own elements
//!   (those of linear index `thread_rank() + k * block_size()`, a partition:
//!   no two threads write one element), fences them for the async proxy
//!   (`fence.proxy.async.shared::cta`) and arrives on the tile's `written`
//!   barrier, which expects every thread of the block; thread 0 issues the
//!   store once that phase completed.
//! - *The tile is not written, nor freed, before the store read it.*
//!   Thread 0 waits for the store's reads (`cp.async.bulk.wait_group.read
//!   0`) after its commit and then arrives on the tile's `read` barrier;
//!   every thread waits for that phase before it writes the tile again (its
//!   next `store`) and at the scope's end, so no thread leaves the scope
//!   (and no block exits, freeing its shared memory) while the store reads
//!   the tile. The scope ends as a load tile's does (`done`, then thread 0
//!   releases the barriers).

use super::map::{BoxShape, MapTypes, TensorMapShape};
use super::tile::TmaTileSlotNd;
use super::{NoSwizzle, TileSwizzle};
use crate::arch;
use crate::mbarrier::MBarrier;
use core::marker::PhantomData;

/// Words after an output map's 16 words of encoding: the number of boxes
/// along each dimension, innermost first (1 past the rank), which the host
/// writes there.
#[doc(hidden)]
pub const __BOX_COUNT_WORDS: usize = 5;

/// A tensor map a kernel writes through, by bulk tensor stores: elements
/// `T` in boxes of shape `B`, swizzled by `S`. The launcher takes a `&mut
/// gpu_runtime::TensorMapOut<'_, T>` of that rank, box and swizzle. As
/// [`TensorMapNd`](super::TensorMapNd), it holds the generic address of the
/// encoded map in global memory; after it, the host wrote the number of
/// boxes along each dimension, from which each block's box is computed.
pub struct TensorMapOut<T, B: BoxShape, S: TileSwizzle = NoSwizzle> {
    map: *const u64,
    _element: PhantomData<MapTypes<T, B, S>>,
}

impl<T, B: BoxShape, S: TileSwizzle> TensorMapShape for TensorMapOut<T, B, S> {
    type Element = T;
    const RANK: usize = B::RANK;
    const BOX: [u32; 5] = B::DIMS;
    const SWIZZLE: u32 = S::MODE;
}

impl<T, B: BoxShape, S: TileSwizzle> TensorMapOut<T, B, S> {
    /// The parameter, from its PTX parameter.
    ///
    /// # Safety
    /// `map` is the address of an encoded tensor map of `T` in global
    /// memory (on the simulator, its simulated encoding), 64-byte aligned,
    /// of a live buffer this launch alone writes, in which no two
    /// coordinates name one element, whose rank and box are `B`'s with
    /// swizzle `S`, followed by the number of boxes along each dimension
    /// ([`__BOX_COUNT_WORDS`] words), not written during the launch: what
    /// the launcher passes. Each thread calls it at the kernel's start.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(map: *const T) -> Self {
        // SAFETY: the caller's contract: 128 bytes of a map in global
        // memory.
        unsafe { arch::tma::fence_tensormap_acquire(map.cast()) };
        TensorMapOut {
            map: map.cast(),
            _element: PhantomData,
        }
    }

    /// This block's box: the one its linear block index (`x` fastest, then
    /// `y`, then `z`) names among the tensor's boxes (innermost dimension
    /// fastest); `None` for a block past the last box. No other block of
    /// the launch gets this box, nor one that overlaps it.
    #[inline(always)]
    pub fn block_box(&self) -> Option<BlockBox<'_, T, B, S>> {
        let (b, g) = (crate::block_idx(), crate::grid_dim());
        let mut rest =
            u64::from(b.x) + u64::from(g.x) * (u64::from(b.y) + u64::from(g.y) * u64::from(b.z));
        let mut coords = [0i32; 5];
        let mut d = 0;
        while d < B::RANK {
            // SAFETY: the map's words are followed by the box counts (the
            // `from_kernel_param` contract), not written during the launch.
            let count = unsafe { self.map.add(16 + d).read() };
            let index = rest % count;
            rest /= count;
            // Below 2^31: the host keeps an output map's extents there.
            coords[d] = (index * u64::from(B::DIMS[d])) as i32;
            d += 1;
        }
        (rest == 0).then_some(BlockBox {
            map: self.map,
            coords,
            _map: PhantomData,
        })
    }
}

/// The box of an output map that this block stores into: from
/// [`TensorMapOut::block_box`].
pub struct BlockBox<'a, T, B: BoxShape, S: TileSwizzle> {
    map: *const u64,
    /// Innermost first.
    coords: [i32; 5],
    _map: PhantomData<&'a TensorMapOut<T, B, S>>,
}

impl<T, B: BoxShape, S: TileSwizzle> BlockBox<'_, T, B, S> {
    /// The box's first element's coordinates, outermost first (to load the
    /// matching box of another map, for instance).
    #[inline(always)]
    pub fn coords(&self) -> B::Coords {
        B::coords_from_inner_first(self.coords)
    }
}

impl<T: Copy, B: BoxShape, S: TileSwizzle> TmaTileSlotNd<T, B, S> {
    /// Initialises the tile's barriers and runs `f` with this thread's
    /// store handle; at its end, every thread waits until the last store
    /// has read the tile, and thread 0 until every thread has (the tile's
    /// `done` barrier). Every thread of the block calls it together. As
    /// [`with`](Self::with), a `with_store` of the same `tma_tile!` inside
    /// `f` panics in every thread.
    #[inline(always)]
    #[track_caller]
    /// The handle is branded with its scope, as [`with`](Self::with)'s.
    pub fn with_store<R>(self, f: impl for<'s> FnOnce(&mut TmaStoreTile<'s, T, B, S>) -> R) -> R {
        let _ = Self::BYTES;
        // At most 1024 threads a block: in an arrival count's range.
        let threads = crate::block_size() as u32;
        // The fourth barrier is a multicast load's; a store has none.
        let ([written, read, mut done, _], end) =
            self.barriers.init_scoped([threads, 1, threads, 1]);
        let mut tile = TmaStoreTile {
            tile: self.tile,
            written,
            read,
            read_pending: false,
            _shape: PhantomData,
            _scope: PhantomData,
        };
        let result = f(&mut tile);
        tile.wait_read();
        done.arrive();
        if crate::thread_rank() == 0 {
            let _ = done.wait();
            // SAFETY: thread 0, once every thread of the block arrived on
            // `done` after its last use of the tile's handle and after the
            // last store read the tile (each waited for `read` first).
            unsafe { end.release() };
        }
        result
    }
}

/// This thread's handle of a tile the block stores from, inside
/// [`TmaTileSlotNd::with_store`] (`'s` brands the scope it belongs to).
pub struct TmaStoreTile<'s, T, B: BoxShape, S: TileSwizzle> {
    tile: *mut T,
    /// Every thread's arrival a phase: the tile is written and fenced.
    written: MBarrier,
    /// Thread 0's arrival a phase, once its store read the tile.
    read: MBarrier,
    /// A store issued whose `read` phase this thread has not waited for.
    read_pending: bool,
    _shape: PhantomData<(B, S)>,
    /// Invariant in `'s`: the scope's brand.
    _scope: PhantomData<fn(&'s ()) -> &'s ()>,
}

impl<T: Copy, B: BoxShape, S: TileSwizzle> TmaStoreTile<'_, T, B, S> {
    /// Waits until the last store read the tile.
    #[inline(always)]
    #[track_caller]
    fn wait_read(&mut self) {
        if self.read_pending {
            let _ = self.read.wait();
            if crate::thread_rank() != 0 {
                // Complete: thread 0 waited for it before its arrival on
                // `read`. One arrival a phase: counted before the next.
                let _ = self.written.wait();
            }
            self.read_pending = false;
        }
    }

    /// Writes `value(index)` at each element of the tile this thread owns
    /// (indices outermost first; linear index `thread_rank() + k *
    /// block_size()`), then stores the tile into the block's box `to`
    /// (by thread 0, once every thread wrote): the elements past the
    /// tensor's edges are not written. Every thread of the block calls it
    /// together (a thread that does not leaves the store unissued: the
    /// block waits, the simulator reports it). See the module's soundness
    /// notes.
    #[inline(always)]
    #[track_caller]
    pub fn store(&mut self, to: &BlockBox<'_, T, B, S>, mut value: impl FnMut(B::Index) -> T) {
        // The previous store read the tile: it may be written.
        self.wait_read();
        let bytes = TmaTileSlotNd::<T, B, S>::BYTES;
        let size = core::mem::size_of::<T>();
        let count = bytes / size;
        let mut linear = crate::thread_rank();
        while linear < count {
            let mut index = [0usize; 5];
            let mut rest = linear;
            let mut d = 0;
            while d < 5 {
                let extent = B::DIMS[d] as usize;
                index[d] = rest % extent;
                rest /= extent;
                d += 1;
            }
            let v = value(B::index_from_inner_first(index));
            let offset = super::swizzle(S::MODE, linear * size);
            // SAFETY: `offset` is inside the tile's blocks (the swizzle
            // stays within 128 bytes), at an element's alignment; this
            // thread alone writes linear index `linear` (the partition),
            // and no store reads the tile now (waited above).
            unsafe { self.tile.cast::<u8>().add(offset).cast::<T>().write(v) };
            linear += crate::block_size();
        }
        // The writes before the async proxy's reads, then the arrival.
        arch::tma::fence_proxy_async();
        self.written.arrive();
        if crate::thread_rank() == 0 {
            let _ = self.written.wait();
            // This block's earlier stores (of this box) complete first.
            arch::tma::bulk_wait_group();
            // SAFETY: the tile's `BYTES` bytes, 1024-byte aligned, written
            // by every thread before its fence and arrival on `written`,
            // whose phase completed; no thread writes it before `read`'s
            // phase, after the `wait_group.read` below; `to` is this
            // block's box of a live output map of this rank, box and
            // swizzle that no other block stores into.
            unsafe {
                #[cfg(target_arch = "nvptx64")]
                arch::tma::store_nd(self.tile.cast(), to.map, B::RANK, to.coords);
                #[cfg(not(target_arch = "nvptx64"))]
                arch::tma::store_nd(
                    self.tile.cast(),
                    bytes,
                    to.map,
                    (B::RANK, B::DIMS, S::MODE),
                    to.coords,
                );
            }
            arch::tma::bulk_commit_group();
            arch::tma::bulk_wait_group_read();
            self.read.arrive();
        }
        self.read_pending = true;
    }
}
