//! The bulk tensor copy engine (TMA, sm_90): a box of a tensor map copied
//! from global memory into a tile of the block's shared memory by one
//! thread, completing on the tile's own `mbarrier`.
//!
//! A kernel takes the map as a parameter, [`TensorMap2d<T, ROWS, COLS,
//! S>`](TensorMap2d): the launcher passes a host
//! `gpu_runtime::TensorMap<'_, T>` whose box is `ROWS x COLS` with the
//! swizzle `S` (checked at launch, an error naming the parameter). A tile
//! of the same type parameters, [`tma_tile!`](crate::tma_tile), is filled
//! by [`TmaTile::load`] and read once [`Loading::wait`] returns.
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
//!   copy completes ([`Completed`] names it).
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

#[cfg(not(target_arch = "nvptx64"))]
pub mod simulated_map;
// The ring feeds `wgmma`: sm_90a's.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod ring;

use crate::arch;
use crate::mbarrier::{Completed, MBarrier, MBarriers};
use core::marker::PhantomData;

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

/// The shape of a kernel's tensor map parameter, for its launcher to check
/// the host map against (and for the tile's type).
pub trait TensorMapShape {
    /// The element type.
    type Element;
    /// The number of dimensions.
    const RANK: usize;
    /// The box's extents, innermost first.
    const BOX: [u32; 5];
    /// `CUtensorMapSwizzle`.
    const SWIZZLE: u32;
}

/// A 2-D tensor map as a kernel parameter: a row-major matrix of `T`
/// copied in boxes of `ROWS` rows of `COLS` elements, swizzled by `S`. The
/// launcher takes a `&gpu_runtime::TensorMap<'_, T>` of two dimensions
/// with that box and swizzle.
///
/// It holds the generic address of the map's encoded `CUtensorMap` in
/// global memory (64-byte aligned), not the map itself: CUDA C passes it
/// as a `__grid_constant__` parameter, but rustc's NVPTX backend copies a
/// by-value aggregate whose address is taken into local memory, which the
/// copy engine cannot read. PTX's `cp.async.bulk.tensor` (ISA 8.0) takes
/// the tensor map's generic address, and the ISA's tensor-map section lets
/// the object reside in the `.param`, `.const` or `.global` space. The
/// host writes it when the map is made, and the write completes before
/// `TensorMap::new` returns, before any launch that takes the map (which
/// also tracks it as a buffer the kernel reads, and keeps it alive for the
/// kernel). The copy engine caches descriptors by address, though, and the
/// runtime's memory pool gives a dropped map's address to the next one: so
/// each thread acquires the map for the tensor-map proxy at the kernel's
/// start (`fence.proxy.tensormap::generic.acquire.sys`, which the CUDA
/// programming guide asks for after a host copy into a map in global
/// memory). Without it, a kernel copied with the descriptor of an earlier
/// map at the same address (an H200 ended `tma_box_f32`, a box of 2048
/// bytes, with `CUDA_ERROR_ILLEGAL_INSTRUCTION` after kernels copied 8192
/// bytes through maps the pool had placed there).
pub struct TensorMap2d<T, const ROWS: usize, const COLS: usize, S: TileSwizzle = NoSwizzle> {
    map: *const u64,
    _element: PhantomData<(fn() -> T, S)>,
}

impl<T, const ROWS: usize, const COLS: usize, S: TileSwizzle> Clone
    for TensorMap2d<T, ROWS, COLS, S>
{
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const ROWS: usize, const COLS: usize, S: TileSwizzle> Copy
    for TensorMap2d<T, ROWS, COLS, S>
{
}

impl<T, const ROWS: usize, const COLS: usize, S: TileSwizzle> TensorMapShape
    for TensorMap2d<T, ROWS, COLS, S>
{
    type Element = T;
    const RANK: usize = 2;
    const BOX: [u32; 5] = [COLS as u32, ROWS as u32, 1, 1, 1];
    const SWIZZLE: u32 = S::MODE;
}

impl<T, const ROWS: usize, const COLS: usize, S: TileSwizzle> TensorMap2d<T, ROWS, COLS, S> {
    /// The parameter, from its PTX parameter.
    ///
    /// # Safety
    /// `map` is the address of an encoded tensor map of `T` in global
    /// memory (on the simulator, its simulated encoding), 64-byte aligned,
    /// of a live buffer, whose box is `ROWS x COLS` with swizzle `S`, not
    /// written during the launch: what the launcher passes. Each thread
    /// calls it at the kernel's start (it acquires the map for the copy
    /// engine, see the type's documentation).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(map: *const T) -> Self {
        // SAFETY: the caller's contract: 128 bytes of a map in global
        // memory.
        unsafe { arch::tma::fence_tensormap_acquire(map.cast()) };
        TensorMap2d {
            map: map.cast(),
            _element: PhantomData,
        }
    }
}

/// One 1024-byte aligned block of a tile's shared memory (any swizzle's
/// pattern repeats within 1024 bytes); for `tma_tile!`.
#[doc(hidden)]
#[repr(C, align(1024))]
pub struct TileBlock([u8; 1024]);

