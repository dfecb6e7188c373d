// Attack (held): a generic kernel instantiated with a type that owns host
// memory; its values would cross to the device byte for byte. Every
// instance type must be `DeviceCopy`.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(String)]
pub fn take<T: Clone>(value: T) {
    let _ = value;
}

fn main() {}
