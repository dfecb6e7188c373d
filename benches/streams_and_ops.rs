//! The CuPy tutorials' operations and stream machinery, side by side with
//! CuPy in one run:
//!
//! - `sum` of 2^28 f32 (GB/s read), beside `cp.sum` and the device-to-device
//!   copy rate (bytes read per second) as the ceiling;
//! - `b * a + 8` on 2^28 f32 (b a device scalar), beside CuPy's expression;
//! - host cost of entering and leaving a current-stream scope and of recording
//!   an event, beside CuPy's `with s:` and `e.record()`, and CUDA C's
//!   `cudaEventRecord` (the driver's own cost).
//!
//! `scripts/gpu-bundle.sh` builds this; on the GPU machine run it with
//! `--helpers DIR`, the directory holding `streams_and_ops.py` and
//! `event_record_cuda` (built from `benches/cuda/event_record.cu`).

#[path = "common/mod.rs"]
mod common;

use common::{helpers_dir, median, ratio, run_helper, show, Res, Results};
use gpu_ops::{self as ops, DeviceScalar};
use gpu_runtime::{Device, DeviceBuffer, Event, Stream};
use std::process::Command;
use std::time::Instant;

const N: usize = 1 << 28;
const REPEATS: usize = 30;

/// Median GPU time in ms of `work`, timed with events on `stream`, and the
/// last result. Each result is dropped only after its end event has been
/// timed: freeing device memory waits for the device (as `cudaFree` does),
/// which would otherwise hold back the end event's record.
fn gpu_ms<R>(stream: &Stream, mut work: impl FnMut() -> Res<R>) -> Res<(f64, R)> {
    for _ in 0..3 {
        drop(work()?);
    }
    let (start, end) = (Event::new()?, Event::new()?);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..REPEATS {
        start.record_on(stream)?;
        let result = work()?;
        end.record_on(stream)?;
        times.push(Event::elapsed_ms(&start, &end)? as f64);
        last = Some(result);
    }
    Ok((median(times), last.expect("REPEATS > 0")))
}

