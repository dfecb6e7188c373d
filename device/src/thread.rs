//! Thread, block and grid coordinates (CUDA's `threadIdx`, `blockIdx`,
//! `blockDim`, `gridDim`) and Numba's `cuda.grid(n)` / `cuda.gridsize(n)`.

use crate::arch;
use crate::witness::{ThreadIndex, ThreadIndex2d, ThreadIndex3d};

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

impl Dim3 {
    /// The three coordinates as `usize`, for indexing: `let [tx, ty, _] = thread_idx().as_usize();`.
    #[inline(always)]
    pub fn as_usize(self) -> [usize; 3] {
        [self.x as usize, self.y as usize, self.z as usize]
    }

    /// The product `x * y * z` as `usize`: the number of threads of a block
    /// for [`block_dim`], of blocks of the grid for [`grid_dim`].
    #[inline(always)]
    pub fn count(self) -> usize {
        self.x as usize * self.y as usize * self.z as usize
    }
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
/// [`thread_index`], whose value is unique to the thread (in one-dimensional
/// launches; [`thread_index_2d`] and [`thread_index_3d`] in others).
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

/// This thread's linear index within its block, `x + X * (y + Y * z)` for
/// `threadIdx` `(x, y, z)` and `blockDim` `(X, Y, _)`: `0..block_size()`.
#[inline(always)]
pub fn thread_rank() -> usize {
    let ([x, y, z], d) = (thread_idx().as_usize(), block_dim());
    x + d.x as usize * (y + d.y as usize * z)
}

/// The number of threads in this block (`blockDim.x * blockDim.y * blockDim.z`).
#[inline(always)]
pub fn block_size() -> usize {
    block_dim().count()
}

/// Whether grid and block both have the shape `(n, 1, 1)`.
#[inline(always)]
fn is_one_dimensional() -> bool {
    let (g, d) = (grid_dim(), block_dim());
    (g.y | g.z | d.y | d.z) == 1
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn not_one_dimensional() -> ! {
    panic!("thread_index() is the witness of one-dimensional launches (grid and block of the form (n, 1, 1)); this launch has more dimensions: use thread_index_2d() or thread_index_3d() and a DisjointSlice2d or DisjointSlice3d output")
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_two_dimensional() -> ! {
    panic!("thread_index_2d() is the witness of launches whose grid and block have a z extent of 1; this launch has more: use thread_index_3d() and a DisjointSlice3d output")
}

/// This thread's one-dimensional witness: [`grid_1d`], a number no other
/// thread of the launch holds, which a [`DisjointSlice`](crate::DisjointSlice)
/// accepts as the one element this thread may write.
///
/// Valid only in one-dimensional launches (grid and block of the form
/// `(n, 1, 1)`): in any other launch it panics (on the GPU, a trap that fails
/// the launch), naming [`thread_index_2d`] and [`thread_index_3d`], the
/// witnesses of two- and three-dimensional launches. Inside a `#[kernel]` body
/// the test costs nothing: each kernel has an entry point for one-dimensional
/// launches, where the witness is `grid_1d()` with no test, and others, where
/// `thread_index()` fails at once; the runtime picks the entry from the
/// launch's shape (see [`entry`](crate::entry)). Called from a helper function
/// outside the kernel body, it tests the shape.
#[inline(always)]
#[track_caller]
pub fn thread_index() -> ThreadIndex {
    if !is_one_dimensional() {
        not_one_dimensional()
    }
    ThreadIndex::new_unique(grid_1d())
}

/// This thread's two-dimensional witness: its global position `(x, y)`
/// ([`grid_2d`]), which no other thread of the launch shares when the grid
/// and the block have a z extent of 1 (in other launches it panics, naming
/// [`thread_index_3d`]). A [`DisjointSlice2d`](crate::DisjointSlice2d)
/// accepts it as the element `(row, col) = (y, x)` this thread may write.
///
/// In a one-dimensional launch it is `(grid_1d(), 0)`. Inside a `#[kernel]`
/// body the z test costs nothing: the kernel gets an entry point for launches
/// whose z extents are 1, where the witness is `grid_2d()` with no test (see
/// [`entry`](crate::entry)).
#[inline(always)]
#[track_caller]
pub fn thread_index_2d() -> ThreadIndex2d {
    let (g, d) = (grid_dim(), block_dim());
    if g.z as u64 * d.z as u64 != 1 {
        not_two_dimensional()
    }
    let (x, y) = grid_2d();
    ThreadIndex2d::new_unique(x, y)
}

/// This thread's three-dimensional witness: its global position `(x, y, z)`
/// ([`grid_3d`]), unique in every launch. A
/// [`DisjointSlice3d`](crate::DisjointSlice3d) accepts it as the element
/// `(z, y, x)` this thread may write.
#[inline(always)]
pub fn thread_index_3d() -> ThreadIndex3d {
    let (x, y, z) = grid_3d();
    ThreadIndex3d::new_unique(x, y, z)
}
