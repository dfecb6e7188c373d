// A type over-aligned for device memory that is `DeviceCopy` by a
// hand-written `unsafe impl` (a broken promise the derive cannot see). The
// runtime refuses it where memory is allocated or handed to a kernel, also
// through generics (built, not only checked: these checks run when the code
// is instantiated).
use gpu_device::prelude::*;
use gpu_runtime::{DeviceBuffer, Stream};
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[derive(Clone, Copy)]
#[repr(C, align(512))]
pub struct Raw(u8);
// SAFETY: none: the alignment breaks the contract, which the runtime catches.
unsafe impl DeviceCopy for Raw {}

fn allocate<T: DeviceCopy>(stream: &Stream) -> DeviceBuffer<T> {
    DeviceBuffer::zeroed_on(1, stream).unwrap()
}

#[kernel]
pub fn first_byte(raws: &[Raw], mut out: DisjointSlice<u8>) {
    let i = thread_index();
    out.set(i, raws.get(i.get()).map_or(0, |r| r.0));
}

fn main() {
    // Instantiated, never run (no launch without a GPU or in CI).
    if std::env::args().count() > 1000 {
        let stream = Stream::new().unwrap();
        let raws = allocate::<Raw>(&stream);
        let mut out = DeviceBuffer::<u8>::zeroed_on(32, &stream).unwrap();
        let _ = gpu_runtime::launch!(first_byte[1, 32, stream](&raws, &mut out));
    }
}
