use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// A reduction of a type a block cannot reduce (warp shuffles move 32- and
// 64-bit values): an error at the type.
#[vectorize(reduce)]
pub fn bytes(a: u8, b: u8) -> u8 {
    a.wrapping_add(b)
}

fn main() {}
