// Attack: a primitive's name can be shadowed by a type alias. A parameter
// spelled `u64` is taken for a scalar by the `#[kernel]` macro, but here it
// is `&'static mut [u32]`: every thread would get the same mutable slice of
// host memory. Scalars are checked to be `DeviceCopy` like every by-value
// parameter, so this does not compile.
#![allow(non_camel_case_types)]
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

type u64 = &'static mut [u32];

#[kernel]
pub fn alias(shared: u64) {
    shared[0] += 1;
}

fn main() {}
