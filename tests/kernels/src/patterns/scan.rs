//! Exclusive scan of `u32` in three kernels, scan-then-propagate: the twins
//! `scan_tiles_local`, `scan_tile_sums` and `add_tile_offsets` of
//! `benches/cuda/patterns/scan.cuh` (the issue's "block scan + block sums +
//! add back"). The single-pass scan is `gpu_ops::scan` (decoupled
//! look-back).
//!
//! Tiles of 4096 for 256 threads: thread `t` owns the 16 consecutive items
//! `16 t ..` of its block's tile (`Blocked<16>`: four 16-byte loads and
//! stores where whole), scans them in registers, the block scans the
//! threads' totals (`block_exclusive_sum`: warp shuffles, one round through
//! the collectives' scratch, one barrier), and the block's leader writes
//! the tile's total (`ByBlock`). One block scans the tile sums in place;
//! then every tile's items get their tile's prefix, read and written in
//! place by their owner (`run_or`, `set_run`).

use gpu_device::ownership::{Blocked, ByBlock, Items};
use gpu_device::prelude::*;
use gpu_device::shared::block_exclusive_sum;
use gpu_device::vector::read_run_or;

/// Threads of the tile kernels.
pub const SCAN_THREADS: usize = 256;
/// Items a thread owns in a tile.
pub const SCAN_ITEMS: usize = 16;
/// Items per tile.
pub const SCAN_TILE: usize = SCAN_THREADS * SCAN_ITEMS;
/// Threads of the one block that scans the tile sums.
pub const SUMS_THREADS: usize = 1024;
/// Tile sums a thread of that block owns (a multiple of 4: 16-byte runs).
pub const SUMS_ITEMS: usize = 20;
/// The most tile sums [`scan_tile_sums`] scans: 20480 tiles, 83,886,080
/// items.
pub const SUMS_CAPACITY: usize = SUMS_THREADS * SUMS_ITEMS;

/// The exclusive scan of `v` in place; returns the total (wrapping).
#[inline(always)]
fn thread_exclusive_scan<const N: usize>(v: &mut [u32; N]) -> u32 {
    let mut running = 0u32;
    unroll!(for i in 0..N {
        let x = v[i];
        v[i] = running;
        running = running.wrapping_add(x);
    });
    running
}

/// Tile `b`'s exclusive scan on its own into `out`, and its total into
/// `tile_sums[b]`. One block of 256 per tile.
#[kernel(block = (256))]
pub fn scan_tiles_local(
    input: &[u32],
    mut out: DisjointSlice<u32, Blocked<16>>,
    mut tile_sums: DisjointSlice<u32, ByBlock>,
    block: Block,
) {
    let mine = Items::<Blocked<SCAN_ITEMS>>::mine();
    let mut v: [u32; SCAN_ITEMS] = read_run_or(input, mine.first(), 0);
    let total = thread_exclusive_scan(&mut v);
    let (_r, scan) = block_exclusive_sum(block, total);
    unroll!(for i in 0..SCAN_ITEMS {
        v[i] = v[i].wrapping_add(scan.value);
    });
    out.set_run(&mine, v);
    if let Some(leader) = block_leader() {
        tile_sums.set(leader, scan.total);
    }
}

#[cold]
#[inline(never)]
fn too_many_tile_sums(count: usize) -> ! {
    panic!("scan_tile_sums scans at most {SUMS_CAPACITY} tile sums in its one block; it was given {count}")
}

/// The exclusive scan of `sums` in place, by one block of 1024 threads,
/// each owning 20 consecutive sums. Launch one block; more sums than
/// [`SUMS_CAPACITY`], or more blocks, fail the launch.
#[kernel(block = (1024))]
pub fn scan_tile_sums(mut sums: DisjointSlice<u32, Blocked<20>>, block: Block) {
    if sums.len() > SUMS_CAPACITY || gpu_device::thread::grid_dim().x != 1 {
        too_many_tile_sums(sums.len());
    }
    let mine = Items::<Blocked<SUMS_ITEMS>>::mine();
    let mut v = sums.run_or(&mine, 0);
    let total = thread_exclusive_scan(&mut v);
    let (_r, scan) = block_exclusive_sum(block, total);
    unroll!(for i in 0..SUMS_ITEMS {
        v[i] = v[i].wrapping_add(scan.value);
    });
    sums.set_run(&mine, v);
}

/// Adds tile `b`'s prefix `tile_sums[b]` to each of its items of `out`, in
/// place. One block of 256 per tile.
#[kernel(block = (256))]
pub fn add_tile_offsets(mut out: DisjointSlice<u32, Blocked<16>>, tile_sums: &[u32]) {
    let mine = Items::<Blocked<SCAN_ITEMS>>::mine();
    let offset = tile_sums
        .get(gpu_device::leader::block_rank())
        .copied()
        .unwrap_or(0);
    let mut v = out.run_or(&mine, 0);
    unroll!(for i in 0..SCAN_ITEMS {
        v[i] = v[i].wrapping_add(offset);
    });
    out.set_run(&mine, v);
}
