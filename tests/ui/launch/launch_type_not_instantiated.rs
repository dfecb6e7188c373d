use gpu_kernels::fill;
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn run(out: &mut DeviceBuffer<i64>, s: &Stream) -> gpu_runtime::Result<()> {
    launch!(fill[1, 256, s](7i64, out))
}

fn main() {}
