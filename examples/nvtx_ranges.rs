//! NVTX ranges around kernels, and the profiler switched on for part of the
//! run, for Nsight Compute and Nsight Systems:
//!
//! ```text
//! cargo build -p gpu-examples --release --features nvtx --example nvtx_ranges
//! ncu --nvtx --nvtx-include "measured/" target/release/examples/nvtx_ranges
//!     # profiles the 3 `saxpy` launches inside the "measured" range only
//! ncu --profile-from-start off target/release/examples/nvtx_ranges
//!     # profiles the 2 `add_kernel` launches between profiler::start and stop
//! nsys profile -o nvtx_ranges --stats=true target/release/examples/nvtx_ranges
//! nsys stats --report nvtx_sum nvtx_ranges.nsys-rep
//! ```
//!
//! Also a pipeline, whose steps are ranges named as its timeline's spans
//! (`"copy in: chunk 0"`, `"kernel: chunk 0"`, ...).

use gpu_kernels::{add_kernel, busy, saxpy};
use gpu_runtime::{launch, nvtx, pipeline, profiler, DeviceBuffer, PinnedBuffer, Stream};

fn main() -> gpu_runtime::Result<()> {
    let n = 1 << 20;
    let stream = Stream::new()?;
    let x = DeviceBuffer::to_device_sync(&vec![1.0f32; n], &stream)?;
    let y = DeviceBuffer::to_device_sync(&vec![2.0f32; n], &stream)?;
    let mut out = DeviceBuffer::<f32>::device_array(n)?;
    let blocks = n.div_ceil(256);
    {
        let _warm_up = nvtx::range("warm-up");
        launch!(saxpy[blocks, 256, stream](1.0, &x, &y, &mut out))?;
    }
    {
        let _measured = nvtx::range("measured");
        for i in 0..3 {
            nvtx::mark(format!("saxpy {i}"));
            launch!(saxpy[blocks, 256, stream](2.0, &x, &y, &mut out))?;
        }
    }
    let mut sum = DeviceBuffer::<f32>::device_array(n)?;
    profiler::scope(|| {
        let _range = nvtx::range("profiled");
        launch!(add_kernel[blocks, 256, stream](&x, &y, &mut out))?;
        launch!(add_kernel[blocks, 256, stream](&x, &out, &mut sum))
    })?;
    let input = PinnedBuffer::from_slice(&vec![1.0f32; n])?;
    let mut output = PinnedBuffer::<f32>::new(n)?;
    let streams = [Stream::new()?, Stream::new()?];
    pipeline(
        &input,
        &mut output,
        4,
        &streams,
        None,
        |s, x, out| launch!(busy[x.len().div_ceil(256), 256, s](x, 10, out)),
    )?;
    let result = sum.copy_to_host_sync(&stream)?;
    assert!(result.iter().all(|&v| v == 4.0), "x + (x + y) = 1 + 3");
    println!(
        "nvtx: {}; 1 warm-up saxpy, 3 measured saxpy, 2 profiled add_kernel, a pipeline of 4 chunks",
        if nvtx::ENABLED { "enabled" } else { "disabled" }
    );
    Ok(())
}
