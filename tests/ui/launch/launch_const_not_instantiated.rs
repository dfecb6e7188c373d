use gpu_test_kernels::reverse_tiles;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(x: &DeviceBuffer<u32>, out: &mut DeviceBuffer<u32>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(reverse_tiles::<24>[1, 24, s](x, out))
}

fn main() {}
