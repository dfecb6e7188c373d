use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// A reference argument, a slice and a raw pointer: each an error at its type.
#[vectorize]
pub fn by_reference(a: &f32, b: &[f32], c: *const f32) -> f32 {
    0.0
}

fn main() {}
