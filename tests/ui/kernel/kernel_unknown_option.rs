use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(threads = 256)]
pub fn k(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

fn main() {}
