use gpu_kernels::saxpy;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(x: &DeviceBuffer<f32>, y: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(saxpy[1, 256, s](2.5f64, x, y, out))
}

fn main() {}
