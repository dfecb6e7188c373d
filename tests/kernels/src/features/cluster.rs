//! Thread-block clusters (`#[kernel(cluster = ...)]`, a `Cluster`
//! parameter, sm_90): each block's coordinates in its cluster, the cluster
//! barrier ordering writes across the cluster's blocks, and distributed
//! shared memory through `Cluster::exchange`; and the misuses the API
//! refuses at run time (a rank outside the cluster, blocks out of step).

use gpu_device::prelude::*;
use gpu_device::{Cluster, DeviceAtomic};

/// The threads of each block of the cluster kernels.
pub const CLUSTER_BLOCK: usize = 64;

/// What each thread of a cluster kernel saw: its block's rank and the
/// cluster's size, its block's index in the cluster and the cluster's
/// shape, its cluster's index and the grid's shape in clusters, and what
/// it read in the exchange: slot `(t + 1) % B` of the next block's array
/// (rank `(rank + 1) % size`), which that block's thread `(t + 1) % B`
/// wrote as `1000 * rank + slot`.
pub type Seen = [u32; 14];

/// The body of the cluster kernels (see [`Seen`]).
#[inline(always)]
fn cluster_body(cluster: Cluster, block: Block) -> Seen {
    let slots = shared_array!(u32; CLUSTER_BLOCK);
    let rank = cluster.block_rank();
    let size = cluster.size();
    let t = block.thread_rank();
    let mut w = block;
    let next = (rank + 1) % size;
    let got = cluster.exchange(
        &mut w,
        &slots,
        |slot| 1000 * rank + slot as u32,
        |peers| peers.get(next, (t + 1) % CLUSTER_BLOCK),
    );
    let (b, d) = (cluster.block_index(), cluster.dim());
    let (c, n) = (cluster.cluster_index(), cluster.clusters());
    [
        rank, size, b.x, b.y, b.z, d.x, d.y, d.z, c.x, c.y, c.z, n.x, n.y, got,
    ]
}

/// [`Seen`] for clusters of `C` blocks along x (one-dimensional grids).
#[kernel(2, 4, 8, arch = "sm_90", block = CLUSTER_BLOCK, cluster = C)]
pub fn cluster_ring<const C: usize>(mut out: DisjointSlice<Seen>, block: Block, cluster: Cluster) {
    let seen = cluster_body(cluster, block);
    out.set(thread_index(), seen);
}

/// [`Seen`] for clusters of 2 x 2 blocks (two-dimensional grids of
/// one-dimensional blocks: row `blockIdx.y`, column the global x).
#[kernel(arch = "sm_90", block = CLUSTER_BLOCK, cluster = (2, 2, 1))]
pub fn cluster_square(mut out: DisjointSlice2d<Seen>, block: Block, cluster: Cluster) {
    let seen = cluster_body(cluster, block);
    out.set(thread_index_2d(), seen);
}

/// Rounds of [`cluster_counts`].
pub const CLUSTER_ROUNDS: u32 = 4;

/// Each round, every thread adds 1 to its cluster's counter, syncs the
/// cluster, and reads the counter: after round `r`'s sync every thread of
/// the cluster has added `r + 1` times and none `r + 2` times (that needs
/// this thread past the next sync). Writes 1 where every round held, else
/// 0. `counters`: one per cluster, zero.
#[kernel(arch = "sm_90", cluster = 2)]
pub fn cluster_counts(
    counters: &[DeviceAtomic<u32>],
    mut out: DisjointSlice<u32>,
    cluster: Cluster,
) {
    let counter = &counters[(block_idx().x / cluster.size()) as usize];
    let threads = cluster.size() * block_size() as u32;
    let mut ok = true;
    for round in 0..CLUSTER_ROUNDS {
        counter.fetch_add(1);
        cluster.sync();
        let seen = counter.load();
        ok &= threads * (round + 1) <= seen && seen < threads * (round + 2);
        cluster.sync();
    }
    out.set(thread_index(), ok as u32);
}

/// The attack: a read of rank `rank` of a cluster of 2 in an exchange,
/// which must fail naming the rank when it is outside the cluster.
#[kernel(arch = "sm_90", block = CLUSTER_BLOCK, cluster = 2)]
pub fn cluster_rank_out_of_range(
    rank: u32,
    mut out: DisjointSlice<u32>,
    block: Block,
    cluster: Cluster,
) {
    let slots = shared_array!(u32; CLUSTER_BLOCK);
    let mut w = block;
    let got = cluster.exchange(
        &mut w,
        &slots,
        |slot| slot as u32,
        |peers| peers.get(rank, 0),
    );
    out.set(thread_index(), got);
}

/// The cluster's blocks out of step, by `mode` (what ranks 0 and 1 do):
/// 0, rank 0 syncs then exchanges while rank 1 exchanges then syncs; 1,
/// they exchange different arrays; 2, rank 0 returns at once while rank 1
/// exchanges; 3, rank 0 returns at once while rank 1 syncs, then
/// exchanges. Each must fail the launch naming rank 0 (never a read of a
/// slot being written, never written, or of a block that has exited).
/// 4, rank 0 returns at once while rank 1 syncs: nothing wrong (rank 1's
/// threads write 7). 5, rank 0 syncs inside the exchange's `read`: must
/// fail. Otherwise both exchange `a` (each thread writes what
/// it read: the next block's slot).
#[kernel(arch = "sm_90", block = CLUSTER_BLOCK, cluster = 2)]
pub fn cluster_out_of_step(mode: u32, mut out: DisjointSlice<u32>, block: Block, cluster: Cluster) {
    let a = shared_array!(u32; CLUSTER_BLOCK);
    let b = shared_array!(u32; CLUSTER_BLOCK);
    let rank = cluster.block_rank();
    let t = block.thread_rank();
    let mut w = block;
    let next = (rank + 1) % cluster.size();
    let fill = |slot: usize| 1000 * rank + slot as u32;
    let got = match (mode, rank) {
        (0, 0) => {
            cluster.sync();
            cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t))
        }
        (0, _) => {
            let got = cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t));
            cluster.sync();
            got
        }
        (1, 0) => cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t)),
        (1, _) => cluster.exchange(&mut w, &b, fill, |peers| peers.get(next, t)),
        (2..=4, 0) => return,
        (2, _) => cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t)),
        (3, _) => {
            cluster.sync();
            cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t))
        }
        (4, _) => {
            cluster.sync();
            7
        }
        // 5: a sync nested in an exchange's `read` (in block 0), whose
        // barriers would fall between the exchange's two.
        (5, _) => cluster.exchange(&mut w, &a, fill, |peers| {
            if rank == 0 {
                cluster.sync();
            }
            peers.get(next, t)
        }),
        _ => cluster.exchange(&mut w, &a, fill, |peers| peers.get(next, t)),
    };
    out.set(thread_index(), got);
}

/// A kernel that declares no cluster shape (for the refusal of a cluster
/// launch of it): writes 1.
#[kernel]
pub fn not_a_cluster_kernel(mut out: DisjointSlice<u32>) {
    out.set(thread_index(), 1);
}
