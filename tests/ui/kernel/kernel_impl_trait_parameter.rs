// Attack (held): `impl Trait` parameters would let a kernel take a type the
// macro cannot see (a reference, a host pointer); `#[kernel]` refuses them.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn anything(value: impl Copy, mut out: DisjointSlice<u32>) {
    let _ = value;
    out.set(thread_index(), 1);
}

fn main() {}
