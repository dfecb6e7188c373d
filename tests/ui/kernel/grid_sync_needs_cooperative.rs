// Grid sync needs a cooperative launch (every block resident at once): a
// kernel without `#[kernel(cooperative)]` cannot take a `Grid` (and no other
// code can make one: grid_token_made_in_a_kernel.rs).
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn two_phases(mut out: DisjointSlice<u32>, grid: Grid) {
    grid.sync();
    out.set(thread_index(), 1);
}

fn main() {}
