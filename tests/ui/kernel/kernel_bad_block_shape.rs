use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// 64 x 32 = 2048 threads: no GPU runs such a block, and the launcher could
// never launch it; the declaration is a compile error.
#[kernel(block = (64, 32))]
pub fn too_large(mut out: DisjointSlice2d<f32>) {
    out.set(thread_index_2d(), 1.0);
}

// An extent of zero.
#[kernel(block = (32, 0))]
pub fn empty_block(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

fn main() {}
