use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// An argument that is not DeviceCopy (a String is not even Copy): the error
// names the trait at the type.
#[vectorize]
pub fn lengths(a: String) -> usize {
    a.len()
}

fn main() {}
