// The attack on the path overrides: a module that re-exports all of
// `gpu_device` but replaces one item the generated code calls in an `unsafe`
// block (`Block::for_kernel_entry`, here by `unreachable_unchecked`), all in
// safe code. No check of the path can see it (any item can be re-exported,
// in this crate or another), so a crate path is the user's promise, written
// `unsafe(device_crate = "...")`: without it, the override is an error, and
// so are the same overrides of the other macros.
use gpu_device::prelude::*;

#[allow(non_snake_case, unused_imports)]
mod fake {
    pub use gpu_device::*;
    pub mod Block {
        pub use core::hint::unreachable_unchecked as for_kernel_entry;
    }
}

#[kernel(device_crate = "crate::fake")]
pub fn undefined(mut out: DisjointSlice<f32>, block: Block) {
    let _ = block;
    out.set(thread_index(), 1.0);
}

#[kernel(runtime_crate = "gpu_runtime")]
pub fn runtime_renamed(mut out: DisjointSlice<f32>) {
    out.set(thread_index(), 1.0);
}

// (With an error, it defines a stand-in `KERNEL_MODULE` with no PTX.)
gpu_device::embed_kernels!(runtime_crate = "gpu_runtime");

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "crate::fake")]
#[repr(C)]
pub struct Params {
    pub scale: f32,
}

#[kernel]
pub fn tiles(mut out: DisjointSlice<f32>, block: Block) {
    let tile = shared_array!(f32; 32, device_crate = "crate::fake");
    let _ = (tile, block);
    out.set(thread_index(), 1.0);
}

fn main() {}
