// Attack: the unchecked one-dimensional witness behind the `__1d` entry
// points is reachable by path. Called from safe code in a launch of shape
// (1, 2) x (32, 1), threads (x, 0) and (x, 1) would both hold index x and
// write the same element. Only the entry point can make the shape token
// that this witness needs (its constructor is `unsafe`), so this does not
// compile.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn forge(mut out: DisjointSlice<u32>) {
    let i = gpu_device::__private::EntryShape::<1>::thread_index();
    out.set(i, 1);
}

fn main() {}
