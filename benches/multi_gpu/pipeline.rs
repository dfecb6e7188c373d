//! The multi-GPU pipeline's part of `benches/multi_gpu.rs`: the crate's Day 7
//! pipeline on 1 GPU and on 2 (the same total work), the options that could
//! raise its 2-GPU figure (chunks and streams per GPU, per-GPU pinned
//! buffers, a host thread per GPU), the same pipeline in CUDA C
//! (`multi_gpu_pipeline.cu`) and the copy-only bound (`copy_bound.cu`: the
//! pinned copies alone, both directions at once), and what limits the
//! speed-up.

use crate::common::{median, ratio, run_helper, show, Res, Results};
use crate::{row, sized};
use gpu_kernels::{busy, busy_rounds_lasting};
use gpu_runtime::{launch, Device, DeviceBuffer, Event, PinnedBuffer, Pipeline, Stream};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Elements per GPU: 256 MiB of f32 (shrunk on the simulator).
const PER_DEVICE: usize = 64 << 20;
/// The pipeline's shape as issue #11 measured it.
const STREAMS_PER_DEVICE: usize = 4;
const CHUNKS_PER_DEVICE: usize = 16;
/// Chunk counts per GPU that the CUDA C pipeline also runs.
const CUDA_C_CHUNKS: [usize; 2] = [CHUNKS_PER_DEVICE, 64];

/// How the pinned buffers and the streams are laid out in an option.
#[derive(Clone, Copy)]
enum Layout {
    /// One input and one output for the whole problem, one `Pipeline` over
    /// the streams of every GPU taken in turn (GPU 0's first, GPU 1's
    /// first, GPU 0's second, ...): the example's and issue #11's shape.
    Shared,
    /// Each GPU its own input and output (its half, pinned through it) and
    /// its own `Pipeline`, all queued from this thread.
    PerDevice,
    /// As `PerDevice`, each GPU's pipeline queued and waited for on a host
    /// thread of its own.
    ThreadPerDevice,
}

/// One way of running the pipeline, measured on 1 GPU and on 2 where the
/// layout allows it (the per-GPU layouts only on 2).
struct Variant {
    key: &'static str,
    label: &'static str,
    streams_per_device: usize,
    chunks_per_device: usize,
    layout: Layout,
}

const VARIANTS: [Variant; 7] = [
    Variant {
        key: "base",
        label: "as above, host clock",
        streams_per_device: STREAMS_PER_DEVICE,
        chunks_per_device: CHUNKS_PER_DEVICE,
        layout: Layout::Shared,
    },
    Variant {
        key: "c32",
        label: "32 chunks per GPU",
        streams_per_device: STREAMS_PER_DEVICE,
        chunks_per_device: 32,
        layout: Layout::Shared,
    },
    Variant {
        key: "c64",
        label: "64 chunks per GPU",
        streams_per_device: STREAMS_PER_DEVICE,
        chunks_per_device: 64,
        layout: Layout::Shared,
    },
    Variant {
        key: "s2",
        label: "2 streams per GPU",
        streams_per_device: 2,
        chunks_per_device: CHUNKS_PER_DEVICE,
        layout: Layout::Shared,
    },
    Variant {
        key: "s8",
        label: "8 streams per GPU",
        streams_per_device: 8,
        chunks_per_device: CHUNKS_PER_DEVICE,
        layout: Layout::Shared,
    },
    Variant {
        key: "pergpu",
        label: "per-GPU pinned buffers and pipelines",
        streams_per_device: STREAMS_PER_DEVICE,
        chunks_per_device: CHUNKS_PER_DEVICE,
        layout: Layout::PerDevice,
    },
    Variant {
        key: "threads",
        label: "per-GPU buffers, a host thread per GPU",
        streams_per_device: STREAMS_PER_DEVICE,
        chunks_per_device: CHUNKS_PER_DEVICE,
        layout: Layout::ThreadPerDevice,
    },
];

/// Input element `i`, and what the pipeline makes of it.
fn input_value(i: usize) -> f32 {
    (i % 1000) as f32 / 1000.0
}

fn expected(i: usize, rounds: u32) -> f32 {
    let mut v = input_value(i);
    for _ in 0..rounds {
        v = v.mul_add(0.999, 0.001);
    }
    v
}

/// Checks a sample of `out`, the output of elements `offset..`.
fn check(out: &[f32], offset: usize, rounds: u32, what: &str) -> Res<()> {
    for i in (0..out.len()).step_by(4099 * 16).chain([out.len() - 1]) {
        let want = expected(offset + i, rounds);
        if out[i] != want {
            return Err(format!("{what}: element {} is {} not {want}", offset + i, out[i]).into());
        }
    }
    Ok(())
}

