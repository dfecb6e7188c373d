// After `sync()` the token is in the Reading phase: no thread may write.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn late_write(block: Block) {
    let tile = shared_array!(f32; 256);
    let mut w = block;
    tile.set_own(&mut w, 0, 1.0);
    let mut r = w.sync();
    tile.set_own(&mut r, 0, 2.0);
}

fn main() {}
