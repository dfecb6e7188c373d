// rustc's PTX kernel ABI passes a parameter by value aligned to at most 16
// bytes, and crashed (an internal compiler error) on a larger alignment. A
// 32-aligned type is fine in memory (`&[Wide]`), not by value: the kernel
// refuses it with an error naming the limit, before the ABI is computed.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C, align(32))]
pub struct Wide([u32; 8]);

#[kernel]
pub fn by_value(wide: Wide, mut out: DisjointSlice<u32>) {
    out.set(thread_index(), wide.0[0]);
}

#[kernel]
pub fn in_a_slice(wides: &[Wide], mut out: DisjointSlice<u32>) {
    let i = thread_index();
    out.set(i, wides.get(i.get()).map_or(0, |w| w.0[0]));
}

fn main() {}
