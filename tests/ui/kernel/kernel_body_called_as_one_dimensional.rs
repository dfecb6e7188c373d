// Attack: a kernel's body is a function generic over the entry shape; the
// instance for entry shape 1 (`ONE_DIMENSIONAL`) trusts that the launch is one-dimensional. Another kernel,
// launched with a two-dimensional grid, calls that instance directly, so the
// victim's `thread_index()` hands the same index to threads (x, 0) and
// (x, 1). The body needs the entry shape's token, which only the entry point
// can make (`unsafe`), so this does not compile.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn victim(mut out: DisjointSlice<u32>) {
    let i = thread_index();
    out.set(i, i.get() as u32);
}

#[kernel]
pub fn attacker(out: DisjointSlice<u32>) {
    victim::Kernel::body::<1>(out);
}

fn main() {}
