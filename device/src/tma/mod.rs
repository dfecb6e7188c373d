//! The bulk tensor copy engine (TMA, sm_90): a box of a tensor map of 1
//! to 5 dimensions copied from global memory into a tile of the block's
//! shared memory by one thread, completing on the tile's own `mbarrier`;
//! and ([`TensorMapOut`], `store.rs`) a tile the block wrote stored into
//! the block's own box of an output map.
//!
//! A kernel takes the map as a parameter, [`TensorMapNd<T, B,
//! S>`](TensorMapNd) with a box shape `B` ([`Box1d`] to [`Box5d`], extents
//! outermost first) or [`TensorMap2d<T, ROWS, COLS, S>`](TensorMap2d): the
//! launcher passes a host `gpu_runtime::TensorMap<'_, T>` of that rank and
//! box with the swizzle `S` (checked at launch, an error naming the
//! parameter; the element type is the launcher's). A tile of the same type
//! parameters, [`tma_tile!`](crate::tma_tile) (`tma_tile!(f32, 64, 64)`,
//! `tma_tile!(f32, Box3d<2, 8, 16>)`), is filled by
//! [`TmaTileNd::load_box`] (or, 2-D, [`TmaTile::load`]) and read once
//! [`Loading::wait`] returns; its bytes, which the barrier expects, are the
//! box type's, checked when compiled against the copy engine's rules.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::tma::TensorMap2d;
//!
//! // With `#[kernel(arch = "sm_90")]`: the block copies the 64 x 64 box at
//! // (row 64, column 0) and each thread reads one element of it.
//! pub fn first(map: TensorMap2d<f32, 64, 64>, mut out: DisjointSlice<f32>) {
//!     let i = thread_index();
//!     let n = i.get();
//!     let v = gpu_device::tma_tile!(f32, 64, 64).with(|tile| {
//!         let landed = tile.load(&map, 64, 0).wait();
//!         landed.get(n / 64 % 64, n % 64)
//!     });
//!     out.set(i, v);
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *What a copy reaches.* The map was checked on the host against its
//!   buffer (every element it names is inside) and borrows it; the GPU
//!   clips a box at the tensor's edges (zeros land there). The tile's
//!   type, the same `T, ROWS, COLS, S` as the map's, gives its bytes and its
//!   alignment (1024 bytes, any swizzle's pattern), and the launcher checks
//!   that the host map's box and swizzle are the type's.
//! - *The byte count.* Thread 0 arms the tile's `full` barrier with
//!   `arrive_expect_tx` of the box's bytes, from the type (a box's bytes
//!   land whole, zero-filled past the edge): no count is written by the
//!   user. The barriers are the tile's own (no other code arrives on them)
//!   and `full` expects one arrival a phase.
//! - *Reads after the copy.* [`Landed`], the only way to read the tile,
//!   comes from [`Loading::wait`], which waits for the phase of `full` the
//!   copy completes ([`Completed`](crate::mbarrier::Completed) names it).
//! - *No copy over a tile being read.* [`TmaTile::load`] is called by
//!   every thread of the block: each first waits for the tile's previous
//!   copy if it had not, fences its reads against the async proxy
//!   (`fence.proxy.async.shared::cta`) and arrives on the tile's `empty`
//!   barrier, which expects every thread of the block; thread 0 issues the
//!   next copy only once that phase completed. A [`Landed`] borrows its
//!   tile, so a thread that arrived reads it no more. The barrier is the
//!   tile's own, not a block barrier (`bar.sync`) whose id other code
//!   shares: loads of two tiles, in divergent code or in any order, never
//!   count for each other (a load some thread never makes leaves its copy
//!   unissued: the block waits, the simulator reports the stall, nothing
//!   is overwritten under a reader). No thread lets a barrier run a phase
//!   ahead of its waits: a thread arrives on `empty` for copy `k + 1` only
//!   after waiting for copy `k`, which thread 0 issued only after waiting
//!   for `empty`'s phase `k`.
//! - *No copy outlives its tile.* The handle lives only inside
//!   [`TmaTileSlot::with`], which waits for a copy still in flight when its
//!   closure returns (a handle cannot be leaked out of it), so no copy
//!   writes the tile once a thread moved on; each thread then arrives on
//!   the tile's `done` barrier and thread 0 waits for all of them before
//!   it leaves, so it initialises the barriers again (a later `with` of
//!   the same `tma_tile!`) only when no thread uses them.
//! - *No second scope over live barriers.* The same `tma_tile!` evaluated
//!   again inside the scope (a closure that makes it, called in `with`'s
//!   closure) names the same tile and barriers: initialising them again
//!   would reset `full`'s phases under an outer handle, whose next wait by
//!   parity could then return before its copy landed. The barriers'
//!   `mbarriers!` tag refuses it: `with` initialises them with
//!   `MBarriers::init_scoped`, which panics in every thread while they are
//!   live in the block, and thread 0 releases them only after `done`'s
//!   wait, when no thread uses them (see the [`mbarrier`](crate::mbarrier)
//!   module).
//! - *The map's memory.* The kernel receives the generic address of a
//!   copy of the encoded `CUtensorMap` in global memory, written by the
//!   host before the launch (see [`TensorMap2d`]); each thread acquires it
//!   for the tensor-map proxy at the kernel's start
//!   (`fence.proxy.tensormap::generic.acquire`), as the CUDA programming
//!   guide asks of a map a host copy wrote.
//!
//! Every thread passes the same map and coordinates: those of thread 0 are
//! the ones copied.
//!
//! # Multicast
//!
//! [`TmaTileSlotNd::with_multicast`] is the scope of one `tma_tile!` in
//! every block of a cluster at once; each load in it is one copy of the box
//! that every block asks for, issued by rank 0's thread 0 into the tile of
//! every block (`.multicast::cluster`: at the tile's and its `full`
//! barrier's offsets, the same in every block). What makes it sound, beyond
//! the above:
//!
//! - *No copy over a tile being read, in any block.* Each block's thread 0,
//!   once its block's `empty` phase completed (every thread fenced and done
//!   reading) and its `full` was armed with the box's bytes, arrives on rank
//!   0's `ready` barrier of the same tile (`mbarrier.arrive.release.cluster`
//!   on the `mapa` of its own). Rank 0's thread 0 issues the copy once the
//!   phase has one arrival a block (`try_wait.acquire.cluster`). A block
//!   arrives again only after the copy it waited for landed, which needs
//!   the phase to have completed: a phase's arrivals are one from each
//!   block.
//! - *The same box everywhere.* Each block's thread 0 writes its request
//!   (the map's address and the coordinates) to its tile's request words
//!   before its arrival on `ready`; rank 0's thread 0 reads every block's
//!   (`mapa`, after the acquiring wait) and compares them with its own: a
//!   block asking for another box, or for a box of another map, is a panic
//!   naming it and both boxes, never a copy of rank 0's box in its place.
//! - *The same tile everywhere.* Entering and leaving the scope are cluster
//!   operations whose tags name the tile
//!   (`Cluster::multicast_scope`): a block in another tile's scope, a sync,
//!   an exchange or finished is a panic naming it, so the copy's offsets are
//!   this tile's in every block, and every block's barriers are initialised
//!   (entry) before any arrival or copy reaches them.
//! - *No copy outlives a block.* A block leaves the scope only through the
//!   exit pair, which every thread of every block reaches only after waiting
//!   for its own copies; so rank 0 initialises `ready` again (a later
//!   scope) only when no arrival is in flight, and no block exits, nor
//!   reuses the tile, while a copy into it may land.
//!
//! - *As many loads everywhere.* Leaving the scope is a request too (each
//!   block's thread 0, after its last copy landed, arrives with a request
//!   that names no map), compared as a load's: a block that makes fewer
//!   loads than rank 0, or more, is a panic naming it, on the GPU as on the
//!   simulator, not a wait for a copy that never comes.

