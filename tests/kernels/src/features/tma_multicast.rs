//! TMA multicast (`TmaTileSlot::with_multicast`, sm_90): one copy of rank
//! 0's box lands in the tile of every block of the cluster; and the
//! misuses refused at run time (blocks not in the same scope).

use gpu_device::prelude::*;
use gpu_device::tma::TensorMap2d;
use gpu_device::Cluster;

/// Threads of the multicast kernels' blocks: one a box element (16 x 32).
pub const MULTICAST_THREADS: usize = 512;

/// Loads each block makes in [`tma_multicast`].
pub const MULTICAST_ROUNDS: usize = 4;

/// A while of arithmetic the compiler cannot drop, for a slow reader.
#[inline(always)]
fn dawdle(rounds: u32) -> u32 {
    let mut x = thread_rank() as u32;
    for i in 0..rounds {
        x = core::hint::black_box(x.wrapping_mul(1_664_525).wrapping_add(i));
    }
    x
}

/// Each block loads [`MULTICAST_ROUNDS`] boxes of 16 x 32 through one
/// multicast tile, rows `16 r` (every block must see them). The odd ranks
/// read each box
/// late (a copy landing before every block finished reading the last
/// would show there). Thread `t` writes element `(t / 32, t % 32)` of each
/// box it saw.
#[kernel(2, 4, arch = "sm_90", block = MULTICAST_THREADS, cluster = C)]
pub fn tma_multicast<const C: usize>(
    map: TensorMap2d<f32, 16, 32>,
    mut out: DisjointSlice<[f32; MULTICAST_ROUNDS]>,
    cluster: Cluster,
) {
    let t = thread_rank();
    let rank = cluster.block_rank();
    let mut seen = [0.0; MULTICAST_ROUNDS];
    gpu_device::tma_tile!(f32, 16, 32).with_multicast(&cluster, |tile| {
        for (r, slot) in seen.iter_mut().enumerate() {
            let row = 16 * r as i32;
            let landed = tile.load(&map, row, 0).wait();
            if rank % 2 == 1 && dawdle(2000) == 1 {
                *slot = -1.0;
            }
            *slot += landed.get(t / 32, t % 32);
        }
    });
    out.set(thread_index(), seen);
}

/// The cluster's two blocks out of step around a multicast scope, by
/// `mode` (what rank 1 does while rank 0 enters the scope): 0, it returns;
/// 1, it enters another tile's scope; 2, it syncs the cluster; 3, it makes
/// one load fewer; 6, one load more; 4, it asks for another
/// box (rows 16 lower); 5, it asks for the same box of `other`. Each is a
/// failed launch. Otherwise both load one box and write it.
#[kernel(arch = "sm_90", block = MULTICAST_THREADS, cluster = 2)]
pub fn tma_multicast_out_of_step(
    mode: u32,
    map: TensorMap2d<f32, 16, 32>,
    other: TensorMap2d<f32, 16, 32>,
    mut out: DisjointSlice<f32>,
    cluster: Cluster,
) {
    let t = thread_rank();
    let rank = cluster.block_rank();
    let load_once = |tile: &mut gpu_device::tma::TmaTile<'_, f32, 16, 32>| {
        tile.load(&map, 0, 0).wait().get(t / 32, t % 32)
    };
    // Modes 4 and 5: the same tile, rank 1 asking for another box.
    let (mine, row) = match (mode, rank) {
        (4, 1) => (&map, 16),
        (5, 1) => (&other, 0),
        _ => (&map, 0),
    };
    let v = match (mode, rank) {
        (0, 1) => return,
        (1, 1) => gpu_device::tma_tile!(f32, 16, 32).with_multicast(&cluster, load_once),
        (2, 1) => {
            cluster.sync();
            0.0
        }
        (3 | 6, r) => gpu_device::tma_tile!(f32, 16, 32).with_multicast(&cluster, |tile| {
            let first = load_once(tile);
            if (mode == 3 && r == 0) || (mode == 6 && r == 1) {
                first + load_once(tile)
            } else {
                first
            }
        }),
        _ => gpu_device::tma_tile!(f32, 16, 32).with_multicast(&cluster, |tile| {
            tile.load(mine, row, 0).wait().get(t / 32, t % 32)
        }),
    };
    out.set(thread_index(), v);
}

/// Rank 7 of a cluster of 8 panics (thread 0, right after its load armed
/// its `full` and arrived on rank 0's `ready`), while rank 0 may be copying
/// a 40 KiB box into every block: the launch fails with the panic, and no
/// block's memory is freed while a peer may still copy into it (the
/// simulator keeps a cluster's shared memory until all its blocks end).
#[kernel(arch = "sm_90", block = 32, cluster = 8)]
pub fn tma_multicast_peer_panics(
    map: TensorMap2d<f32, 160, 64>,
    mut out: DisjointSlice<f32>,
    cluster: Cluster,
) {
    let rank = cluster.block_rank();
    let v = gpu_device::tma_tile!(f32, 160, 64).with_multicast(&cluster, |tile| {
        let loading = tile.load(&map, 0, 0);
        if rank == 7 && thread_rank() == 0 {
            panic!("rank 7 fails after its load");
        }
        loading.wait().get(0, thread_rank())
    });
    out.set(thread_index(), v);
}
