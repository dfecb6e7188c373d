// A host slice where the kernel reads device memory: the error says what
// the argument is not, and how to make it what the kernel reads.
use gpu_kernels::add_kernel;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(a: &[f32], b: &DeviceBuffer<f32>, c: &mut Vec<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(add_kernel[1, 256, s](a, b, c))
}

fn main() {}