#[cfg(not(target_arch = "nvptx64"))]
pub mod simulated_map;
// The ring feeds `wgmma`: sm_90a's.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod ring;

mod map;
mod store;
mod tile;

pub use map::{
    Box1d, Box2d, Box3d, Box4d, Box5d, BoxShape, TensorMap2d, TensorMapNd, TensorMapShape,
};
pub use store::{BlockBox, TensorMapOut, TmaStoreTile, __BOX_COUNT_WORDS};
pub use tile::{
    Landed, Loading, TileBlock, TmaTile, TmaTileNd, TmaTileSlot, TmaTileSlotNd, __TILE_BARRIERS,
    __TILE_WORDS,
};

mod sealed {
    pub trait Sealed {}
}

/// How a box's rows are laid out in its shared tile: 16-byte chunks of
/// each row XORed with the row's index within 8 rows, over a span
/// (`CUtensorMapSwizzle`). Sealed: [`NoSwizzle`], and on sm_90a (where
/// `wgmma` reads them) `wgmma`'s `Swizzle32B`, `Swizzle64B`, `Swizzle128B`.
pub trait TileSwizzle: sealed::Sealed {
    /// `CUtensorMapSwizzle` (0 none, 1 32 bytes, 2 64 bytes, 3 128 bytes).
    const MODE: u32;
    /// The span in bytes a box row may not exceed (0: no limit).
    const SPAN: usize;
}

