//! Pinned transfers and the Day 7 pipeline, side by side in one run with CUDA
//! C (`nvcc -O3`), CuPy and Numba:
//!
//! - host-to-device and device-to-host bandwidth of 256 MiB from and into
//!   pinned memory, beside `cudaMemcpyAsync` with `cudaMallocHost` memory;
//! - the pipeline of 256 MiB in 16 chunks on 4 streams, with a kernel about
//!   as long as one copy (calibrated here; the helpers get the same rounds),
//!   against the ideal bound max(copy in, compute, copy out).
//!
//! `scripts/gpu-bundle.sh` builds it; on the GPU machine run it with
//! `--helpers DIR`, the directory with `pipeline_cuda` and `pipeline.py`.

#[path = "common/mod.rs"]
mod common;

use common::{helpers_dir, median, ratio, run_helper, show, Res, Results};
use gpu_kernels::{busy, busy_rounds_lasting};
use gpu_runtime::timeline::{SpanKind, Timeline};
use gpu_runtime::{launch, pipeline, Device, DeviceBuffer, Event, PinnedBuffer, Stream};
use std::process::Command;

const N: usize = 64 << 20;
const CHUNKS: usize = 16;
const STREAMS: usize = 4;

fn timed(stream: &Stream, f: impl FnOnce() -> Res<()>) -> Res<f64> {
    let start = stream.record()?;
    f()?;
    let end = stream.record()?;
    Ok(Event::elapsed_ms(&start, &end)? as f64)
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    let device = Device::get(0)?;
    let stream = Stream::new()?;
    let mut results = Results::new();
    let bytes = (N * 4) as f64;
    let input = PinnedBuffer::from_slice(
        &(0..N)
            .map(|i| (i % 1000) as f32 / 1000.0)
            .collect::<Vec<_>>(),
    )?;
    let mut output = PinnedBuffer::<f32>::new(N)?;
    let mut device_in = DeviceBuffer::<f32>::zeroed_on(N, &stream)?;
    let mut device_out = DeviceBuffer::<f32>::zeroed_on(N, &stream)?;

    let (mut h2d, mut d2h) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        h2d.push(timed(&stream, || {
            Ok(device_in.copy_from_pinned(&input, &stream)?)
        })?);
        d2h.push(timed(&stream, || {
            Ok(device_in.copy_to_pinned(&mut output, &stream)?)
        })?);
    }
    let (t_in, t_out) = (median(h2d), median(d2h));
    results.insert("rust_h2d_gbps".into(), bytes / (t_in * 1e-3) / 1e9);
    results.insert("rust_d2h_gbps".into(), bytes / (t_out * 1e-3) / 1e9);

    // A kernel about as long as one copy.
    let blocks = N.div_ceil(256);
    let rounds = busy_rounds_lasting(t_in, &device_in, &mut device_out, &stream)?;
    let t_kernel = median(
        (0..5)
            .map(|_| {
                timed(&stream, || {
                    Ok(launch!(busy[blocks, 256, stream](&device_in, rounds, &mut device_out))?)
                })
            })
            .collect::<Res<Vec<_>>>()?,
    );
    let bound = t_in.max(t_kernel).max(t_out);
    results.insert("bound_ms".into(), bound);

    let streams: Vec<Stream> = (0..STREAMS)
        .map(|_| Stream::new())
        .collect::<Result<_, _>>()?;
    let run = |timeline: Option<&mut Timeline>, output: &mut PinnedBuffer<f32>| {
        pipeline(&input, output, CHUNKS, &streams, timeline, |s, x, out| {
            Ok(launch!(busy[x.len().div_ceil(256), 256, s](x, rounds, out))?)
        })
    };
    run(None, &mut output)?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut timeline = Timeline::new(&streams[0])?;
        run(Some(&mut timeline), &mut output)?;
        let spans = timeline.spans()?;
        let start = spans
            .iter()
            .filter(|s| s.kind == SpanKind::CopyIn)
            .map(|s| s.start_ms)
            .fold(f64::INFINITY, f64::min);
        times.push(spans.iter().map(|s| s.end_ms).fold(0.0, f64::max) - start);
    }
    results.insert("rust_pipeline_ms".into(), median(times));
    let out = output.as_slice()?;
    for i in (0..N).step_by(4099) {
        let mut v = (i % 1000) as f32 / 1000.0;
        for _ in 0..rounds {
            v = v * 0.999 + 0.001;
        }
        if out[i] != v {
            return Err(format!("pipeline element {i}: {} vs {v}", out[i]).into());
        }
    }
    drop((input, output, device_in, device_out));

    let mut notes = Vec::new();
    match &helpers {
        Some(dir) => {
            let bin = dir.join("pipeline_cuda");
            if bin.is_file() {
                run_helper(
                    &mut results,
                    &mut notes,
                    "CUDA C",
                    Command::new(bin).arg(rounds.to_string()),
                );
            } else {
                notes.push("CUDA C: not run (no pipeline_cuda)".into());
            }
            run_helper(
                &mut results,
                &mut notes,
                "CuPy/Numba",
                Command::new("python3")
                    .arg(dir.join("pipeline.py"))
                    .arg(rounds.to_string()),
            );
        }
        None => notes.push("CUDA C, CuPy, Numba: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let show = |v: Option<f64>, unit: &str| show(v, 3, unit);

    println!();
    println!("GPU: {}", device.name());
    println!();
    println!("Pinned transfers of 256 MiB, events, median of 11");
    println!(
        "| direction        | this crate      | CUDA C (cudaMallocHost) | ratio   | goal     |"
    );
    println!(
        "|------------------|-----------------|-------------------------|---------|----------|"
    );
    println!(
        "| host to device   | {:>15} | {:>23} | {:>7} | >= 0.97x |",
        show(get("rust_h2d_gbps"), "GB/s"),
        show(get("cuda_c_h2d_gbps"), "GB/s"),
        ratio(get("rust_h2d_gbps"), get("cuda_c_h2d_gbps"))
    );
    println!(
        "| device to host   | {:>15} | {:>23} | {:>7} | >= 0.97x |",
        show(get("rust_d2h_gbps"), "GB/s"),
        show(get("cuda_c_d2h_gbps"), "GB/s"),
        ratio(get("rust_d2h_gbps"), get("cuda_c_d2h_gbps"))
    );
    println!();
    println!("Pipeline: 256 MiB in {CHUNKS} chunks on {STREAMS} streams, kernel of {rounds} rounds ({t_kernel:.3} ms whole; copies {t_in:.3} / {t_out:.3} ms), median of 5");
    println!(
        "| implementation   | time          | time / ideal bound | goal                          |"
    );
    println!(
        "|------------------|---------------|--------------------|-------------------------------|"
    );
    println!(
        "| ideal bound      | {:>13} | {:>18} | max(copy in, compute, copy out) |",
        show(get("bound_ms"), "ms"),
        "1.000x"
    );
    println!(
        "| this crate       | {:>13} | {:>18} | <= 1.05x, ahead of the others |",
        show(get("rust_pipeline_ms"), "ms"),
        ratio(get("rust_pipeline_ms"), get("bound_ms"))
    );
    println!(
        "| CUDA C           | {:>13} | {:>18} | -                             |",
        show(get("cuda_c_pipeline_ms"), "ms"),
        ratio(get("cuda_c_pipeline_ms"), get("bound_ms"))
    );
    println!(
        "| CuPy             | {:>13} | {:>18} | -                             |",
        show(get("cupy_pipeline_ms"), "ms"),
        ratio(get("cupy_pipeline_ms"), get("bound_ms"))
    );
    println!(
        "| Numba            | {:>13} | {:>18} | -                             |",
        show(get("numba_pipeline_ms"), "ms"),
        ratio(get("numba_pipeline_ms"), get("bound_ms"))
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
