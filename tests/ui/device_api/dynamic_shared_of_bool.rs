// Attack (held): dynamic shared memory starts with whatever bytes the block
// left there; as `bool` a slot nobody wrote could hold 2. Its element type
// must be valid for every bit pattern, as static arrays' are.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn flags(mut out: DisjointSlice<u32>, smem: DynamicShared<bool>, block: Block) {
    let r = block.sync();
    out.set(thread_index(), smem.get(&r, 0) as u32);
}

fn main() {}
