use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// A reduction of three arguments, and one whose argument is not the result type.
#[vectorize(reduce)]
pub fn three(a: f32, b: f32, c: f32) -> f32 {
    a + b + c
}

#[vectorize(reduce)]
pub fn mixed(a: f32, b: f64) -> f32 {
    a + b as f32
}

// An unknown option, and a generic function.
#[vectorize(reduced)]
pub fn typo(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize]
pub fn generic<T: Copy>(a: T) -> T {
    a
}

fn main() {}
