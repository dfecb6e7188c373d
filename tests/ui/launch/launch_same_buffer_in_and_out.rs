use gpu_kernels::add_kernel;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(a: &mut DeviceBuffer<f32>, b: &DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(add_kernel[1, 256, s](&*a, b, &mut *a))
}

fn main() {}
