// Attack: a zero-sized `DeviceCopy` struct passed by value. rustc leaves
// zero-sized parameters out of a PTX entry point, so on a GPU every
// argument after it would shift by one slot: `b` would be read from the
// empty struct's slot and the output's address from `b`'s, and the kernel
// would write through a garbage pointer (the simulator, which calls the
// host entry point, ran it right). Parameters passed by value must have a
// size.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Nothing {}

#[kernel]
pub fn shifted(a: u32, nothing: Nothing, b: u32, mut out: DisjointSlice<u32>) {
    let _ = nothing;
    out.set(thread_index(), a + b);
}

#[kernel(Nothing)]
pub fn generic<T: DeviceCopy>(value: T, mut out: DisjointSlice<u32>) {
    let _ = value;
    out.set(thread_index(), 1);
}

fn main() {
    // Instantiated, never run.
    if std::env::args().count() > 1000 {
        let stream = gpu_runtime::Stream::new().unwrap();
        let mut out = gpu_runtime::DeviceBuffer::<u32>::device_array(32).unwrap();
        let _ = gpu_runtime::launch!(shifted[1, 32, stream](1, Nothing {}, 2, &mut out));
        let _ = gpu_runtime::launch!(generic[1, 32, stream](Nothing {}, &mut out));
    }
}
