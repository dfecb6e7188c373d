// The overrides of the other macros are checked the same way, each error at
// its own span; a failed `embed_kernels!` still defines `KERNEL_MODULE`, so
// the kernel below adds no error.
use gpu_device::prelude::*;

gpu_device::embed_kernels!(unsafe(runtime_crate = "gpu runtime"));

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(unsafe(crate = "gpu_device"), krate = "gpu_device")]
#[repr(C)]
pub struct Params {
    pub scale: f32,
}

#[kernel]
pub fn tiles(mut out: DisjointSlice<f32>, block: Block) {
    let tile = shared_array!(f32; 32, device = "gpu_device");
    let _ = (tile, block);
    out.set(thread_index(), 1.0);
}

fn main() {}
