// Attack (held): a thread writes its witness to a kernel output, or into a
// struct passed by value, so that another launch (or the host) could hand
// it back to another thread. Witnesses are not `DeviceCopy`: neither an
// output of them nor a struct holding one can cross to or from a kernel.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Smuggled {
    index: ThreadIndex,
}

#[kernel]
pub fn leak(mut out: DisjointSlice<ThreadIndex>) {
    let i = thread_index();
    out.set(i, i);
}

fn main() {}
