//! The simulator's thread-block clusters: the cluster's coordinates from
//! the block's and the launch's cluster shape, the cluster barrier (barrier
//! [`simulation::CLUSTER_BARRIER`], which the executor releases once every
//! block of the cluster is there) and the mapping of a shared address to a
//! peer block's, which the executor answers from the blocks of the cluster
//! it runs together.

use super::host::simulation;

/// The current thread's block index and the launch's cluster shape
/// (`[1, 1, 1]` outside a cluster launch, as `%cluster_nctaid` reads).
#[inline]
#[track_caller]
fn coordinates(function: &str) -> ([u32; 3], [u32; 3]) {
    simulation::with(|t| {
        match t {
        Some(t) => (t.block_idx, t.block.cluster_dim()),
        None => panic!(
            "gpu_device::{function} was called outside a kernel: it only runs inside a #[kernel] function launched on the GPU or the simulator"
        ),
    }
    })
}

/// The block's rank in its cluster (x fastest, as `%cluster_ctarank`).
#[inline]
pub(crate) fn block_rank() -> u32 {
    let [x, y, z] = block_index();
    let [cx, cy, _] = dim();
    x + cx * (y + cy * z)
}

/// The blocks of the cluster.
#[inline]
pub(crate) fn size() -> u32 {
    let [x, y, z] = dim();
    x * y * z
}

/// The block's index in its cluster.
#[inline]
pub(crate) fn block_index() -> [u32; 3] {
    let (block, cluster) = coordinates("Cluster::block_index");
    [0, 1, 2].map(|i| block[i] % cluster[i])
}

/// The cluster's shape.
#[inline]
pub(crate) fn dim() -> [u32; 3] {
    coordinates("Cluster::dim").1
}

/// The cluster's index in the grid of clusters.
#[inline]
pub(crate) fn cluster_index() -> [u32; 3] {
    let (block, cluster) = coordinates("Cluster::cluster_index");
    [0, 1, 2].map(|i| block[i] / cluster[i])
}

/// The grid's shape in clusters.
#[inline]
pub(crate) fn clusters() -> [u32; 3] {
    let cluster = dim();
    let grid = super::host::grid_dim();
    [0, 1, 2].map(|i| grid[i] / cluster[i])
}

/// Waits for every thread of every block of the cluster.
#[inline]
pub(crate) fn sync() {
    simulation::with(|t| {
        match t {
        Some(t) => t.block.barrier(t, simulation::CLUSTER_BARRIER),
        None => panic!(
            "gpu_device::Cluster::sync was called outside a kernel: it only runs inside a #[kernel] function launched on the GPU or the simulator"
        ),
    }
    })
}

/// The address in block `rank`'s shared memory of what `address` is in
/// this block's (the executor's answer; it fails the launch for an address
/// outside the block's shared memory or a rank outside the cluster).
///
/// # Safety
/// As the PTX side: `address` is in this block's shared memory and `rank`
/// is below the cluster's size.
#[inline]
pub(crate) unsafe fn map_shared_rank(address: *const u8, rank: u32) -> *const u8 {
    simulation::with(|t| match t {
        Some(t) => t.block.map_shared_rank(t, address, rank),
        None => panic!("gpu_device::Cluster's shared memory was used outside a kernel"),
    })
}

/// A number naming the shared array `address` lies in (and the byte), the
/// same in every block of the cluster (the executor's answer; the GPU's
/// `anchor` is not needed: the simulator names arrays by their symbols).
#[inline]
pub(crate) fn shared_identity(address: *const u8, anchor: *const u8) -> u64 {
    let _ = anchor;
    simulation::with(|t| match t {
        Some(t) => t.block.shared_identity(t, address),
        None => panic!("gpu_device::Cluster's shared memory was used outside a kernel"),
    })
}
