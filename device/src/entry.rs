//! What a `#[kernel]` entry point knows about its launch before the body
//! runs: which launch shapes it serves, and the block shape a kernel
//! declares.
//!
//! # Entry points per launch shape
//!
//! Each kernel instance is compiled to up to three PTX entry points, and the
//! runtime picks one from the launch's grid and block:
//!
//! | entry | launched for | `thread_index()` | `thread_index_2d()` |
//! |---|---|---|---|
//! | `k__1d` | grid and block `(n, 1, 1)` | `grid_1d()`, no test | `(grid_1d(), 0)`, no test |
//! | `k__2d` (kernels that call `thread_index_2d`) | other launches whose grid and block have a z extent of 1 and at most 2^32 threads along x | fails at once | `grid_2d()` computed in 32 bits, no test |
//! | `k` | every other launch | fails at once | tests the z extents |
//!
//! So a witness costs no test inside a `#[kernel]` body: the test is the
//! runtime's choice of entry, made on the host once per launch. The
//! simulator runs the body compiled for the same entry.
//!
//! In the `__2d` entry both coordinates are below 2^32 (`gridDim.x *
//! blockDim.x <= 2^32` is part of the entry's condition, and `gridDim.y *
//! blockDim.y < 2^32` on every GPU), so they are computed in `u32` and
//! widened: the compiler then knows their high halves are zero, and a
//! kernel comparing them with 32-bit extents (a
//! [`DisjointSlice2dU32`](crate::DisjointSlice2dU32)) compiles to 32-bit
//! compares and offsets, as CUDA C's `int` indices do.
//!
//! # Declared block shapes
//!
//! `#[kernel(block = (32, 8))]` declares that the kernel runs only in blocks
//! of `32 x 8 x 1` threads. The launcher refuses any other block shape (an
//! error naming the kernel and both shapes) before anything is queued, so
//! every entry point starts by telling the compiler that `blockDim` is the
//! declared shape: a kernel's own shape test
//! ([`Block::require_shape`](crate::Block::require_shape)) folds away, the
//! phase token's size and rank become constants, and `blockIdx.x *
//! blockDim.x` is a shift. On the CPU simulator the entry checks the shape
//! instead of assuming it.
//!
//! Soundness: the assumption is true in every launch of the entry point,
//! because every launch of a `#[kernel]`'s entry points goes through its
//! launcher's `KernelFunction::launch` (in `gpu-runtime`), which compares
//! the launch's block with the declared shape first; the PTX module's
//! entry points are reachable otherwise only through `unsafe` code (the
//! module is embedded by `embed_kernels!`, and running PTX outside a typed
//! launcher means calling the driver directly).

use core::marker::PhantomData;

use crate::thread::{grid_1d, grid_2d, thread_index_2d, thread_index_3d};
use crate::thread_owner::Owner;
use crate::witness::{ThreadIndex, ThreadIndex2d, ThreadIndex3d};

/// `grid_2d()` computed in `u32`, for the `__2d` entry.
///
/// Exact there: the runtime picks that entry only for launches with
/// `gridDim.x * blockDim.x <= 2^32`, so `x <= 2^32 - 1`, and `y <=
/// 65535 * 1024` (CUDA's grid and block limits) in every launch. The
/// wrapping operations never wrap there; they keep the simulator's debug
/// builds from checking what cannot overflow.
#[inline(always)]
fn grid_2d_u32() -> (u32, u32) {
    let (b, d, t) = (
        crate::arch::block_idx(),
        crate::arch::block_dim(),
        crate::arch::thread_idx(),
    );
    (
        b[0].wrapping_mul(d[0]).wrapping_add(t[0]),
        b[1].wrapping_mul(d[1]).wrapping_add(t[1]),
    )
}

// The three entry kinds are plain numbers, safe to name: only
// `EntryShape::new` (`unsafe`) turns one into a claim about the launch.
#[doc(hidden)]
/// The general entry point: launched for shapes no other entry serves.
pub const GENERAL: u8 = 0;
#[doc(hidden)]
/// The `__1d` entry point: launched only for grids and blocks `(n, 1, 1)`.
pub const ONE_DIMENSIONAL: u8 = 1;
#[doc(hidden)]
/// The `__2d` entry point: launched only for grids and blocks whose z
/// extent is 1, with at most 2^32 threads along x (and that are not
/// one-dimensional).
pub const Z_EXTENT_ONE: u8 = 2;

