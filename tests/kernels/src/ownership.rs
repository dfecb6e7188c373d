//! Kernels of the ownership maps (`gpu_device::ownership`, `leader`),
//! for `tests/suite/device_api/ownership.rs`: leaders in global and shared memory, the
//! strided and blocked 1-D maps, one row per block, register tiles, the
//! halo form, shared arrays written in the Reading phase; and the "count
//! owners" kernels, in which every thread adds 1 to each element its map
//! gives it, so that an element owned twice ends at 2 and one owned by no
//! thread at 0.

use gpu_device::ownership::{
    Axis, Blocked, ByBlock, ByWarp, DisjointMatrix, GridStride, Halo, Items, RowItems, RowPerBlock,
    RowsFirst, Striped, TileItems, Tiles,
};
use gpu_device::prelude::*;
use gpu_device::shared::reduce::block_sum;
use gpu_device::warp::{shfl_xor_sync, FULL_MASK};

/// `sums[b]` gets the sum of block `b`'s inputs (`x[grid_1d()]`), written
/// by the block's leader: no `unsafe`, any grid shape (the output is
/// indexed by the block's linear rank).
#[kernel]
pub fn block_sums_by_leader(x: &[f32], mut sums: DisjointSlice<f32, ByBlock>, block: Block) {
    let g = gpu_device::leader::block_rank() * block_size() + thread_rank();
    let v = x.get(g).copied().unwrap_or(0.0);
    let (_r, total) = block_sum(block, v);
    if let Some(leader) = block_leader() {
        sums.set(leader, total);
    }
}

/// The sum of this thread's warp's values `x[linear index]` (full warps).
fn warp_total(x: &[u32]) -> u32 {
    let g = gpu_device::leader::block_rank() * block_size() + thread_rank();
    let mut v = x.get(g).copied().unwrap_or(0);
    let mut lanes = 16;
    while lanes > 0 {
        v = v.wrapping_add(shfl_xor_sync(FULL_MASK, v, lanes));
        lanes /= 2;
    }
    v
}

/// `sums[w]` gets the sum of warp `w`'s values, written by lane 0.
#[kernel]
pub fn warp_sums_by_lane_0(x: &[u32], mut sums: DisjointSlice<u32, ByWarp<0>>) {
    let v = warp_total(x);
    if let Some(leader) = warp_leader::<0>() {
        sums.set(leader, v);
    }
}

/// `sums[w]` gets the sum of warp `w`'s values, written by lane 31.
#[kernel]
pub fn warp_sums_by_lane_31(x: &[u32], mut sums: DisjointSlice<u32, ByWarp<31>>) {
    let v = warp_total(x);
    if let Some(leader) = warp_leader::<31>() {
        sums.set(leader, v);
    }
}

/// The block sum through a per-warp shared array: lane 0 of each warp
/// writes its warp's total to the warp's slot (no `unsafe`, one barrier),
/// then the block's leader adds the slots into `sums[b]`.
#[kernel]
pub fn block_sums_by_warp_slots(x: &[u32], mut sums: DisjointSlice<u32, ByBlock>, block: Block) {
    let slots = shared_array!(u32; 32, map = ByWarp<0>);
    let v = warp_total(x);
    let mut w = block;
    if let Some(leader) = warp_leader::<0>() {
        slots.set_by(&mut w, leader, v);
    }
    let r = w.sync();
    if let Some(leader) = block_leader() {
        let warps = gpu_device::leader::warps_per_block();
        let total = slots.as_array(&r)[..warps]
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        sums.set(leader, total);
    }
}

/// A block's leader writes a value to a per-block shared array (every
/// slot is its own), which all threads then read: `out[g] = 10 * b + t %
/// 3` through the leader's table of three.
#[kernel]
pub fn broadcast_by_block_leader(mut out: DisjointSlice<u32, GridStride>, block: Block) {
    let table = shared_array!(u32; 3, map = ByBlock);
    let mut w = block;
    let b = gpu_device::leader::block_rank() as u32;
    if let Some(leader) = block_leader() {
        let all = table.own_all(&mut w, leader);
        *all = [10 * b, 10 * b + 1, 10 * b + 2];
    }
    let r = w.sync();
    let t = thread_rank();
    let mine = Items::<GridStride>::mine();
    if let Some(i) = mine.get(0) {
        out.set(i, table.get(&r, t % 3));
    }
}

/// Every thread adds 1 to each element of its grid-stride loop.
#[kernel]
pub fn count_grid_stride(mut out: DisjointSlice<u32, GridStride>) {
    let mine = Items::<GridStride>::mine();
    for i in mine.below(out.len()) {
        if let Some(c) = out.get_mut(i) {
            *c += 1;
        }
    }
}

