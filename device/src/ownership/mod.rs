//! Ownership maps: which elements of an output, or which slots of a shared
//! array, each thread of a launch may write, for the write patterns of fast
//! CUDA code beyond "one element per thread".
//!
//! A map is a type, carried by the output's type as a parameter (the way
//! [`DisjointSlice2d<T, R>`](crate::DisjointSlice2d) carries `R`), so every
//! thread of a launch uses the same one. Each map divides the elements among
//! the threads from the launch's shape alone (block and grid indices and
//! extents), so the sets are disjoint by construction; a thread's set comes
//! from its own coordinates, as a token that cannot be made otherwise and
//! cannot leave the thread.
//!
//! | map | output | thread `t` of block `b` (`B` threads, `G` in the launch) owns | token |
//! |---|---|---|---|
//! | [`ByThread`] (the default) | [`DisjointSlice<T>`](crate::DisjointSlice) | element `grid_1d()` | [`ThreadIndex`](crate::ThreadIndex) |
//! | [`ByBlock`] | `DisjointSlice<T, ByBlock>` | element `b`, in rank 0 | [`BlockLeader`](crate::leader::BlockLeader) |
//! | [`ByWarp<L>`](ByWarp) | `DisjointSlice<T, ByWarp<L>>` | element `global warp index`, in lane `L` | [`WarpLeader<L>`](crate::leader::WarpLeader) |
//! | [`GridStride`] | `DisjointSlice<T, GridStride>` | `g + k G` for `g = b B + t` | [`Items`] |
//! | [`Blocked<K>`](Blocked) | `DisjointSlice<T, Blocked<K>>` | `(b B + t) K + k`, `k < K` (CUB's "blocked") | [`Items`] |
//! | [`Striped<K>`](Striped) | `DisjointSlice<T, Striped<K>>` | `b B K + t + k B`, `k < K` (CUB's "striped") | [`Items`] |
//! | [`RowPerBlock<RUN>`](RowPerBlock) | [`DisjointMatrix<T, _>`](DisjointMatrix) | row `b`, columns `(t + j B) RUN + c`, `c < RUN` | [`RowItems`] |
//! | [`Tiles<R, C>`](Tiles) | `DisjointMatrix<T, Tiles<R, C>>` | a register tile of the block's tile (see [`Tiles`]) | [`TileItems`] |
//! | [`ClaimedRuns<RUN, RUNS>`](ClaimedRuns) | `DisjointSlice<T, ClaimedRuns<RUN, RUNS>>` | runs of `RUN` of a tile its block claimed (see [`ClaimedRuns`]) | [`TileOwner`](crate::lookback::TileOwner) |
//!
//! `b` is the block's linear index in the grid,
//! [`block_rank()`](crate::leader::block_rank), and `t` the thread's linear
//! index in its block, [`thread_rank()`](crate::thread_rank): every map
//! works in a grid or a block of any shape, except that [`Tiles`] needs the
//! block's thread count its tiles were made for (the launcher refuses any
//! other, see below).
//!
//! Shared arrays have maps too, chosen where the array is declared
//! (`shared_array!(T; N, map = M)`), for the Writing phase of the phase
//! token ([`Block`](crate::Block)):
//!
//! | map | thread `t` owns, in the Writing phase | written with |
//! |---|---|---|
//! | [`BlockStride`] (the default) | slots `t + k B` | `set_own`, `own_mut`, `fill` |
//! | [`ByBlock`] | every slot, in rank 0 | `set_by(&mut w, leader, ...)`, `own_all` |
//! | [`ByWarp<L>`](ByWarp) | slot `rank / 32`, in lane `L` | `set_by(&mut w, leader, value)` |
//! | [`Halo<R>`](Halo) | slot `t + R`; for `t < R` also slots `t` and `t + B + R` | `fill` |
//!
//! # Why it is sound
//!
//! 1. *Disjoint by construction.* For each map, the function from (block,
//!    thread, item) to element is injective for every launch shape it
//!    accepts: each map's documentation gives the argument. No element is
//!    computed by wrapping arithmetic: a computation that would overflow
//!    yields no element.
//! 2. *One map per output.* The map is a type parameter of the output, so
//!    every thread of a launch has the same one (the entry point builds every
//!    thread's output from the same parameter type), and each output accepts
//!    the tokens of its own map only. Distinct outputs are distinct buffers
//!    (the launcher borrows each output mutably). A shared array's map is
//!    fixed where it is declared: `shared_array!` refuses a map that names a
//!    generic parameter (one static array, one map).
//! 3. *Tokens come from the thread's own coordinates.* Their constructors are
//!    private to this crate; they are `!Send` and `!Sync`, as the witnesses.
//!    A token of a map is valid for every output of that map: a thread's set
//!    depends on the map and the launch's shape, never on the output.
//! 4. *The shape a map needs is checked.* [`Tiles`] assumes blocks of
//!    `R::THREADS * C::THREADS` threads: its token panics (a trap on the GPU,
//!    a report on the simulator) in any other block, and the launcher refuses
//!    such a launch first, naming the parameter and both sizes; a kernel that
//!    declares `block = (...)` of another size does not compile.
//! 5. *The maps are sealed.* Only this crate defines maps ([`Map`] has a
//!    private supertrait): a map is a proof, and the proofs are here.

mod claimed;
mod items;
mod matrix;
mod shared;
pub(crate) mod tiles;

pub use claimed::ClaimedRuns;
pub use items::{Blocked, ByBlock, ByThread, ByWarp, GridStride, ItemMap, Items, Owned, Striped};
pub use matrix::{DisjointMatrix, RowItems, RowPerBlock};
pub use shared::{BlockStride, Halo};
pub use tiles::{Axis, AxisMap, ColsFirst, RowsFirst, ThreadOrder, TileItems, Tiles};

pub(crate) mod sealed {
    /// Implemented by this crate's maps alone.
    pub trait Sealed {}
}

/// An ownership map (see the [module documentation](self)). Sealed.
pub trait Map: sealed::Sealed + 'static {
    /// The number of threads a block must have for the map's sets to be
    /// disjoint, or 0 when any block will do.
    const BLOCK_THREADS: u32 = 0;
}

/// A map of a [`DisjointSlice`](crate::DisjointSlice)'s elements.
pub trait SliceMap: Map {}

/// A map of a [`DisjointMatrix`]'s elements.
pub trait MatrixMap: Map {}

/// A map of a shared array's slots in the Writing phase.
pub trait SharedMap: Map {}

/// Fails to compile unless `M` is a shared array's map; `shared_array!`
/// calls it in a `const` item, where a generic parameter cannot appear.
#[doc(hidden)]
pub const fn require_shared_map<M: SharedMap>() {}

/// Makes the tokens `!Send` and `!Sync`.
pub(crate) type NotSend = core::marker::PhantomData<*mut ()>;
