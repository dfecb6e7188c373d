use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// No result: an error at the argument list.
#[vectorize]
pub fn nothing_back(a: f32) {
    let _ = a;
}

// No argument at all.
#[vectorize]
pub fn no_arguments() -> f32 {
    1.0
}

fn main() {}
