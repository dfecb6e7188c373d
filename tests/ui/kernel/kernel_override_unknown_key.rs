// An unknown option is an error at its key; `crate` is ambiguous for a
// kernel, which emits paths into two crates.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(crate = "gpu")]
pub fn ambiguous(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

#[kernel(f32, runtime = "gpu_runtime", u32)]
pub fn misnamed<T: DeviceCopy + Default>(mut out: DisjointSlice<T>) {
    out.set(thread_index(), T::default());
}

fn main() {}
