// Each output accepts one witness: a 2-D witness does not index a 1-D slice,
// and a 1-D one does not index a matrix.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn mixed(mut flat: DisjointSlice<f32>, mut matrix: DisjointSlice2d<f32>) {
    flat.set(thread_index_2d(), 1.0);
    matrix.set(thread_index(), 1.0);
}

fn main() {}