/// Every thread adds 1 to each of its `K` blocked elements.
#[kernel(1, 3, 4, 16)]
pub fn count_blocked<const K: usize>(mut out: DisjointSlice<u32, Blocked<K>>) {
    let mine = Items::<Blocked<K>>::mine();
    for i in mine.below(out.len()) {
        if let Some(c) = out.get_mut(i) {
            *c += 1;
        }
    }
}

/// Every thread adds 1 to each of its `K` striped elements.
#[kernel(1, 3, 4)]
pub fn count_striped<const K: usize>(mut out: DisjointSlice<u32, Striped<K>>) {
    let mine = Items::<Striped<K>>::mine();
    for i in mine.below(out.len()) {
        if let Some(c) = out.get_mut(i) {
            *c += 1;
        }
    }
}

/// Every block's leader and every warp's lane-0 leader add 1 to their
/// element.
#[kernel]
pub fn count_leaders(
    mut blocks: DisjointSlice<u32, ByBlock>,
    mut warps: DisjointSlice<u32, ByWarp<0>>,
) {
    if let Some(leader) = block_leader() {
        if let Some(c) = blocks.get_mut(leader) {
            *c += 1;
        }
    }
    if let Some(leader) = warp_leader::<0>() {
        if let Some(c) = warps.get_mut(leader) {
            *c += 1;
        }
    }
}

/// Writes blocked runs of 16 consecutive `u32` (the scan's tile shape)
/// with `set_run`: element `e` gets `e + 1`, 16-byte stores where whole.
#[kernel]
pub fn blocked_runs_of_16(mut out: DisjointSlice<u32, Blocked<16>>) {
    let mine = Items::<Blocked<16>>::mine();
    let first = mine.first() as u32;
    out.set_run(&mine, core::array::from_fn(|k| first + k as u32 + 1));
}

/// Every thread writes `1 + row` to each element of its row's runs (one
/// row per block, runs of `RUN` columns by block stride); the test checks
/// that every element got its row's mark.
#[kernel(1, 4)]
pub fn mark_rows<const RUN: usize>(mut out: DisjointMatrix<u32, RowPerBlock<RUN>>) {
    let mine = RowItems::<RUN>::mine();
    let cols = out.cols();
    let mark = 1 + mine.row() as u32;
    let mut j = 0;
    while mine.column(j).is_some_and(|c| c < cols) {
        out.set_run(&mine, j, [mark; RUN]);
        j += 1;
    }
}

/// The SGEMM 8 x 8 register tile map of a 128 x 128 block tile: 256
/// threads, rows `{4 ty, 64 + 4 ty} + 0..4`, columns likewise.
pub type Tile8x8 = Tiles<Axis<16, 4, 2>, Axis<16, 4, 2>>;

/// Every thread writes its 8 x 8 register tile, element `(r, c)` getting
/// `r * 100_000 + c`, in runs of four (16-byte stores where aligned).
#[kernel(block = 256)]
pub fn mark_tiles_8x8(mut out: DisjointMatrix<u32, Tile8x8>) {
    let tile = TileItems::<Tile8x8>::mine();
    unroll!(for i in 0..8 {
        unroll!(for r in 0..2 {
            if let (Some(row), Some(col)) = (tile.row(i), tile.col(4 * r)) {
                let v = (row * 100_000 + col) as u32;
                out.set_run(&tile, i, r, [v, v + 1, v + 2, v + 3]);
            }
        });
    });
}

/// The same map without a declared block: the launcher refuses blocks of
/// any size but 256.
#[kernel]
pub fn mark_tiles_8x8_any_block(mut out: DisjointMatrix<u32, Tile8x8>) {
    let tile = TileItems::<Tile8x8>::mine();
    for i in 0..8 {
        for j in 0..8 {
            if let (Some(row), Some(col)) = (tile.row(i), tile.col(j)) {
                out.set(&tile, i, j, (row * 100_000 + col) as u32);
            }
        }
    }
}

/// A 1-D stencil of radius 2 through the halo form of a shared span:
/// `out[i] = x[i - 2] + x[i - 1] + x[i] + x[i + 1] + x[i + 2]` (0 outside),
/// blocks of 128 threads.
#[kernel(block = 128)]
pub fn halo_sum5(x: &[f32], mut out: DisjointSlice<f32>, block: Block) {
    let span = shared_array!(f32; 132, map = Halo<2>);
    let i = thread_index();
    let base = (block_idx().x as usize * 128).wrapping_sub(2);
    let mut w = block;
    span.fill(&mut w, |s| {
        x.get(base.wrapping_add(s)).copied().unwrap_or(0.0)
    });
    let r = w.sync();
    let t = thread_rank();
    let window = span.window::<5>(&r, t);
    out.set(i, window[0] + window[1] + window[2] + window[3] + window[4]);
}

