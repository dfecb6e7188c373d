//! Thread, block and grid coordinates (CUDA's `threadIdx`, `blockIdx`,
//! `blockDim`, `gridDim`) and Numba's `cuda.grid(n)` / `cuda.gridsize(n)`.

use crate::arch;
use crate::ThreadIndex;

/// Three unsigned coordinates, as CUDA's `dim3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// The x coordinate.
    pub x: u32,
    /// The y coordinate.
    pub y: u32,
    /// The z coordinate.
    pub z: u32,
}

impl From<[u32; 3]> for Dim3 {
    #[inline(always)]
    fn from([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// This thread's index within its block (`threadIdx`).
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    arch::thread_idx().into()
}

/// This block's index within the grid (`blockIdx`).
#[inline(always)]
pub fn block_idx() -> Dim3 {
    arch::block_idx().into()
}

/// The number of threads in each block (`blockDim`).
#[inline(always)]
pub fn block_dim() -> Dim3 {
    arch::block_dim().into()
}

/// The number of blocks in the grid (`gridDim`).
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    arch::grid_dim().into()
}

#[inline(always)]
fn global(block: u32, dim: u32, thread: u32) -> usize {
    block as usize * dim as usize + thread as usize
}

/// The absolute x position of this thread in the grid: Numba's `cuda.grid(1)`,
/// `blockIdx.x * blockDim.x + threadIdx.x`.
///
/// This is a plain number, good for reading. To *write* an output element, use
/// [`thread_index`], whose value is unique to the thread in any launch shape.
#[inline(always)]
pub fn grid_1d() -> usize {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    global(b.x, d.x, t.x)
}

/// The absolute (x, y) position of this thread: Numba's `cuda.grid(2)`.
#[inline(always)]
pub fn grid_2d() -> (usize, usize) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (global(b.x, d.x, t.x), global(b.y, d.y, t.y))
}

/// The absolute (x, y, z) position of this thread: Numba's `cuda.grid(3)`.
#[inline(always)]
pub fn grid_3d() -> (usize, usize, usize) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (
        global(b.x, d.x, t.x),
        global(b.y, d.y, t.y),
        global(b.z, d.z, t.z),
    )
}

/// The number of threads along x in the whole grid: Numba's `cuda.gridsize(1)`.
#[inline(always)]
pub fn gridsize_1d() -> usize {
    let (g, d) = (grid_dim(), block_dim());
    g.x as usize * d.x as usize
}

/// The number of threads along x and y in the whole grid: Numba's `cuda.gridsize(2)`.
#[inline(always)]
pub fn gridsize_2d() -> (usize, usize) {
    let (g, d) = (grid_dim(), block_dim());
    (g.x as usize * d.x as usize, g.y as usize * d.y as usize)
}

/// The number of threads along x, y and z in the whole grid: Numba's `cuda.gridsize(3)`.
#[inline(always)]
pub fn gridsize_3d() -> (usize, usize, usize) {
    let (g, d) = (grid_dim(), block_dim());
    (
        g.x as usize * d.x as usize,
        g.y as usize * d.y as usize,
        g.z as usize * d.z as usize,
    )
}

/// This thread's witness index: a number no other thread of the launch holds.
///
/// It is the thread's global position `(x, y, z)` (see [`grid_3d`]) in
/// row-major order, `x + X * (y + Y * z)` with `(X, Y, _)` = [`gridsize_3d`]:
/// for a one-dimensional launch it is [`grid_1d`], for a two-dimensional one
/// the index of element `(y, x)` of a `Y`-by-`X` array. Positions are distinct
/// per thread, and the runtime refuses launches of 2^64 threads or more, so the
/// number cannot wrap: a [`DisjointSlice`](crate::DisjointSlice) accepts it as
/// the one index this thread may write.
#[inline(always)]
pub fn thread_index() -> ThreadIndex {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    let x = global(b.x, d.x, t.x);
    let g = grid_dim();
    // The common one-dimensional launch stops at `x`. The test is uniform
    // across the launch, so it costs no divergence.
    if (g.y | g.z | d.y | d.z) == 1 {
        return ThreadIndex::new_unique(x);
    }
    let y = global(b.y, d.y, t.y);
    let z = global(b.z, d.z, t.z);
    let (width, height) = (g.x as usize * d.x as usize, g.y as usize * d.y as usize);
    ThreadIndex::new_unique(x + width * (y + height * z))
}

/// `thread_index` as the `#[kernel]` entry points bind it: for `ONE_DIMENSIONAL`
/// the launch is known to be one-dimensional, because the runtime launches
/// that entry point only for grids and blocks of the form `(n, 1, 1)`, and the
/// witness is [`grid_1d`] without testing the shape.
#[doc(hidden)]
#[inline(always)]
pub fn thread_index_for_shape<const ONE_DIMENSIONAL: bool>() -> ThreadIndex {
    if ONE_DIMENSIONAL {
        ThreadIndex::new_unique(grid_1d())
    } else {
        thread_index()
    }
}