/// Rows as they are.
pub enum NoSwizzle {}
impl sealed::Sealed for NoSwizzle {}
impl TileSwizzle for NoSwizzle {
    const MODE: u32 = 0;
    const SPAN: usize = 0;
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod wgmma_swizzles {
    use super::{sealed, TileSwizzle};
    use crate::wgmma::{Swizzle128B, Swizzle32B, Swizzle64B};
    impl sealed::Sealed for Swizzle32B {}
    impl sealed::Sealed for Swizzle64B {}
    impl sealed::Sealed for Swizzle128B {}
    impl TileSwizzle for Swizzle32B {
        const MODE: u32 = 1;
        const SPAN: usize = 32;
    }
    impl TileSwizzle for Swizzle64B {
        const MODE: u32 = 2;
        const SPAN: usize = 64;
    }
    impl TileSwizzle for Swizzle128B {
        const MODE: u32 = 3;
        const SPAN: usize = 128;
    }
}

/// Where byte `offset` of a box lands in its tile under the swizzle of
/// `CUtensorMapSwizzle` `mode`: the 16-byte chunk index (bits 4..) XORed
/// with the offset's bits 7.. (the row's index within 8 rows of 128
/// bytes), `mode` bits of it (none, 32, 64 or 128-byte spans), as the
/// hardware does on the tile's address (hence its alignment). The chunk
/// stays within its 128 bytes.
#[inline(always)]
pub(crate) fn swizzle(mode: u32, offset: usize) -> usize {
    let mask = ((1usize << mode) - 1) << 4;
    offset ^ ((offset >> 3) & mask)
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn misaligned_column(col: i32, element: usize) -> ! {
    panic!(
        "TmaTile::load: the box's first column {col} lies {} bytes into the row; the bulk tensor copy needs a multiple of 16 bytes (a column that is a multiple of {} for elements of {element} bytes), and the GPU faults on any other",
        i64::from(col) * element as i64,
        16 / gcd(16, element)
    )
}

/// The greatest common divisor, for the message above.
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mma::Bf16;
    use crate::wgmma::{KMajorTile, Swizzle, Swizzle128B, Swizzle32B, Swizzle64B};

    /// A box copied with a swizzle lands where `wgmma` reads a K-major
    /// tile of that swizzle (two descriptions of the hardware's pattern).
    fn lands_where_wgmma_reads<S: TileSwizzle + Swizzle>() {
        for row in 0..16 {
            for k in 0..S::BYTES / 2 {
                let tma = swizzle(<S as TileSwizzle>::MODE, row * S::BYTES + 2 * k);
                let wgmma = 2 * KMajorTile::<Bf16, S, 16>::slot(row, k);
                assert_eq!(
                    tma,
                    wgmma,
                    "mode {}: ({row}, {k})",
                    <S as TileSwizzle>::MODE
                );
            }
        }
    }

    #[test]
    fn swizzled_boxes_land_as_wgmma_reads_them() {
        lands_where_wgmma_reads::<Swizzle128B>();
        lands_where_wgmma_reads::<Swizzle64B>();
        lands_where_wgmma_reads::<Swizzle32B>();
    }

    /// Every byte stays within its 128 bytes (the tile's blocks hold it),
    /// and no two land together; without a swizzle nothing moves.
    #[test]
    fn a_swizzle_permutes_each_128_bytes() {
        for mode in 0..4 {
            let mut seen = [false; 1024];
            for offset in 0..1024 {
                let to = swizzle(mode, offset);
                assert_eq!(to / 128, offset / 128, "mode {mode}: {offset}");
                assert!(!seen[to], "mode {mode}: {offset} lands on a taken byte");
                seen[to] = true;
                if mode == 0 {
                    assert_eq!(to, offset);
                }
            }
        }
        // The 128-byte swizzle: chunk c of row r (of 128 bytes) at chunk c ^ r.
        assert_eq!(swizzle(3, 128), 144);
        assert_eq!(swizzle(3, 7 * 128 + 16), 7 * 128 + 16 * 6);
    }
}
