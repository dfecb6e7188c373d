//! CUDA graphs: a short pipeline of kernels captured once from a stream (and
//! a stream it forks to), replayed many times on new data, then updated with
//! new kernel arguments through the same typed launcher as `launch!`.
//! Every result is checked against the CPU, and the time per replay is
//! compared with queueing the same kernels one by one.
//!
//! Run: `cargo run --release --example graphs`

use gpu_kernels::{add_kernel, saxpy};
use gpu_runtime::{backend, kernel_args, launch, Backend, DeviceBuffer, GraphNodeKind, Stream};
use std::error::Error;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("graphs: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let n: usize = 1 << 16;
    let blocks = n.div_ceil(256);
    let (stream, side) = (Stream::new()?, Stream::new()?);
    let x = DeviceBuffer::to_device_sync(&vec![0.0f32; n], &stream)?;
    let ones = DeviceBuffer::to_device_sync(&vec![1.0f32; n], &stream)?;
    let (mut y, mut z, mut out) = (
        DeviceBuffer::<f32>::device_array(n)?,
        DeviceBuffer::<f32>::device_array(n)?,
        DeviceBuffer::<f32>::device_array(n)?,
    );
    let mut x = x;

    // Capture: y = 2x + 1 on `stream`; z = x + 1 on `side`, forked by an
    // event; out = y + z back on `stream` (the buffers' tracking joins `side`
    // into `stream` by a graph edge). Nothing runs yet.
    let graph = stream.capture(|s| {
        side.wait_event(&s.record()?)?;
        launch!(saxpy[blocks, 256, s](2.0f32, &x, &ones, &mut y))?;
        launch!(add_kernel[blocks, 256, side](&x, &ones, &mut z))?;
        launch!(add_kernel[blocks, 256, s](&y, &z, &mut out))
    })?;
    let kinds = graph.node_kinds()?;
    println!(
        "captured {} nodes ({} kernels: {})",
        kinds.len(),
        kinds
            .iter()
            .filter(|k| **k == GraphNodeKind::Kernel)
            .count(),
        graph
            .kernel_nodes()
            .iter()
            .map(|k| k.kernel_name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut exec = graph.instantiate()?;

    // Replay on new inputs: out = (2x + 1) + (x + 1) = 3x + 2.
    for round in 0..5 {
        let value = round as f32;
        x.copy_from_host_sync(&vec![value; n], &stream)?;
        exec.launch(&stream)?;
        let seen = out.copy_to_host_sync(&stream)?;
        if seen.iter().any(|&v| v != 3.0 * value + 2.0) {
            return Err(format!(
                "replay {round}: {} instead of {}",
                seen[0],
                3.0 * value + 2.0
            )
            .into());
        }
    }
    println!("5 replays on new inputs: out = 3x + 2 each time");

    // Update the first kernel node: y = 5x + 1, through saxpy's typed launcher.
    let first = graph.kernel_nodes()[0].clone();
    exec.set_kernel_args(
        &first,
        kernel_args!(saxpy[blocks, 256, stream](5.0f32, &x, &ones, &mut y))?,
    )?;
    exec.launch(&stream)?;
    let value = 4.0f32; // x still holds the last round's input
    let seen = out.copy_to_host_sync(&stream)?;
    if seen.iter().any(|&v| v != 6.0 * value + 2.0) {
        return Err(format!(
            "after the update: {} instead of {}",
            seen[0],
            6.0 * value + 2.0
        )
        .into());
    }
    println!("updated saxpy's scale to 5: out = 6x + 2");

    // Time per replay against the same three launches queued one by one.
    let rounds = if backend() == Backend::Cuda { 2000 } else { 50 };
    let start = Instant::now();
    for _ in 0..rounds {
        exec.launch(&stream)?;
    }
    stream.synchronize()?;
    let replay_us = start.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    let start = Instant::now();
    for _ in 0..rounds {
        side.wait_event(&stream.record()?)?;
        launch!(saxpy[blocks, 256, stream](5.0f32, &x, &ones, &mut y))?;
        launch!(add_kernel[blocks, 256, side](&x, &ones, &mut z))?;
        launch!(add_kernel[blocks, 256, stream](&y, &z, &mut out))?;
    }
    stream.synchronize()?;
    let launches_us = start.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    println!("per run of the three kernels: graph replay {replay_us:.2} us, launch! one by one {launches_us:.2} us");
    println!("graphs: every result matches the CPU");
    Ok(())
}