/// The barriers of a TMA tile (for `tma_tile!`): `full` (a copy landed),
/// `empty` (every thread stopped reading the tile) and `done` (every
/// thread left the tile's scope).
#[doc(hidden)]
pub const __TILE_BARRIERS: usize = 3;

/// A tile of `ROWS x COLS` elements `T` in the block's shared memory, with
/// its barriers, not initialised yet: from [`tma_tile!`](crate::tma_tile).
pub struct TmaTileSlot<T, const ROWS: usize, const COLS: usize, S: TileSwizzle = NoSwizzle> {
    tile: *mut T,
    barriers: MBarriers<__TILE_BARRIERS>,
    _swizzle: PhantomData<S>,
}

impl<T, const ROWS: usize, const COLS: usize, S: TileSwizzle> TmaTileSlot<T, ROWS, COLS, S> {
    /// The tile's bytes: a box's, what its barrier expects of a copy.
    /// Fails to compile unless the box is one the copy engine takes: 1 to
    /// 256 elements in each dimension, rows a multiple of 16 bytes and, with
    /// a swizzle, at most its span.
    #[allow(clippy::manual_range_contains)]
    pub const BYTES: usize = {
        let row = COLS * core::mem::size_of::<T>();
        assert!(
            ROWS >= 1 && ROWS <= 256 && COLS >= 1 && COLS <= 256,
            "a TMA box has 1 to 256 elements in each dimension"
        );
        assert!(
            row.is_multiple_of(16),
            "a TMA box's rows are a multiple of 16 bytes"
        );
        assert!(
            S::SPAN == 0 || row <= S::SPAN,
            "a swizzled TMA box's rows are at most the swizzle's span"
        );
        assert!(
            ROWS * row <= crate::mbarrier::MAX_COUNT as usize,
            "a TMA box's bytes are below 2^20, an mbarrier's transaction limit"
        );
        ROWS * row
    };

    /// The 1024-byte blocks the tile takes (for `tma_tile!`).
    #[doc(hidden)]
    pub const BLOCKS: usize = Self::BYTES.div_ceil(1024);

    /// The tile at `tile` with its barriers at `barriers`.
    ///
    /// # Safety
    /// `tile` is the start of [`BLOCKS`](Self::BLOCKS) 1024-byte aligned
    /// blocks of the block's shared memory, and `barriers` of
    /// `mbarrier::__words(__TILE_BARRIERS)` words (the barriers' and their
    /// tag), which nothing but this slot and its handles reaches: what
    /// `tma_tile!` passes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(tile: *mut TileBlock, barriers: *mut u64) -> Self {
        TmaTileSlot {
            tile: tile.cast(),
            // SAFETY: the caller's contract.
            barriers: unsafe { MBarriers::from_raw(barriers) },
            _swizzle: PhantomData,
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
    #[inline(always)]
    #[track_caller]
    pub fn with<R>(self, f: impl FnOnce(&mut TmaTile<T, ROWS, COLS, S>) -> R) -> R {
        let _ = Self::BYTES;
        // At most 1024 threads a block: in an arrival count's range.
        let threads = crate::block_size() as u32;
        let ([full, empty, mut done], end) = self.barriers.init_scoped([1, threads, threads]);
        let mut tile = TmaTile {
            tile: self.tile,
            full,
            empty,
            in_flight: false,
            empty_pending: false,
            _swizzle: PhantomData,
        };
        let result = f(&mut tile);
        if tile.in_flight {
            let _ = tile.full.wait();
        }
        done.arrive();
        if crate::thread_rank() == 0 {
            let _ = done.wait();
            // SAFETY: thread 0, once every thread of the block arrived on
            // `done` after its last use of the tile's handles (`tile` is
            // not used after `f` and the wait above; `Landed`s borrowed it
            // within `f`), and no copy is in flight (each thread waited for
            // its own before arriving).
            unsafe { end.release() };
        }
        result
    }
}

/// This thread's handle of a TMA tile, inside [`TmaTileSlot::with`].
pub struct TmaTile<T, const ROWS: usize, const COLS: usize, S: TileSwizzle = NoSwizzle> {
    tile: *mut T,
    /// One arrival (thread 0's, with the box's bytes) and the copy's
    /// bytes a phase: the copy landed.
    full: MBarrier,
    /// Every thread's arrival a phase: none reads the tile any more (each
    /// arrives in `load`, thread 0 waits before it issues the copy).
    empty: MBarrier,
    /// A copy issued that this thread has not waited for.
    in_flight: bool,
    /// This thread arrived on `empty` and has not waited for that phase
    /// (threads other than thread 0 wait for it at their next load, where
    /// it has completed: the copy they waited for was issued after it).
    empty_pending: bool,
    _swizzle: PhantomData<S>,
}

impl<T: Copy, const ROWS: usize, const COLS: usize, S: TileSwizzle> TmaTile<T, ROWS, COLS, S> {
    /// Copies the box of `map` whose first element is at (`row`, `col`)
    /// into the tile (`cp.async.bulk.tensor.2d`, by thread 0): elements
    /// past the tensor's edges (negative coordinates too) land as zeros.
    /// Every thread of the block calls it together, with the same map and
    /// coordinates (thread 0's are the ones copied); see the module's
    /// soundness notes. The copy is in flight until [`Loading::wait`].
    ///
    /// `col` lies a multiple of 16 bytes into the row (a multiple of 4
    /// columns for `f32`, of 8 for `bf16`): the copy engine faults on any
    /// other start, so another is a panic naming it (on the simulator, the
    /// launch's report; on the GPU a trap, as the copy engine's own fault).
    #[inline(always)]
    #[track_caller]
    pub fn load(
        &mut self,
        map: &TensorMap2d<T, ROWS, COLS, S>,
        row: i32,
        col: i32,
    ) -> Loading<'_, T, ROWS, COLS, S> {
        // The copy engine takes a box whose first column lies a multiple of
        // 16 bytes into the row: any other faults the kernel on the GPU (an
        // illegal instruction, measured on an H100, negative columns too),
        // so it is refused here, on every target, before the copy.
        let element = core::mem::size_of::<T>();
        let offset = i64::from(col) * element as i64;
        if offset % 16 != 0 {
            misaligned_column(col, element);
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
            let bytes = TmaTileSlot::<T, ROWS, COLS, S>::BYTES as u32;
            self.full.arrive_expect_tx(bytes);
            // SAFETY: the tile is this slot's `BYTES` bytes, 1024-byte
            // aligned, which no thread reads until the `full` barrier's
            // phase completes (every thread arrived on `empty` above after
            // its last read); `full` is the tile's own, armed with the
            // box's bytes; `map` is a live map of this box and swizzle
            // (its `from_kernel_param` contract).
            unsafe {
                #[cfg(target_arch = "nvptx64")]
                arch::tma::copy_2d(self.tile.cast(), map.map, self.full.word(), col, row);
                #[cfg(not(target_arch = "nvptx64"))]
                arch::tma::copy_2d(
                    self.tile.cast(),
                    TmaTileSlot::<T, ROWS, COLS, S>::BYTES,
                    map.map,
                    [COLS as u32, ROWS as u32],
                    S::MODE,
                    self.full.word(),
                    self.full.index() as usize,
                    col,
                    row,
                );
            }
        }
        self.in_flight = true;
        Loading { tile: self }
    }
}

