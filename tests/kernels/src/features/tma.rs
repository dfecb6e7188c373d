//! The bulk tensor copy (`gpu_device::tma`, sm_90): boxes of a 2-D tensor
//! map copied into shared tiles, without and with the 128-byte swizzle,
//! read back element by element.

use gpu_device::bf16;
use gpu_device::prelude::*;
use gpu_device::tma::{NoSwizzle, TensorMap2d, TileSwizzle, TmaTile};
use gpu_device::wgmma::Swizzle128B;

/// Rows and columns of the boxes of [`tma_boxes`] and
/// [`tma_boxes_swizzled`].
pub const BOX: usize = 64;
/// Threads a block of those kernels: a quarter of a box each.
pub const TMA_THREADS: u32 = 1024;
/// What a thread writes when a box wholly past the tensor's edge did not
/// land as zeros.
pub const NOT_ZERO: f32 = 12345.0;

/// Box `b = block / 4` of a grid of boxes `boxes_per_row` wide, rows
/// `16 (block % 4) ..` of it: element `(r, c)` of the box to
/// `out[b * 64 * 64 + r * 64 + c]`. Before it, the tile is loaded with the
/// box before the tensor's first element (at -64, -64), which lands as
/// zeros, and read: each thread checks one element of it.
fn copy_boxes<S: TileSwizzle>(
    tile: &mut TmaTile<bf16, BOX, BOX, S>,
    map: &TensorMap2d<bf16, BOX, BOX, S>,
    boxes_per_row: u32,
    mut out: DisjointSlice<bf16>,
) {
    let t = thread_rank();
    let (r, c) = ((block_idx().x as usize % 4) * 16 + t / BOX, t % BOX);
    let before = tile.load(map, -64, -64).wait();
    let zero = before.get(r, c).to_f32() == 0.0 && before.completed().phase() == 0;
    let b = block_idx().x / 4;
    let (row0, col0) = (
        (b / boxes_per_row) as i32 * 64,
        (b % boxes_per_row) as i32 * 64,
    );
    let landed = tile.load(map, row0, col0).wait();
    let v = if zero && landed.completed().phase() == 1 {
        landed.get(r, c)
    } else {
        bf16::from_f32(NOT_ZERO)
    };
    out.set(thread_index(), v);
}

/// [`copy_boxes`] of a map without swizzle.
#[kernel(arch = "sm_90a")]
pub fn tma_boxes(map: TensorMap2d<bf16, 64, 64>, boxes_per_row: u32, out: DisjointSlice<bf16>) {
    gpu_device::tma_tile!(bf16, 64, 64, NoSwizzle)
        .with(|tile| copy_boxes(tile, &map, boxes_per_row, out));
}

/// [`copy_boxes`] of a map with the 128-byte swizzle (the tile's bytes
/// swizzled, `get` undoing it).
#[kernel(arch = "sm_90a")]
pub fn tma_boxes_swizzled(
    map: TensorMap2d<bf16, 64, 64, Swizzle128B>,
    boxes_per_row: u32,
    out: DisjointSlice<bf16>,
) {
    gpu_device::tma_tile!(bf16, 64, 64, Swizzle128B)
        .with(|tile| copy_boxes(tile, &map, boxes_per_row, out));
}

/// A map of `f32` boxes of 16 x 32 (a tile of 2 KiB, one thread a
/// element): thread `t` writes element `(t / 32, t % 32)` of the box at
/// (`row`, `col`), read through the landed tile's raw bytes' swizzle as
/// well (none).
#[kernel(arch = "sm_90")]
pub fn tma_box_f32(map: TensorMap2d<f32, 16, 32>, row: i32, col: i32, mut out: DisjointSlice<f32>) {
    let t = thread_rank();
    let v = gpu_device::tma_tile!(f32, 16, 32)
        .with(|tile| tile.load(&map, row, col).wait().get(t / 32, t % 32));
    out.set(thread_index(), v);
}
