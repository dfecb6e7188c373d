//! Kernels for block shapes checked in the kernel (`Block::require_shape`)
//! and for read-only matrix views of inputs (`Slice2d`).

use gpu_device::prelude::*;

/// Fills a 300-slot shared array (with blocks of 128 threads: two full
/// rounds of slots and 44 more) with `slot * 1000 + rank`, each slot by the
/// thread that owns it, then writes `[rank, size, thread_rank(), slot j]`
/// with `j = (7 x + 13 y) % 300` for thread `(x, y)`. With `shaped`, the
/// token comes from `block.require_shape(32, 4, 1)` (a panic in any other
/// block shape).
#[kernel]
pub fn shaped_fill(shaped: bool, mut out: DisjointSlice2d<[u32; 4]>, block: Block) {
    let block = if shaped {
        block.require_shape(32, 4, 1)
    } else {
        block
    };
    let tile = shared_array!(u32; 300);
    let (rank, size) = (block.thread_rank(), block.size());
    let mut w = block;
    tile.fill(&mut w, |slot| (slot * 1000 + rank) as u32);
    let r = w.sync();
    let i = thread_index_2d();
    let j = (7 * i.x() + 13 * i.y()) % 300;
    out.set(
        i,
        [
            rank as u32,
            size as u32,
            thread_rank() as u32,
            tile.get(&r, j),
        ],
    );
}

/// `out[y][x] = m[(y + dy, x + dx)]` for the `rows x cols` matrix view `m` of
/// `input` (a panic when `input` is too short, or when the index leaves the
/// matrix on either axis).
#[kernel]
pub fn matrix_read(
    input: &[u32],
    rows: usize,
    cols: usize,
    dy: usize,
    dx: usize,
    mut out: DisjointSlice2d<u32>,
) {
    let m = Slice2d::new(input, rows, cols);
    let i = thread_index_2d();
    if i.y() < out.rows() && i.x() < out.cols() {
        out.set(i, m[(i.y() + dy, i.x() + dx)]);
    }
}

/// `out[y][x]` = row `x` of `input` seen as a matrix of `out`'s transposed
/// shape, summed (`Slice2d::with_shape` and `Slice2d::row`), plus `y`.
#[kernel]
pub fn transposed_row_sums(input: &[u32], mut out: DisjointSlice2d<u32>) {
    let m = Slice2d::with_shape(input, out.shape().transposed());
    let i = thread_index_2d();
    if i.y() < out.rows() && i.x() < out.cols() {
        let sum: u32 = m.row(i.x()).iter().sum();
        out.set(i, sum + i.y() as u32);
    }
}
