use gpu_kernels::add_kernel;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(a: &DeviceBuffer<i32>, b: &DeviceBuffer<f32>, c: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(add_kernel[1, 256, s](a, b, c))
}

fn main() {}
