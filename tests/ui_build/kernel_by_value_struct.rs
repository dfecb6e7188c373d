// The control of `kernel_zero_sized_value.rs`: a struct with a size passes
// by value (built, not only checked, so that errors found while generating
// code would show).
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Pair {
    a: u32,
    b: u32,
}

#[kernel]
pub fn sum_pair(pair: Pair, mut out: DisjointSlice<u32>) {
    out.set(thread_index(), pair.a + pair.b);
}

fn main() {
    // Instantiated, never run (no launch without a GPU or in CI).
    if std::env::args().count() > 1000 {
        let stream = gpu_runtime::Stream::new().unwrap();
        let mut out = gpu_runtime::DeviceBuffer::<u32>::device_array(32).unwrap();
        let pair = Pair { a: 1, b: 2 };
        let _ = gpu_runtime::launch!(sum_pair[1, 32, stream](pair, &mut out));
    }
}
