// A kernel without `#[kernel(cooperative)]` cannot make its own `Grid`
// token: the entry points' constructor is `unsafe` (its contract: a
// cooperative launch), and the token's fields are private.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn by_the_entry_constructor(mut out: DisjointSlice<u32>) {
    let grid = Grid::for_kernel_entry();
    grid.sync();
    out.set(thread_index(), 1);
}

fn main() {}