/// Transposes 64 x 16 tiles through a shared array written in register
/// tiles in rank-by-row order (SGEMM's `As[k][m]`): block `b` reads rows
/// `64 b ..` of `a` (`rows x 16`, row-major) and writes the transposed tile
/// to `out` (`16 x rows`, row-major) one column of the tile per thread.
#[kernel(block = 256)]
pub fn transpose_by_tiles(
    a: &[f32],
    rows: u32,
    mut out: DisjointMatrix<f32, Tiles<Axis<16>, Axis<16, 4>>>,
    block: Block,
) {
    // As[k][m]: thread t owns k = 4 (t % 4) .. + 4 of column m = t / 4.
    let tile = shared_array!(f32; 16, 64, map = Tiles<Axis<4, 4>, Axis<64>, RowsFirst>);
    let t = thread_rank();
    let (m, k0) = (t / 4, 4 * (t % 4));
    let row = block_idx().x as usize * 64 + m;
    let quad: [f32; 4] = if row < rows as usize {
        gpu_device::vector::read_run_or(a, row * 16 + k0, 0.0)
    } else {
        [0.0; 4]
    };
    let mut w = block;
    unroll!(for i in 0..4 {
        tile.set(&mut w, i, 0, quad[i]);
    });
    let r = w.sync();
    // Out tile: 16 rows (k) x 64 columns (m) of block `b`'s columns;
    // thread t owns row t / 16, columns 4 (t % 16) .. + 4.
    let mine = TileItems::<Tiles<Axis<16>, Axis<16, 4>>>::mine();
    let (k, q) = (t / 16, t % 16);
    let v: [f32; 4] = tile.row_vector::<4>(&r, k, q);
    out.set_run(&mine, 0, 0, v);
}

/// `ping_pong` with the loop body written once: a `DoubleBuffer2d`
/// (`buffers = 2`, thread `t` owning column `t` of each 1 x 64 matrix) and
/// an `Alternating` token. After the loop `into_block` returns the typed
/// Writing token (one more barrier after an odd number of steps); with it
/// each thread writes slot `t` of another array, `7 t`, which its
/// neighbour reads after a barrier and adds to `out`.
#[kernel(block = 64)]
pub fn ping_pong_alternating(steps: u32, mut out: DisjointSlice<u32>, block: Block) {
    use gpu_device::ownership::{Axis, Tiles};
    let buffers = shared_array!(u32; 1, 64, map = Tiles<Axis<1>, Axis<64>>, buffers = 2);
    let after = shared_array!(u32; 64);
    let i = thread_index();
    let t = thread_rank();
    let next = (t + 1) % 64;
    let mut s = block.alternate();
    buffers.set(&mut s, 0, 0, t as u32);
    let mut acc = 0u32;
    let mut step = 1;
    while step <= steps {
        // Read the matrix written last step, write the other.
        s.sync();
        let run: [u32; 4] = buffers.row_vector(&s, 0, next / 4);
        acc = acc.wrapping_add(run[next % 4]);
        buffers.set(&mut s, 0, 0, step * 1000 + t as u32);
        step += 1;
    }
    let mut w = s.into_block();
    after.set_own(&mut w, 0, 7 * t as u32);
    let r = w.sync();
    out.set(i, acc.wrapping_add(after.get(&r, next)));
}

/// A double buffer with one barrier per step: `steps` rounds, each reading
/// the buffer written in the previous round and writing the other. Round
/// `s` writes `s * 1000 + t` to slot `t`; each thread reads slot `(t + 1)
/// % B` of the previous round and accumulates it. `out[g]` gets the sum.
#[kernel(block = 64)]
pub fn ping_pong(steps: u32, mut out: DisjointSlice<u32>, block: Block) {
    let even = shared_array!(u32; 64);
    let odd = shared_array!(u32; 64, written_in = Reading);
    let i = thread_index();
    let t = thread_rank();
    let next = (t + 1) % 64;
    let mut w = block;
    even.set_own(&mut w, 0, t as u32);
    let mut acc = 0u32;
    let mut s = 1;
    loop {
        // Reading: read `even` (written last round), write `odd`.
        let mut r = w.sync();
        if s > steps {
            break;
        }
        acc = acc.wrapping_add(even.get(&r, next));
        odd.set_own(&mut r, 0, s * 1000 + t as u32);
        s += 1;
        // Writing: read `odd`, write `even`.
        w = r.sync();
        if s > steps {
            break;
        }
        acc = acc.wrapping_add(odd.get(&w, next));
        even.set_own(&mut w, 0, s * 1000 + t as u32);
        s += 1;
    }
    out.set(i, acc);
}
