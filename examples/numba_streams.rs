//! The Numba streams tutorial (`numba-streams-tutorial.rst`), statement by
//! statement, with its results checked against the CPU.
//!
//! In Numba the tutorial's two launches race: the second (on `stream2`) writes
//! `a` and reads `c` while the first (on `stream1`) may still be reading `a`
//! and writing `c`. Here the same lines are deterministic with no event
//! written by hand: device buffers track the streams that use them, so the
//! second launch waits on the device for the first (`c = a + b`, then
//! `a = b + c`).
//!
//! Run: `cargo run --release --example numba_streams`

use gpu_kernels::add_kernel; // @cuda.jit def add_kernel(a, b, c) — in gpu-kernels/src/lib.rs
use gpu_runtime::{launch, Device, DeviceBuffer, Stream, StreamOptions};
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("numba_streams: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let device = Device::current()?;
    println!("device 0: {}", device.name());

    // Create two streams (`cuda.stream()` makes blocking streams)
    let stream1 = Stream::with_options(StreamOptions::new().non_blocking(false))?;
    let stream2 = Stream::with_options(StreamOptions::new().non_blocking(false))?;

    // Initialize data
    let size: usize = 1_000_000;
    let a_cpu: Vec<f32> = (0..size).map(|i| i as f32).collect();
    let b_cpu: Vec<f32> = (0..size).map(|i| i as f32 * 2.0).collect();
    let mut c_cpu: Vec<f32> = vec![0.0; size];

    // Allocate device memory
    let mut a_gpu = DeviceBuffer::from_host_sync(&a_cpu)?;
    let b_gpu = DeviceBuffer::from_host_sync(&b_cpu)?;
    let mut c_gpu = DeviceBuffer::<f32>::empty(size)?;

    // Define block and grid dimensions
    let threads_per_block: usize = 256;
    let blocks_per_grid = size.div_ceil(threads_per_block);

    // Launch kernels in different streams
    launch!(add_kernel[blocks_per_grid, threads_per_block, stream1](&a_gpu, &b_gpu, &mut c_gpu))?;
    launch!(add_kernel[blocks_per_grid, threads_per_block, stream2](&b_gpu, &c_gpu, &mut a_gpu))?;

    // Wait for the streams to complete
    stream1.synchronize()?;
    stream2.synchronize()?;

    // Copy result back to host
    c_cpu = c_gpu.to_host_sync()?;

    // Check against the CPU: c = a + b, and then a = b + c.
    let a_after = a_gpu.to_host_sync()?;
    let mismatches = (0..size)
        .filter(|&i| {
            c_cpu[i] != a_cpu[i] + b_cpu[i] || a_after[i] != b_cpu[i] + (a_cpu[i] + b_cpu[i])
        })
        .count();
    println!("c[..4] = {:?}, c[-1] = {}", &c_cpu[..4], c_cpu[size - 1]);
    println!(
        "a[..4] = {:?}, a[-1] = {} (after the second launch)",
        &a_after[..4],
        a_after[size - 1]
    );
    if mismatches != 0 {
        return Err(format!("{mismatches} of {size} elements differ from the CPU result").into());
    }
    println!("numba_streams: {size} elements of both launches match the CPU");
    Ok(())
}