/// Median host time in ns of one call of `op`, over rounds of 100k calls.
fn host_ns(mut op: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..100_000 {
            op()?;
        }
        rounds.push(start.elapsed().as_secs_f64() * 1e9 / 100_000.0);
    }
    Ok(median(rounds))
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    let device = Device::get(0)?;
    let stream = Stream::new()?;
    let mut results = Results::new();
    let bytes = (N * 4) as f64;

    let host: Vec<f32> = (0..N)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream)?;
    let mut copy = DeviceBuffer::<f32>::zeroed_on(N, &stream)?;
    let (ms, ()) = gpu_ms(&stream, || Ok(copy.copy_from_device(&a, &stream)?))?;
    results.insert("copy_read_gbps".into(), bytes / (ms * 1e-3) / 1e9);
    drop(copy);

    let (ms, total) = gpu_ms(&stream, || Ok(ops::sum_on(&a, &stream)?))?;
    results.insert("rust_sum_gbps".into(), bytes / (ms * 1e-3) / 1e9);
    let got = total.copy_to_host_sync(&stream)? as f64;
    let want: f64 = host.iter().map(|&x| x as f64).sum();
    if (got - want).abs() > 1e-6 * want {
        return Err(format!("sum computed {got}, expected {want}").into());
    }

    let b: DeviceScalar<f32> = DeviceScalar::from_value(0.5, &stream)?;
    let (ms, out) = gpu_ms(&stream, || Ok((&b * &a + 8.0).eval_on(&stream)?))?;
    results.insert("rust_axpb_gbps".into(), 2.0 * bytes / (ms * 1e-3) / 1e9);
    let out = out.copy_to_host_sync(&stream)?;
    if (0..N).step_by(4099).any(|i| out[i] != 0.5 * host[i] + 8.0) {
        return Err("b * a + 8 computed a wrong result".into());
    }
    drop((out, host));

    let other = Stream::new()?;
    results.insert(
        "rust_scope_ns".into(),
        host_ns(|| {
            let _scope = other.enter()?;
            Ok(())
        })?,
    );
    let event = Event::new()?;
    results.insert(
        "rust_record_ns".into(),
        host_ns(|| Ok(event.record_on(&other)?))?,
    );
    let untimed = Event::with_options(gpu_runtime::EventOptions::new().timing(false))?;
    results.insert(
        "rust_record_untimed_ns".into(),
        host_ns(|| Ok(untimed.record_on(&other)?))?,
    );
    other.synchronize()?;

    let mut notes = Vec::new();
    match &helpers {
        Some(dir) => {
            run_helper(
                &mut results,
                &mut notes,
                "CuPy",
                Command::new("python3").arg(dir.join("streams_and_ops.py")),
            );
            let bin = dir.join("event_record_cuda");
            if bin.is_file() {
                run_helper(&mut results, &mut notes, "CUDA C", &mut Command::new(bin));
            } else {
                notes.push("CUDA C: not run (no event_record_cuda)".into());
            }
        }
        None => notes.push("CuPy, CUDA C: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let show = |v: Option<f64>, unit: &str| show(v, 1, unit);
    let copy_read = get("copy_read_gbps");
    println!();
    println!("GPU: {}", device.name());
    println!();
    println!("sum of 2^28 f32 (1 GiB read), events, median of {REPEATS}");
    println!("| what                           | rate            | vs copy read rate | vs CuPy | goal                      |");
    println!("|--------------------------------|-----------------|-------------------|---------|---------------------------|");
    println!("| device-to-device copy (read)   | {:>15} | {:>17} | -       | the ceiling               |", show(copy_read, "GB/s"), "1.00x");
    println!(
        "| ops::sum                       | {:>15} | {:>17} | {:>7} | >= 0.90x copy, > CuPy     |",
        show(get("rust_sum_gbps"), "GB/s"),
        ratio(get("rust_sum_gbps"), copy_read),
        ratio(get("rust_sum_gbps"), get("cupy_sum_gbps"))
    );
    println!("| cp.sum                         | {:>15} | {:>17} | 1.00x   | -                         |", show(get("cupy_sum_gbps"), "GB/s"), ratio(get("cupy_sum_gbps"), copy_read));
    println!();
    println!("b * a + 8 on 2^28 f32 (b a device scalar; rate = 2 GiB read+written / time), median of {REPEATS}");
    println!("| what                           | rate            | vs CuPy | goal        |");
    println!("|--------------------------------|-----------------|---------|-------------|");
    println!(
        "| (&b * &a + 8.0).eval()         | {:>15} | {:>7} | >= CuPy     |",
        show(get("rust_axpb_gbps"), "GB/s"),
        ratio(get("rust_axpb_gbps"), get("cupy_axpb_gbps"))
    );
    println!(
        "| CuPy b * a + 8                 | {:>15} | 1.00x   | -           |",
        show(get("cupy_axpb_gbps"), "GB/s")
    );
    println!();
    println!("Host cost per call, median of 7 rounds of 100k calls");
    println!("| what                                    | this crate   | CuPy         | CUDA C       | goal      |");
    println!("|-----------------------------------------|--------------|--------------|--------------|-----------|");
    println!(
        "| enter + leave a current-stream scope    | {:>12} | {:>12} | {:>12} | < 1000 ns |",
        show(get("rust_scope_ns"), "ns"),
        show(get("cupy_scope_ns"), "ns"),
        "-"
    );
    println!(
        "| record an event (timing on)             | {:>12} | {:>12} | {:>12} | < 1000 ns |",
        show(get("rust_record_ns"), "ns"),
        show(get("cupy_record_ns"), "ns"),
        show(get("cuda_c_record_ns"), "ns")
    );
    println!(
        "| record an event (timing off)            | {:>12} | {:>12} | {:>12} | -         |",
        show(get("rust_record_untimed_ns"), "ns"),
        "-",
        show(get("cuda_c_record_untimed_ns"), "ns")
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
