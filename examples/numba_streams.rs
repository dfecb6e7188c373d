//! The Numba streams tutorial (`numba-streams-tutorial.rst`), statement by
//! statement, with its results checked against the CPU.
//!
//! The tutorial's two launches race: the second (on `stream2`) writes `a` and
//! reads `c` while the first (on `stream1`) may still be reading `a` and writing
//! `c`. Here `stream2` waits for an event recorded on `stream1` after the first
//! launch, so the second launch starts only once the first has finished, and
//! the results are deterministic: `c = a + b`, then `a = b + c`.
//!
//! Run: `cargo run --release --example numba_streams`

use gpu_kernels::add_kernel; // @cuda.jit def add_kernel(a, b, c) — in gpu-kernels/src/lib.rs
use gpu_runtime::{current_stream, launch, Device, DeviceBuffer, Stream};
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

    // Create two streams
    let stream1 = Stream::new()?;
    let stream2 = Stream::new()?;

    // Initialize data
    let size: usize = 1_000_000;
    let a_cpu: Vec<f32> = (0..size).map(|i| i as f32).collect();
    let b_cpu: Vec<f32> = (0..size).map(|i| i as f32 * 2.0).collect();
    let mut c_cpu: Vec<f32> = vec![0.0; size];

    // Allocate device memory (the uploads go on stream1; stream2 is ordered after
    // them by the event below)
    let mut a_gpu = DeviceBuffer::to_device_sync(&a_cpu, &stream1)?;
    let b_gpu = DeviceBuffer::to_device_sync(&b_cpu, &stream1)?;
    let mut c_gpu = DeviceBuffer::<f32>::device_array(size)?;

    // Define block and grid dimensions
    let threads_per_block: usize = 256;
    let blocks_per_grid = size.div_ceil(threads_per_block);

    // Launch kernels in different streams
    launch!(add_kernel[blocks_per_grid, threads_per_block, stream1](&a_gpu, &b_gpu, &mut c_gpu))?;
    let first_launch_done = stream1.record()?;
    stream2.wait_event(&first_launch_done)?;
    launch!(add_kernel[blocks_per_grid, threads_per_block, stream2](&b_gpu, &c_gpu, &mut a_gpu))?;

    // Wait for the streams to complete
    stream1.synchronize()?;
    stream2.synchronize()?;

    // Copy result back to host
    c_cpu = c_gpu.copy_to_host_sync(&current_stream()?)?;

    // Check against the CPU: c = a + b, and then a = b + c.
    let a_after = a_gpu.copy_to_host_sync(&current_stream()?)?;
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
