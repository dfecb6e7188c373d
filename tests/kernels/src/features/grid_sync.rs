//! Grid sync in a cooperative launch (`gpu_device::Grid`, Numba's
//! `cuda.cg.this_grid().sync()`).

use gpu_device::prelude::*;
use gpu_device::shared::block_sum;

/// Every element of `out` gets the sum of all of `input` (wrapping), in
/// two phases: each block adds its sum to `total[0]` (zero at the launch),
/// the grid syncs, then every thread reads the total. Without the grid
/// sync, a block could read the total before the others had added theirs.
#[kernel(cooperative)]
pub fn grid_total(
    input: &[u32],
    total: &[DeviceAtomic<u32>],
    mut out: DisjointSlice<u32>,
    block: Block,
    grid: Grid,
) {
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(0);
    let (_r, sum) = block_sum(block, v);
    if thread_rank() == 0 {
        total[0].fetch_add(sum);
    }
    grid.sync();
    let everything = total[0].load();
    out.set(i, everything);
}

/// Each thread writes `round` to its element of `marks` in each of `rounds`
/// rounds, a grid sync after each; in each round thread `g` reads the
/// element of thread `g + blockDim` (the next block's) and checks it holds
/// the round just ended, adding a failure to `wrong[0]` otherwise.
#[kernel(cooperative)]
pub fn grid_rounds(
    marks: &[DeviceAtomic<u32>],
    wrong: &[DeviceAtomic<u32>],
    rounds: u32,
    grid: Grid,
) {
    let g = grid_1d();
    let n = gridsize_1d();
    let neighbour = (g + block_size()) % n;
    for round in 1..=rounds {
        if let Some(mine) = marks.get(g) {
            mine.fetch_add(1);
        }
        grid.sync();
        if marks.get(neighbour).is_some_and(|m| m.load() != round) {
            wrong[0].fetch_add(1);
        }
        grid.sync();
    }
}

/// Block 1 returns before the grid sync that the others wait at (on a
/// GPU, the grid hangs; the simulator reports it).
#[kernel(cooperative)]
pub fn grid_sync_skipped_by_a_block(mut out: DisjointSlice<u32>, grid: Grid) {
    let i = thread_index();
    if block_idx().x == 1 {
        return;
    }
    grid.sync();
    out.set(i, 1);
}
