// `unsafe(...)` holds one option naming a crate: the module needs none (the
// static it names is an `EmbeddedModule`, which only `unsafe` code makes),
// and an empty `unsafe()` or one holding two options is an error at its
// tokens.
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(unsafe(module = "crate::KERNEL_MODULE"))]
pub fn module_is_not_unsafe(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

#[kernel(unsafe())]
pub fn empty(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

#[kernel(unsafe(device_crate = "gpu_device", runtime_crate = "gpu_runtime"))]
pub fn two_in_one(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

fn main() {}
