// A path override is a path in a string literal: anything else is an error
// at the value, and the kernel's launcher still exists (no second error at
// the launch).
use gpu_device::prelude::*;
use gpu_runtime::{launch, DeviceBuffer, Stream};
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(unsafe(runtime_crate = "gpu-runtime"))]
pub fn hyphen(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

#[kernel(unsafe(device_crate = gpu_device))]
pub fn unquoted(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

#[kernel(module = "Vec<u8>")]
pub fn generic_path(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

fn run(out: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(hyphen[1, 32, s](&mut *out))?;
    launch!(unquoted[1, 32, s](&mut *out))?;
    launch!(generic_path[1, 32, s](out))
}

fn main() {}
