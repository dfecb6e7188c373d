// A warp leader of lane 32: a warp has lanes 0 to 31, so no thread would
// ever lead, and every write through it would silently never happen. The
// lane is checked when the kernel is built.
use gpu_device::ownership::ByWarp;
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn lane_32(mut sums: DisjointSlice<u32, ByWarp<32>>) {
    if let Some(leader) = warp_leader::<32>() {
        sums.set(leader, 1);
    }
}

fn main() {}
