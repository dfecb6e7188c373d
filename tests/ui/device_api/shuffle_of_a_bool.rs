// Attack (held): a shuffle moves 32-bit words between lanes; a `bool` or a
// struct would come back from whatever bits the other lane held (an
// exited lane's are unspecified). Only integers and floats shuffle.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };
use gpu_device::warp::{shfl_sync, FULL_MASK};

#[kernel]
pub fn vote(mut out: DisjointSlice<u32>) {
    let first = shfl_sync(FULL_MASK, true, 0);
    out.set(thread_index(), first as u32);
}

fn main() {}
