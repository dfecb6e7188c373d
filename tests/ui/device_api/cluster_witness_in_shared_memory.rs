// A cluster witness cannot be handed to another thread, or another block of
// the cluster, through shared memory: shared elements must be Send (the
// witness points at its thread's record of the cluster's barrier pairs).
use gpu_device::prelude::*;
use gpu_device::Cluster;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(arch = "sm_90", block = 64, cluster = 2)]
pub fn share(mut out: DisjointSlice<u32>, block: Block, cluster: Cluster) {
    let slots = shared_array!(Cluster; 64);
    let mut w = block;
    slots.set_own(&mut w, 0, cluster);
    let r = w.sync();
    out.set(thread_index(), slots.get(&r, 0).block_rank());
}

fn main() {}
