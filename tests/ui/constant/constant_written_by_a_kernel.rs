// A constant is read by every thread and written by the host only: a
// kernel gets a shared reference (`get`), and a `DeviceCopy` value has no
// interior mutability, so writing it does not compile. Nor does declaring
// it `static mut`, or with an initialiser (the host sets it).
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

gpu_device::constant! {
    pub static TAPS: [f32; 4];
}

#[kernel]
pub fn write_taps(mut out: DisjointSlice<f32>) {
    let i = thread_index();
    TAPS.get()[0] = 1.0;
    out.set(i, TAPS.get()[1]);
}

gpu_device::constant! {
    pub static mut SCALE: f32;
}

gpu_device::constant! {
    pub static OFFSET: f32 = 1.0;
}

fn main() {}
