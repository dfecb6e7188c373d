// Attack: two lanes of one warp both writing the warp's element, lane 0 by
// the output's map and lane 31 by its own leader witness. An output of
// `ByWarp<0>` takes the leaders of lane 0 alone: lane 31's is another type.
use gpu_device::ownership::ByWarp;
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn two_leaders(mut sums: DisjointSlice<u32, ByWarp<0>>) {
    if let Some(leader) = warp_leader::<0>() {
        sums.set(leader, 1);
    }
    if let Some(leader) = warp_leader::<31>() {
        sums.set(leader, 2);
    }
}

fn main() {}
