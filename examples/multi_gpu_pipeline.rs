//! The Day 7 pipeline (`examples/day7_pipeline.rs`) with its chunks spread
//! over every device: each device gets its own streams (4), and chunk `c`
//! goes to stream `c % streams`, the streams taken in turn from each device,
//! so consecutive chunks run on different devices. The same pinned input and
//! output serve every device (pinned memory is page-locked for all of them).
//! Runs on one device and on all of them, checks both against the CPU and
//! prints a table of the times (median of 5 runs) and the speed-up. Works
//! with any number of devices, 1 too.
//!
//! Run: `cargo run --release --example multi_gpu_pipeline`
//! (on the simulator with several devices: `GPU_SIM_DEVICES=4 cargo run ...`)

use gpu_kernels::{busy, busy_rounds_lasting};
use gpu_runtime::{
    backend, launch, Backend, Device, DeviceBuffer, Event, PinnedBuffer, Pipeline, Stream,
};
use std::error::Error;
use std::process::ExitCode;

const STREAMS_PER_DEVICE: usize = 4;
const CHUNKS_PER_DEVICE: usize = 16;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("multi_gpu_pipeline: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `STREAMS_PER_DEVICE` streams on each device, interleaved: device 0's
/// first, device 1's first, ..., device 0's second, ...
fn interleaved_streams(devices: &[Device]) -> Result<Vec<Stream>, gpu_runtime::Error> {
    let mut streams = Vec::new();
    for _ in 0..STREAMS_PER_DEVICE {
        for &device in devices {
            streams.push(Stream::on_device(device)?);
        }
    }
    Ok(streams)
}

/// The median of `values` (the upper one of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs the pipeline once on `streams` (warm-up), then times 5 runs with
/// events on the first stream, which every other stream (of any device)
/// waits for at the start and joins at the end; returns the median in
/// milliseconds.
fn timed_run(
    pipeline: &mut Pipeline<f32, f32>,
    input: &PinnedBuffer<f32>,
    output: &mut PinnedBuffer<f32>,
    chunks: usize,
    rounds: u32,
) -> Result<f64, Box<dyn Error>> {
    let streams = pipeline.streams().to_vec();
    let mut run = |output: &mut PinnedBuffer<f32>| {
        pipeline.run(
            input,
            output,
            chunks,
            None,
            |s, x, out| launch!(busy[x.len().div_ceil(256), 256, s](x, rounds, out)),
        )
    };
    run(output)?; // allocates each stream's staging buffers on its device
    output.as_slice()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = streams[0].record()?;
        for s in &streams[1..] {
            s.wait_event(&start)?; // an event of device 0, waited for on any device
        }
        run(output)?;
        for s in &streams[1..] {
            streams[0].wait_event(&s.record()?)?; // device 0 waits for every stream
        }
        let end = streams[0].record()?;
        times.push(Event::elapsed_ms(&start, &end)? as f64);
    }
    Ok(median(times))
}

fn run() -> Result<(), Box<dyn Error>> {
    let devices = Device::all()?;
    // 256 MiB of f32 per device on GPUs; a small problem on the simulator.
    let per_device: usize = if backend() == Backend::Cuda {
        64 << 20
    } else {
        1 << 16
    };
    // The whole problem grows with the devices, so that each device does the
    // same work as the single device does on its share.
    let n = per_device * devices.len();
    let input = PinnedBuffer::from_slice(
        &(0..n)
            .map(|i| (i % 1000) as f32 / 1000.0)
            .collect::<Vec<_>>(),
    )?;

    // The kernel takes about as long as copying its chunk in, on device 0
    // (the median of 5 copies: the first may pay for more than the copy).
    let stream = Stream::on_device(devices[0])?;
    let sample = per_device / CHUNKS_PER_DEVICE;
    let mut x = DeviceBuffer::<f32>::zeroed_on(sample, &stream)?;
    let mut y = DeviceBuffer::<f32>::zeroed_on(sample, &stream)?;
    let mut copies = Vec::new();
    for _ in 0..5 {
        let copy_start = stream.record()?;
        x.view_mut().copy_from_pinned(&input, 0, &stream)?;
        let copy_end = stream.record()?;
        copies.push(Event::elapsed_ms(&copy_start, &copy_end)? as f64);
    }
    let rounds = busy_rounds_lasting(median(copies), &x, &mut y, &stream)?;
    drop((x, y));

    println!(
        "{} device(s) ({}): {n} elements ({} KiB of f32) in {} chunks, kernel of {rounds} rounds",
        devices.len(),
        devices[0].name(),
        (n * 4) >> 10,
        CHUNKS_PER_DEVICE * devices.len()
    );
    println!();
    println!("| devices | streams | time (median of 5) | speed-up |");
    println!("|---------|---------|--------------------|----------|");
    let mut results = Vec::new();
    let counts = if devices.len() == 1 {
        vec![1]
    } else {
        vec![1, devices.len()]
    };
    for used in counts {
        let streams = interleaved_streams(&devices[..used])?;
        let mut pipeline = Pipeline::new(&streams)?;
        let mut output = PinnedBuffer::<f32>::new(n)?;
        let ms = timed_run(
            &mut pipeline,
            &input,
            &mut output,
            CHUNKS_PER_DEVICE * devices.len(),
            rounds,
        )?;
        let out = output.as_slice()?;
        for i in (0..n).step_by(4099) {
            let mut v = (i % 1000) as f32 / 1000.0;
            for _ in 0..rounds {
                v = v.mul_add(0.999, 0.001);
            }
            if out[i] != v {
                return Err(format!(
                    "{used} device(s): element {i} is {} on the device(s), {v} on the CPU",
                    out[i]
                )
                .into());
            }
        }
        println!(
            "| {used:>7} | {:>7} | {ms:>15.3} ms | {:>7.2}x |",
            used * STREAMS_PER_DEVICE,
            results.first().map_or(1.0, |&one: &f64| one / ms)
        );
        results.push(ms);
    }
    println!();
    println!("multi_gpu_pipeline: every run matches the CPU");
    Ok(())
}
