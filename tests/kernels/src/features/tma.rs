//! The bulk tensor copy (`gpu_device::tma`, sm_90): boxes of a 2-D tensor
//! map copied into shared tiles, without and with the 128-byte swizzle,
//! read back element by element; two tiles loaded in crossed orders.

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
    tile: &mut TmaTile<'_, bf16, BOX, BOX, S>,
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

/// `copy_boxes` of a map without swizzle.
#[kernel(arch = "sm_90a")]
pub fn tma_boxes(map: TensorMap2d<bf16, 64, 64>, boxes_per_row: u32, out: DisjointSlice<bf16>) {
    gpu_device::tma_tile!(bf16, 64, 64, NoSwizzle)
        .with(|tile| copy_boxes(tile, &map, boxes_per_row, out));
}

/// `copy_boxes` of a map with the 128-byte swizzle (the tile's bytes
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

/// Rows of the map [`tma_two_tiles_crossed`] reads: four 16 x 32 boxes.
pub const CROSSED_ROWS: usize = 64;

/// Two tiles, each loaded twice; in the second round the block's odd
/// threads ask for tile B's next box first and read tile A's first box
/// after that (their `Landed` of A still held), the even threads ask for
/// A's then B's. Per thread `t` (element `(t / 32, t % 32)` of each box),
/// `out[3 t ..]`: A's first box (rows 0..16) as read then, A's second box
/// (rows 32..48), B's second box (rows 48..64). Each copy waits for every
/// thread's load of its own tile, so A's second copy waits for the odd
/// threads' read: the review's attack on the shared block barrier of
/// loads (there, B's load by the odd threads let A's copy land under
/// their read).
#[kernel(arch = "sm_90")]
pub fn tma_two_tiles_crossed(
    map: TensorMap2d<f32, 16, 32>,
    mut first_out: DisjointSlice<f32>,
    mut second_out: DisjointSlice<f32>,
    mut third_out: DisjointSlice<f32>,
) {
    let t = thread_rank();
    let (r, c) = (t / 32, t % 32);
    let [first, second, third] = gpu_device::tma_tile!(f32, 16, 32).with(|a| {
        gpu_device::tma_tile!(f32, 16, 32).with(|b| {
            let la = a.load(&map, 0, 0).wait();
            let _ = b.load(&map, 16, 0).wait();
            if t % 2 == 1 {
                let lb = b.load(&map, 48, 0);
                let first = la.get(r, c);
                let second = a.load(&map, 32, 0).wait().get(r, c);
                [first, second, lb.wait().get(r, c)]
            } else {
                let first = la.get(r, c);
                let la = a.load(&map, 32, 0);
                let lb = b.load(&map, 48, 0);
                [first, la.wait().get(r, c), lb.wait().get(r, c)]
            }
        })
    });
    first_out.set(thread_index(), first);
    second_out.set(thread_index(), second);
    third_out.set(thread_index(), third);
}

/// The same `tma_tile!` (made by a closure) in a `with` nested in its own
/// `with`: the inner scope would initialise the outer tile's barriers
/// again under its handle (`full` back at phase 0 while the outer handle
/// waits for phase 1 by parity, so its next copy could be read before it
/// landed). Refused in every thread. Thread `t` writes the sum of element
/// `(t / 32, t % 32)` of the boxes at rows 0, 16 and 32.
#[kernel(arch = "sm_90")]
pub fn tma_tile_nested(map: TensorMap2d<f32, 16, 32>, mut out: DisjointSlice<f32>) {
    let t = thread_rank();
    let (r, c) = (t / 32, t % 32);
    let make = || gpu_device::tma_tile!(f32, 16, 32);
    let v = make().with(|outer| {
        let first = outer.load(&map, 0, 0).wait().get(r, c);
        let inner = make().with(|inner| inner.load(&map, 16, 0).wait().get(r, c));
        first + inner + outer.load(&map, 32, 0).wait().get(r, c)
    });
    out.set(thread_index(), v);
}

/// One `tma_tile!` whose `with` runs `rounds` times in a loop, one scope
/// after the other (the barriers initialised again each round, after the
/// previous scope's end): round `k` copies the box at row `16 (k % 4)`.
/// Thread `t` writes the sum over the rounds of `(k + 1)` times element
/// `(t / 32, t % 32)` of that box, or -1 if some round's copy did not
/// complete phase 0 of a barrier initialised for that round.
#[kernel(arch = "sm_90")]
pub fn tma_tile_in_a_loop(map: TensorMap2d<f32, 16, 32>, rounds: u32, mut out: DisjointSlice<f32>) {
    let t = thread_rank();
    let (r, c) = (t / 32, t % 32);
    let mut sum = 0.0;
    let mut fresh = true;
    for k in 0..rounds {
        let row = 16 * (k % 4) as i32;
        sum += gpu_device::tma_tile!(f32, 16, 32).with(|tile| {
            let landed = tile.load(&map, row, 0).wait();
            fresh &= landed.completed().phase() == 0;
            landed.get(r, c)
        }) * (k + 1) as f32;
    }
    out.set(thread_index(), if fresh { sum } else { -1.0 });
}
