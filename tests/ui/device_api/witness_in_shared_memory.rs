// A witness cannot be handed to another thread through shared memory:
// shared elements must be Send.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn share(mut out: DisjointSlice<u32>, block: Block) {
    let slots = shared_array!(ThreadIndex; 256);
    let mut w = block;
    slots.set_own(&mut w, 0, thread_index());
    let r = w.sync();
    out.set(slots.get(&r, 0), 1);
}

fn main() {}
