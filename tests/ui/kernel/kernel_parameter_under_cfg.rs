// Attack: a parameter that exists on one target only. The host's launcher
// would pass one argument fewer than the device's entry point reads, and
// every argument after it would shift. A kernel's parameters are the same
// on both targets: `cfg` on a parameter is refused.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn shifted(
    #[cfg(target_arch = "nvptx64")] extra: u32,
    #[cfg_attr(target_arch = "nvptx64", cfg(any()))] scale: u32,
    mut out: DisjointSlice<u32>,
) {
    out.set(thread_index(), scale);
}

fn main() {}
