use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy)]
pub struct Params {
    pub scale: f32,
}

#[kernel]
pub fn apply(params: Params, out: DisjointSlice<f32>) {}

fn main() {}
