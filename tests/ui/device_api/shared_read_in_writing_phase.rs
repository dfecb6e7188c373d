// In the Writing phase a thread reads only its own slots: reading another
// thread's slot needs the Reading token.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn early_read(mut out: DisjointSlice<f32>, block: Block) {
    let tile = shared_array!(f32; 256);
    let mut w = block;
    tile.set_own(&mut w, 0, 1.0);
    out.set(thread_index(), tile.get(&w, 5));
}

fn main() {}
