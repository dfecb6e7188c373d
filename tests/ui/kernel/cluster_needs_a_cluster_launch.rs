// Distributed shared memory and cluster barriers need a cluster launch (the
// blocks of a cluster resident at once, on sm_90): a kernel that declares no
// `cluster = ...` cannot take a `Cluster`.
use gpu_device::prelude::*;
use gpu_device::Cluster;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(arch = "sm_90")]
pub fn ranks(mut out: DisjointSlice<u32>, cluster: Cluster) {
    out.set(thread_index(), cluster.block_rank());
}

fn main() {}
