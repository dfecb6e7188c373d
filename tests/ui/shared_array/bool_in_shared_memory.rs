// Shared memory starts uninitialised: only types valid for every bit
// pattern may live there, and bool is not one.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn flags(block: Block) {
    let flags = shared_array!(bool; 32);
    let _ = (flags, block);
}

fn main() {}
