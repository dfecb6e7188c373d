// Every bad parameter is reported in one compile, each at its own type.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn three(values: Vec<f32>, n: u32, out: &mut [f32], pointer: *const f32, mut fine: DisjointSlice<f32>) {
    fine.set(thread_index(), n as f32);
}

fn main() {}
