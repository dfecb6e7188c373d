// One token per thread: it is neither Clone nor Copy.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn twice(block: Block) {
    let other = block.clone();
    let _ = (other, block);
}

fn main() {}