#[cold]
#[inline(never)]
#[track_caller]
fn not_one_dimensional() -> ! {
    crate::thread::not_one_dimensional()
}

#[doc(hidden)]
/// The witnesses as a `#[kernel]` entry point binds them in its body, for
/// the launches the entry serves (`ENTRY` is [`GENERAL`],
/// [`ONE_DIMENSIONAL`] or [`Z_EXTENT_ONE`]; see the [module
/// documentation](self)).
///
/// The value is the entry point's proof of the launch's shape: only the
/// entry point makes it (`unsafe`), passes it to the kernel's body, and the
/// body's witness bindings use it. It is neither `Send` nor `Sync`, so it
/// stays in the launch's thread. Without it, the unchecked witnesses would
/// be safe functions any code could call in a launch of any shape, and a
/// body's instance for one entry could be called from a kernel launched in
/// another shape.
#[derive(Clone, Copy)]
pub struct EntryShape<const ENTRY: u8> {
    /// The entry point's thread (checked at each use on the simulator, where
    /// host-only code could carry the token to a launch of another shape).
    owner: Owner,
    _thread: PhantomData<*mut ()>,
}

impl<const ENTRY: u8> EntryShape<ENTRY> {
    /// The shape token of an entry point.
    ///
    /// # Safety
    /// Made only by a `#[kernel]` entry point, for its body, with the
    /// `ENTRY` of that entry point: [`ONE_DIMENSIONAL`] only in the `__1d`
    /// entry, which the runtime launches only when grid and block are both
    /// of the form `(n, 1, 1)`; [`Z_EXTENT_ONE`] only in the `__2d` entry,
    /// launched only when grid and block both have a z extent of 1 and at
    /// most 2^32 threads along x and along y.
    #[inline(always)]
    pub unsafe fn new() -> Self {
        EntryShape {
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// See [`thread_index`](crate::thread_index).
    #[inline(always)]
    #[track_caller]
    pub fn thread_index(self) -> ThreadIndex {
        if ENTRY != ONE_DIMENSIONAL {
            not_one_dimensional()
        }
        self.owner.check("a kernel entry's shape token");
        // Unique: this token exists only in a one-dimensional launch (`new`).
        ThreadIndex::new_unique(grid_1d())
    }

    /// See [`thread_index_2d`](crate::thread_index_2d).
    #[inline(always)]
    #[track_caller]
    pub fn thread_index_2d(self) -> ThreadIndex2d {
        self.owner.check("a kernel entry's shape token");
        match ENTRY {
            ONE_DIMENSIONAL => ThreadIndex2d::new_unique(grid_1d(), 0),
            Z_EXTENT_ONE => {
                // Unique: this token exists only in launches whose z extents
                // are 1 (and exact: their positions fit in 32 bits).
                let (x, y) = grid_2d_u32();
                ThreadIndex2d::new_unique(x as usize, y as usize)
            }
            _ => thread_index_2d(),
        }
    }

    /// See [`thread_index_3d`](crate::thread_index_3d).
    #[inline(always)]
    #[track_caller]
    pub fn thread_index_3d(self) -> ThreadIndex3d {
        self.owner.check("a kernel entry's shape token");
        match ENTRY {
            ONE_DIMENSIONAL => ThreadIndex3d::new_unique(grid_1d(), 0, 0),
            Z_EXTENT_ONE => {
                let (x, y) = grid_2d();
                ThreadIndex3d::new_unique(x, y, 0)
            }
            _ => thread_index_3d(),
        }
    }
}

#[doc(hidden)]
/// The block shape of `#[kernel(block = (x, y, z))]` as `blockDim`, checked
/// when the kernel is compiled: each extent at least 1, `x` and `y` at most
/// 1024, `z` at most 64 (every CUDA GPU's limits), and at most 1024 threads.
///
/// Safe: it computes a value. Only [`assume_block_shape`] (`unsafe`) turns
/// a shape into a fact the compiler relies on.
pub const fn declared_block_shape(x: usize, y: usize, z: usize) -> [u32; 3] {
    assert!(
        x >= 1 && y >= 1 && z >= 1,
        "#[kernel(block = ...)]: every block extent must be at least 1"
    );
    assert!(
        x <= 1024 && y <= 1024 && z <= 64,
        "#[kernel(block = ...)]: block extents are at most (1024, 1024, 64)"
    );
    assert!(
        x * y * z <= 1024,
        "#[kernel(block = ...)]: a block has at most 1024 threads"
    );
    [x as u32, y as u32, z as u32]
}

#[doc(hidden)]
/// The cluster shape of `#[kernel(cluster = (x, y, z))]`, checked when the
/// kernel is compiled: each extent at least 1, and at most 8 blocks in all
/// (the portable cluster size every sm_90 device runs; larger clusters need
/// a non-portable launch attribute this crate does not set).
///
/// Safe: it computes a value. The runtime launches the kernel in clusters
/// of this shape only.
pub const fn declared_cluster_shape(x: usize, y: usize, z: usize) -> [u32; 3] {
    assert!(
        x >= 1 && y >= 1 && z >= 1,
        "#[kernel(cluster = ...)]: every cluster extent must be at least 1"
    );
    assert!(
        x <= 8 && y <= 8 && z <= 8 && x * y * z <= 8,
        "#[kernel(cluster = ...)]: a cluster has at most 8 blocks (the portable cluster size)"
    );
    [x as u32, y as u32, z as u32]
}

#[doc(hidden)]
/// `#[kernel(launch_bounds = (max_threads, min_blocks))]` as `[max_threads,
/// min_blocks]`, checked when the kernel is compiled: `max_threads` from 1
/// to 1024, and not below the declared block's thread count, if any.
///
/// Safe: it computes a value. The runtime refuses launches of blocks larger
/// than `max_threads` (PTX's `.maxntid` makes the driver refuse them too).
pub const fn declared_launch_bounds(
    max_threads: usize,
    min_blocks: usize,
    block: Option<[u32; 3]>,
) -> [u32; 2] {
    assert!(
        max_threads >= 1 && max_threads <= 1024,
        "#[kernel(launch_bounds = ...)]: a block has 1 to 1024 threads"
    );
    assert!(
        min_blocks <= 64,
        "#[kernel(launch_bounds = ...)]: a multiprocessor holds at most 64 blocks"
    );
    if let Some([x, y, z]) = block {
        assert!(
            (x * y * z) as usize <= max_threads,
            "#[kernel(launch_bounds = ...)]: the declared block has more threads than the launch bounds allow"
        );
    }
    [max_threads as u32, min_blocks as u32]
}

#[doc(hidden)]
/// Tells the compiler that the launch's block is `shape` (on the CPU
/// simulator: checks it, and panics naming both shapes otherwise).
///
/// # Safety
/// Every launch of the calling entry point has blocks of `shape`: the
/// entry point belongs to a kernel declared with this shape, whose launcher
/// refuses every other (see the [module documentation](self)).
#[inline(always)]
#[track_caller]
pub unsafe fn assume_block_shape(shape: [u32; 3]) {
    let d = crate::arch::block_dim();
    #[cfg(not(target_arch = "nvptx64"))]
    if d != shape {
        panic!(
            "this kernel is declared with blocks of ({}, {}, {}) threads; it runs in blocks of ({}, {}, {})",
            shape[0], shape[1], shape[2], d[0], d[1], d[2]
        );
    }
    // SAFETY: the caller's guarantee (on the simulator, also checked above).
    // One fact per axis, so that each `%ntid` read folds to its constant.
    unsafe {
        crate::arch::assume(d[0] == shape[0]);
        crate::arch::assume(d[1] == shape[1]);
        crate::arch::assume(d[2] == shape[2]);
    }
}

#[doc(hidden)]
/// Tells the compiler that the input slice `input` (of `have` elements)
/// holds at least the `need` elements of the parameter `covered` (on the
/// CPU simulator: checks it, and panics naming both parameters otherwise),
/// so that a kernel's own test of it (`Slice2dU32::with_shape(input,
/// out.shape())`) folds away.
///
/// # Safety
/// Every launch of the calling entry point passes such arguments: the entry
/// point belongs to a kernel declared with `len(input >= covered)`, whose
/// launcher refuses any other (an `InvalidLaunch` error naming `input`).
#[inline(always)]
#[track_caller]
pub unsafe fn assume_len_at_least(
    have: usize,
    need: usize,
    input: &'static str,
    covered: &'static str,
) {
    #[cfg(not(target_arch = "nvptx64"))]
    if have < need {
        panic!(
            "this kernel is declared with `len({input} >= {covered})`; `{input}` has {have} elements, fewer than the {need} of `{covered}`"
        );
    }
    #[cfg(target_arch = "nvptx64")]
    let _ = (input, covered);
    // SAFETY: the caller's guarantee (on the simulator, also checked above).
    unsafe { crate::arch::assume(have >= need) };
}
