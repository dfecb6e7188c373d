// A reference into shared memory borrows the token, so it cannot outlive
// the phase: `sync` moves the token.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn keep(mut out: DisjointSlice<f32>, block: Block) {
    let tile = shared_array!(f32; 256);
    let mut w = block;
    tile.set_own(&mut w, 0, 1.0);
    let r = w.sync();
    let first = tile.get_ref(&r, 0);
    let mut w = r.sync();
    tile.set_own(&mut w, 0, 2.0);
    out.set(thread_index(), *first);
}

fn main() {}
