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
/// Threads are numbered block by block (blocks in x, then y, then z order) and,
/// inside a block, x then y then z. For a one-dimensional launch this is the
/// same number as [`grid_1d`]. Because the value is unique to the thread, a
/// [`DisjointSlice`](crate::DisjointSlice) accepts it as the one index this
/// thread may write.
#[inline(always)]
pub fn thread_index() -> ThreadIndex {
    let (b, g, t, d) = (block_idx(), grid_dim(), thread_idx(), block_dim());
    // A one-dimensional launch (the common case) takes the short formula, which
    // gives the same number as the general one below; the test is uniform
    // across the launch, so it costs no divergence.
    if (g.y | g.z | d.y | d.z) == 1 {
        return ThreadIndex::new_unique(b.x as usize * d.x as usize + t.x as usize);
    }
    // `b.z * g.y + b.y` < 65535 * 65535 + 65535 and the in-block terms < 1024
    // fit in 32 bits; only the block number needs 64.
    let block = (b.z * g.y + b.y) as usize * g.x as usize + b.x as usize;
    let threads_per_block = d.x * d.y * d.z;
    let within = (t.z * d.y + t.y) * d.x + t.x;
    ThreadIndex::new_unique(block * threads_per_block as usize + within as usize)
}
