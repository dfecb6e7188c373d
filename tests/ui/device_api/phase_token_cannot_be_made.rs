// Only the entry point makes a token: its constructor is unsafe.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn forge(block: Block) {
    let made = gpu_device::Block::for_kernel_entry();
    let _ = (made, block);
}

fn main() {}