/// `streams_per_device` new streams on each of `devices`, interleaved.
fn interleaved_streams(devices: &[Device], streams_per_device: usize) -> Res<Vec<Stream>> {
    let mut streams = Vec::new();
    for _ in 0..streams_per_device {
        for &d in devices {
            streams.push(Stream::on_device(d)?);
        }
    }
    Ok(streams)
}

fn kernel(
    rounds: u32,
) -> impl FnMut(
    &Stream,
    gpu_runtime::DeviceView<'_, f32>,
    gpu_runtime::DeviceViewMut<'_, f32>,
) -> gpu_runtime::Result<()>
       + Copy {
    move |s, x, out| launch!(busy[x.len().div_ceil(256), 256, s](x, rounds, out))
}

/// Milliseconds of host clock for `run` (queue everything, then wait for
/// it): one warm-up, then the median of 5.
fn host_ms(mut run: impl FnMut() -> Res<()>) -> Res<f64> {
    run()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        run()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

/// Measures the pipeline on 1 GPU and on 2 (events, as issue #11 did), then
/// every option (host clock), then CUDA C's pipeline and copy-only bound
/// when `helpers` has them.
pub fn measure(
    devices: &[Device],
    helpers: Option<&Path>,
    results: &mut Results,
    notes: &mut Vec<String>,
) -> Res<()> {
    let per_device = sized(PER_DEVICE);
    let n = per_device * devices.len();
    let data: Vec<f32> = (0..n).map(input_value).collect();
    let input = PinnedBuffer::from_slice(&data)?;
    let mut output = PinnedBuffer::<f32>::new(n)?;

    // The kernel lasts about as long as copying its chunk in, on GPU 0.
    let stream = Stream::on_device(devices[0])?;
    let sample = per_device / CHUNKS_PER_DEVICE;
    let mut x = DeviceBuffer::<f32>::zeroed_on(sample, &stream)?;
    let mut y = DeviceBuffer::<f32>::zeroed_on(sample, &stream)?;
    let mut copies = Vec::new();
    for _ in 0..5 {
        let start = stream.record()?;
        x.view_mut().copy_from_pinned(&input, 0, &stream)?;
        let end = stream.record()?;
        copies.push(Event::elapsed_ms(&start, &end)? as f64);
    }
    let rounds = busy_rounds_lasting(median(copies), &x, &mut y, &stream)?;
    drop((x, y));
    results.insert("pipeline_rounds".into(), rounds as f64);

    // Issue #11's figure: events on the first stream, which every stream
    // waits for at the start and joins at the end.
    for (used, key) in [
        (1, "rust_pipeline_1_ms"),
        (devices.len(), "rust_pipeline_2_ms"),
    ] {
        let streams = interleaved_streams(&devices[..used], STREAMS_PER_DEVICE)?;
        let mut pipeline = Pipeline::new(&streams)?;
        let chunks = CHUNKS_PER_DEVICE * devices.len();
        let mut run = |output: &mut PinnedBuffer<f32>| {
            pipeline.run(&input, output, chunks, None, kernel(rounds))
        };
        run(&mut output)?;
        output.as_slice()?;
        let mut times = Vec::new();
        for _ in 0..5 {
            let start = streams[0].record()?;
            for s in &streams[1..] {
                s.wait_event(&start)?;
            }
            run(&mut output)?;
            for s in &streams[1..] {
                streams[0].wait_event(&s.record()?)?;
            }
            let end = streams[0].record()?;
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
        check(
            output.as_slice()?,
            0,
            rounds,
            &format!("pipeline on {used} GPU(s)"),
        )?;
        results.insert(key.into(), median(times));
    }

    for option in &VARIANTS {
        let counts: &[usize] = match option.layout {
            Layout::Shared => &[1, 2],
            Layout::PerDevice | Layout::ThreadPerDevice => &[2],
        };
        for &used in counts {
            let ms = measure_option(option, &devices[..used], &data, &input, &mut output, rounds)?;
            results.insert(format!("rust_pipeline_{}_{used}_ms", option.key), ms);
        }
    }

    if let Some(dir) = helpers {
        let pipeline_c = dir.join("multi_gpu_pipeline_cuda");
        if pipeline_c.is_file() {
            let mut command = Command::new(pipeline_c);
            command.arg(rounds.to_string()).arg(per_device.to_string());
            command.args(CUDA_C_CHUNKS.map(|c| c.to_string()));
            run_helper(results, notes, "CUDA C pipeline", &mut command);
        } else {
            notes.push("CUDA C pipeline: not run (no multi_gpu_pipeline_cuda)".into());
        }
        let bound = dir.join("copy_bound_cuda");
        if bound.is_file() {
            run_helper(
                results,
                notes,
                "CUDA C copy bound",
                Command::new(bound).arg(per_device.to_string()),
            );
        } else {
            notes.push("copy-only bound: not run (no copy_bound_cuda)".into());
        }
    }
    Ok(())
}

/// One option on `devices` (host clock), its output checked.
fn measure_option(
    option: &Variant,
    devices: &[Device],
    data: &[f32],
    input: &PinnedBuffer<f32>,
    output: &mut PinnedBuffer<f32>,
    rounds: u32,
) -> Res<f64> {
    // The same total work whatever the GPUs: chunks for the whole problem.
    let chunks = option.chunks_per_device * 2;
    let what = format!("pipeline, {}, on {} GPU(s)", option.label, devices.len());
    match option.layout {
        Layout::Shared => {
            let streams = interleaved_streams(devices, option.streams_per_device)?;
            let mut pipeline = Pipeline::new(&streams)?;
            let ms = host_ms(|| {
                pipeline.run(input, output, chunks, None, kernel(rounds))?;
                output.as_slice()?;
                Ok(())
            })?;
            check(output.as_slice()?, 0, rounds, &what)?;
            Ok(ms)
        }
        Layout::PerDevice | Layout::ThreadPerDevice => {
            let share = data.len() / devices.len();
            let mut parts = Vec::new();
            for (d, &device) in devices.iter().enumerate() {
                let range = d * share..(d + 1) * share;
                // Pinned through the GPU that uses it.
                let (input, output) = device.scope(|| -> Res<_> {
                    Ok((
                        PinnedBuffer::from_slice(&data[range])?,
                        PinnedBuffer::<f32>::new(share)?,
                    ))
                })?;
                let streams = interleaved_streams(&[device], option.streams_per_device)?;
                parts.push((Pipeline::new(&streams)?, input, output));
            }
            let per_part = chunks / devices.len();
            let threads = matches!(option.layout, Layout::ThreadPerDevice);
            let ms = host_ms(|| {
                if threads {
                    std::thread::scope(|scope| {
                        let handles: Vec<_> = parts
                            .iter_mut()
                            .map(|(pipeline, input, output)| {
                                scope.spawn(move || -> gpu_runtime::Result<()> {
                                    pipeline.run(input, output, per_part, None, kernel(rounds))?;
                                    output.as_slice()?;
                                    Ok(())
                                })
                            })
                            .collect();
                        for handle in handles {
                            handle.join().expect("a pipeline thread panicked")?;
                        }
                        Ok(())
                    })
                } else {
                    for (pipeline, input, output) in &mut parts {
                        pipeline.run(input, output, per_part, None, kernel(rounds))?;
                    }
                    for (_, _, output) in &parts {
                        output.as_slice()?;
                    }
                    Ok(())
                }
            })?;
            for (d, (_, _, output)) in parts.iter().enumerate() {
                check(output.as_slice()?, d * share, rounds, &what)?;
            }
            Ok(ms)
        }
    }
}

/// The pipeline's rows of the table.
pub fn rows(results: &Results) {
    let get = |k: &str| results.get(k).copied();
    let ms = |k: &str| show(get(k), 2, "ms");
    row(
        "Day 7 pipeline, 512 MiB, 2 GPUs against 1",
        ms("rust_pipeline_2_ms"),
        format!("{} (1 GPU)", ms("rust_pipeline_1_ms")),
        ratio(get("rust_pipeline_1_ms"), get("rust_pipeline_2_ms")),
        ">= 1.90x",
    );
    let c = CHUNKS_PER_DEVICE;
    let (c1, c2) = (
        format!("cuda_c_mgpu_pipeline_{c}c_1gpu_ms"),
        format!("cuda_c_mgpu_pipeline_{c}c_2gpu_ms"),
    );
    row(
        "CUDA C pipeline, 512 MiB, 2 GPUs against 1",
        ms(&c2),
        format!("{} (1 GPU)", ms(&c1)),
        ratio(get(&c1), get(&c2)),
        "-",
    );
    row(
        "copies alone (pinned <-> GPU), 2 GPUs against 1",
        ms("cuda_c_copy_2gpu_ms"),
        format!("{} (1 GPU)", ms("cuda_c_copy_1gpu_ms")),
        ratio(get("cuda_c_copy_1gpu_ms"), get("cuda_c_copy_2gpu_ms")),
        "bound",
    );
    row(
        "pipeline on 2 GPUs, this crate against CUDA C",
        ms("rust_pipeline_2_ms"),
        format!("{} (CUDA C)", ms(&c2)),
        ratio(get(&c2), get("rust_pipeline_2_ms")),
        ">= 0.97x",
    );
    let many = CUDA_C_CHUNKS[1];
    let (m1, m2) = (
        format!("cuda_c_mgpu_pipeline_{many}c_1gpu_ms"),
        format!("cuda_c_mgpu_pipeline_{many}c_2gpu_ms"),
    );
    row(
        &format!("CUDA C pipeline, {many} chunks per GPU, 2 vs 1"),
        ms(&m2),
        format!("{} (1 GPU)", ms(&m1)),
        ratio(get(&m1), get(&m2)),
        "-",
    );
    for option in &VARIANTS {
        let two = format!("rust_pipeline_{}_2_ms", option.key);
        let one = match option.layout {
            Layout::Shared => format!("rust_pipeline_{}_1_ms", option.key),
            _ => "rust_pipeline_base_1_ms".to_string(),
        };
        row(
            &format!("option: {}, 2 vs 1", option.label),
            ms(&two),
            format!("{} (1 GPU)", ms(&one)),
            ratio(get(&one), get(&two)),
            ">= 1.90x",
        );
    }
}

/// Says plainly what limits the 2-GPU speed-up, from the figures measured.
pub fn limits(results: &Results) -> Vec<String> {
    let get = |k: &str| results.get(k).copied();
    let speedup = |one: &str, two: &str| Some(get(one)? / get(two)?);
    let mut lines = Vec::new();
    let c = CHUNKS_PER_DEVICE as f64;
    // Three stages of equal length per chunk (copy in, kernel, copy out),
    // each GPU's stages overlapping across its streams: N chunks take about
    // N + 2 stage times, so 2 GPUs with perfectly doubled bandwidth gain
    // (2C + 2) / (C + 2), below 2 by the filling and draining.
    let model = |c: f64| (2.0 * c + 2.0) / (c + 2.0);
    lines.push(format!(
        "{}fill and drain: with {c} chunks per GPU, a perfect 2-GPU pipeline gains at most about {:.2}x (model: 3 equal stages, (2C+2)/(C+2)); with 64 chunks per GPU {:.2}x (measured above as options)",
        if model(c) < 1.9 { "LIMIT (the pipeline's shape): " } else { "" },
        model(c),
        model(64.0)
    ));
    match speedup("cuda_c_copy_1gpu_ms", "cuda_c_copy_2gpu_ms") {
        Some(bound) => {
            let agg = |k: &str| show(get(k), 1, "GB/s");
            lines.push(format!(
                "copies alone: {:.2}x on 2 GPUs ({} in and out together, against {} on 1; host -> device alone {} against {}, device -> host alone {} against {})",
                bound,
                agg("cuda_c_copy_2gpu_gbps"),
                agg("cuda_c_copy_1gpu_gbps"),
                agg("cuda_c_h2d_2gpu_gbps"),
                agg("cuda_c_h2d_1gpu_gbps"),
                agg("cuda_c_d2h_2gpu_gbps"),
                agg("cuda_c_d2h_1gpu_gbps"),
            ));
            let verdict = if bound < 1.9 {
                format!(
                    "LIMIT: the host side. The pinned copies alone, without any kernel, are only {bound:.2}x faster on 2 GPUs than on 1, so no pipeline that streams its data through host memory can reach 1.90x on this machine"
                )
            } else {
                format!(
                    "the host side is not the limit: the pinned copies alone are {bound:.2}x faster on 2 GPUs"
                )
            };
            lines.push(verdict);
        }
        None => lines.push("copies alone: not measured (no copy_bound_cuda)".into()),
    }
    let c2 = format!("cuda_c_mgpu_pipeline_{CHUNKS_PER_DEVICE}c_2gpu_ms");
    let cuda_c = speedup(
        &format!("cuda_c_mgpu_pipeline_{CHUNKS_PER_DEVICE}c_1gpu_ms"),
        &c2,
    );
    let ours = speedup("rust_pipeline_1_ms", "rust_pipeline_2_ms");
    let against_c = speedup(&c2, "rust_pipeline_2_ms");
    if let (Some(cuda_c), Some(ours), Some(against_c)) = (cuda_c, ours, against_c) {
        lines.push(format!(
            "the same pipeline gains {cuda_c:.2}x in CUDA C and {ours:.2}x in this crate; on 2 GPUs the crate runs at {against_c:.2}x CUDA C's speed: {}",
            if against_c >= 0.97 {
                "the crate adds nothing that matters, the limit is the machine's"
            } else {
                "the crate is slower than CUDA C on 2 GPUs (see the options)"
            }
        ));
    }
    let best = VARIANTS
        .iter()
        .filter_map(|o| {
            let one = match o.layout {
                Layout::Shared => format!("rust_pipeline_{}_1_ms", o.key),
                _ => "rust_pipeline_base_1_ms".to_string(),
            };
            Some((
                o.label,
                speedup(&one, &format!("rust_pipeline_{}_2_ms", o.key))?,
            ))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((label, gain)) = best {
        lines.push(format!(
            "the best option measured: {label}, {gain:.2}x on 2 GPUs"
        ));
    }
    lines
}
