use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

// `len(a >= b)` lets the device take `a.len() >= b`'s element count as
// known; the launcher checks it. Only an input slice can be the left side
// (an output's length is not the kernel's to assume about), and both names
// must be parameters with an element count.
#[kernel(len(out >= input))]
pub fn output_on_the_left(input: &[f32], mut out: DisjointSlice<f32>) {
    out.set(thread_index(), input[0]);
}

#[kernel(len(input >= scale))]
pub fn scalar_on_the_right(input: &[f32], scale: f32, mut out: DisjointSlice<f32>) {
    out.set(thread_index(), input[0] * scale);
}

#[kernel(len(inptu >= out))]
pub fn misspelt(input: &[f32], mut out: DisjointSlice<f32>) {
    out.set(thread_index(), input[0]);
}

#[kernel(len(input >= out, out))]
pub fn two_relations_in_one(input: &[f32], mut out: DisjointSlice<f32>) {
    out.set(thread_index(), input[0]);
}

fn main() {}
