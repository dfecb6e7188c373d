// Two dynamic arrays would view the same bytes as two types.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn two_views(a: DynamicShared<f32>, b: DynamicShared<u64>) {}

fn main() {}
