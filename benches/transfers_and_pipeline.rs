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

use common::{helpers_dir, kernels_ptx_file, median, ratio, run_helper, show, Res, Results};
use gpu_kernels::{busy, busy_rounds_lasting};
use gpu_runtime::{
    launch, Device, DeviceBuffer, Event, EventOptions, PinnedBuffer, Pipeline, SpanKind, Stream,
    Timeline,
};
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
    // Both directions at once, on two streams: what a pipeline's copies face.
    let other = Stream::new()?;
    let mut both = Vec::new();
    for _ in 0..11 {
        let start = stream.record()?;
        other.wait_event(&start)?;
        device_in.copy_from_pinned(&input, &stream)?;
        device_out.copy_to_pinned(&mut output, &other)?;
        stream.wait_event(&other.record()?)?;
        let end = stream.record()?;
        both.push(Event::elapsed_ms(&start, &end)? as f64);
    }
    let t_both = median(both);
    results.insert("rust_both_gbps".into(), bytes / (t_both * 1e-3) / 1e9);

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
    let mut pipeline = Pipeline::new(&streams)?;
    let mut run =
        |chunks: usize, timeline: Option<&mut Timeline>, output: &mut PinnedBuffer<f32>| {
            pipeline.run(
                &input,
                output,
                chunks,
                timeline,
                |s, x, out| launch!(busy[x.len().div_ceil(256), 256, s](x, rounds, out)),
            )
        };
    // Warm-up: allocates the staging buffers.
    run(CHUNKS, None, &mut output)?;
    output.as_slice()?;
    // As CUDA C times it: an event on the first stream that the others wait
    // for, the run, the others joined back, an event after. With 64 chunks
    // too, to show the cost of filling and draining the pipeline.
    for (chunks, key) in [
        (CHUNKS, "rust_pipeline_ms"),
        (64, "rust_64_chunks_pipeline_ms"),
    ] {
        let mut times = Vec::new();
        for _ in 0..7 {
            let start = streams[0].record()?;
            for s in &streams[1..] {
                s.wait_event(&start)?;
            }
            run(chunks, None, &mut output)?;
            for s in &streams[1..] {
                let joined = Event::with_options(EventOptions::new().timing(false))?;
                joined.record_on(s)?;
                streams[0].wait_event(&joined)?;
            }
            let end = streams[0].record()?;
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
        results.insert(key.into(), median(times));
    }
    // With a timeline: two timed events around every copy and kernel.
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut timeline = Timeline::new(&streams[0])?;
        run(CHUNKS, Some(&mut timeline), &mut output)?;
        let spans = timeline.spans()?;
        let start = spans
            .iter()
            .filter(|s| s.kind == SpanKind::CopyIn)
            .map(|s| s.start_ms)
            .fold(f64::INFINITY, f64::min);
        times.push(spans.iter().map(|s| s.end_ms).fold(0.0, f64::max) - start);
    }
    results.insert("rust_timeline_pipeline_ms".into(), median(times));
    let out = output.as_slice()?;
    for i in (0..N).step_by(4099) {
        let mut v = (i % 1000) as f32 / 1000.0;
        for _ in 0..rounds {
            v = v.mul_add(0.999, 0.001);
        }
        if out[i] != v {
            return Err(format!("pipeline element {i}: {} vs {v}", out[i]).into());
        }
    }
    drop(pipeline);
    drop((input, output, device_in, device_out));

    let mut notes = Vec::new();
    match &helpers {
        Some(dir) => {
            let bin = dir.join("pipeline_cuda");
            if bin.is_file() {
                // With the module's PTX, it also runs its pipeline with the
                // Rust kernel, isolating the host side from the kernel.
                let mut command = Command::new(bin);
                command.arg(rounds.to_string());
                command.arg(kernels_ptx_file()?);
                run_helper(&mut results, &mut notes, "CUDA C", &mut command);
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
    println!(
        "| both at once     | {:>15} | {:>23} | {:>7} | (each direction; {t_both:.3} ms) |",
        show(get("rust_both_gbps"), "GB/s"),
        "-",
        "-"
    );
    println!();
    println!("Pipeline: 256 MiB in {CHUNKS} chunks on {STREAMS} streams, kernel of {rounds} rounds ({t_kernel:.3} ms whole; copies {t_in:.3} / {t_out:.3} ms), median of 7 (5 with a timeline)");
    let row = |name: &str, ms: Option<f64>, goal: &str| {
        println!(
            "| {name:<27} | {:>10} | {:>18} | {goal:<36} |",
            show(ms, "ms"),
            ratio(ms, get("bound_ms"))
        )
    };
    println!(
        "| {:<27} | {:<10} | time / ideal bound | {:<36} |",
        "implementation", "time", "goal or note"
    );
    println!("|{:-<29}|{:-<12}|{:-<20}|{:-<38}|", "", "", "", "");
    row(
        "ideal bound",
        get("bound_ms"),
        "max(copy in, compute, copy out)",
    );
    row(
        "16-chunk floor (computed)",
        get("bound_ms").map(|b| b * 18.0 / 16.0),
        "(16 + 2) / 16 stages of 1/16 each",
    );
    row(
        "this crate",
        get("rust_pipeline_ms"),
        "<= 1.05x; ahead of the three below",
    );
    row("CUDA C", get("cuda_c_pipeline_ms"), "");
    row("CuPy", get("cupy_pipeline_ms"), "");
    row("Numba", get("numba_pipeline_ms"), "");
    row(
        "CUDA C host, Rust kernel",
        get("cuda_c_rust_kernel_pipeline_ms"),
        "the kernel's share of a difference",
    );
    row(
        "this crate, 64 chunks",
        get("rust_64_chunks_pipeline_ms"),
        "floor (64 + 2) / 64 = 1.03x",
    );
    row(
        "this crate with a timeline",
        get("rust_timeline_pipeline_ms"),
        "a timed event between steps",
    );
    if let (Some(c), Some(rust)) = (get("cuda_c_kernel_ms"), get("rust_kernel_in_c_ms")) {
        println!(
            "The busy kernel alone on all 64M elements (CUDA C host): nvcc {c:.3} ms, Rust {rust:.3} ms ({:.3}x)",
            rust / c
        );
    }
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
