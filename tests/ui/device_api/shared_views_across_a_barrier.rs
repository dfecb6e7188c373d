// Attack (held): a dynamic array's whole slice, a 2-D tile's row and a
// thread's own slot are taken in one phase and used after the barrier that
// ends it, when other threads write them. Each borrows the phase token,
// which `sync` moves.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn keep(mut out: DisjointSlice<f32>, smem: DynamicShared<f32>, block: Block) {
    let tile = shared_array!(f32; 16, 16);
    let mut w = block;
    let mine = smem.own_mut(&mut w, 0);
    let r = w.sync();
    *mine = 1.0;
    let all = smem.as_slice(&r);
    let row = tile.row(&r, 0);
    let w = r.sync();
    let _ = w;
    out.set(thread_index(), all[0] + row[0]);
}

fn main() {}
