// Each option is given once: the second is an error at its key.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(module = "crate::KERNEL_MODULE", unsafe(device_crate = "gpu_device"), module = "crate::OTHER")]
pub fn twice(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

fn main() {}