/// A copy into a tile in flight: from [`TmaTile::load`].
#[must_use = "the tile is read through what `wait` returns"]
pub struct Loading<'a, T, const ROWS: usize, const COLS: usize, S: TileSwizzle> {
    tile: &'a mut TmaTile<T, ROWS, COLS, S>,
}

impl<'a, T: Copy, const ROWS: usize, const COLS: usize, S: TileSwizzle>
    Loading<'a, T, ROWS, COLS, S>
{
    /// Waits for the copy to land: the tile, readable.
    #[inline(always)]
    #[track_caller]
    pub fn wait(self) -> Landed<'a, T, ROWS, COLS, S> {
        let completed = self.tile.full.wait();
        self.tile.in_flight = false;
        Landed {
            tile: self.tile.tile,
            completed,
            _borrow: PhantomData,
            _swizzle: PhantomData,
        }
    }
}

/// A tile a copy has filled, readable until the tile's next load: from
/// [`Loading::wait`].
pub struct Landed<'a, T, const ROWS: usize, const COLS: usize, S: TileSwizzle> {
    tile: *const T,
    completed: Completed,
    _borrow: PhantomData<&'a T>,
    _swizzle: PhantomData<S>,
}

impl<T: Copy, const ROWS: usize, const COLS: usize, S: TileSwizzle> Landed<'_, T, ROWS, COLS, S> {
    /// The witness of the barrier phase the copy completed.
    #[inline(always)]
    pub fn completed(&self) -> &Completed {
        &self.completed
    }

    /// Element (`row`, `col`) of the box (the swizzle undone). Panics
    /// outside `ROWS x COLS`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, row: usize, col: usize) -> T {
        if row >= ROWS || col >= COLS {
            outside(row, col, ROWS, COLS)
        }
        let size = core::mem::size_of::<T>();
        let offset = swizzle(S::MODE, (row * COLS + col) * size);
        // SAFETY: `offset` is inside the tile's 1024-byte blocks (the
        // swizzle moves a 16-byte chunk within its 128 bytes, and the
        // blocks are whole 128 bytes), at an element's alignment (rows
        // are whole chunks), where the copy put element (row, col); the
        // copy landed (`completed`) and no copy writes the tile while this
        // borrow lives.
        unsafe { self.tile.cast::<u8>().add(offset).cast::<T>().read() }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned_column(col: i32, element: usize) -> ! {
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

#[cold]
#[inline(never)]
#[track_caller]
fn outside(row: usize, col: usize, rows: usize, cols: usize) -> ! {
    panic!("Landed::get: element ({row}, {col}) is outside the {rows} x {cols} tile")
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
