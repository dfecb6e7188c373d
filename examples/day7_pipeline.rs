//! The Day 7 tutorial (`day7-streams-and-async.md`): the load-compute-store
//! pattern, done sequentially on one stream and pipelined on 2, 4 and 8
//! streams, each timed with events, results checked, and the speed-up printed
//! against the ideal bound max(copy in, compute, copy out). The 4-stream run's
//! timeline is written as Chrome trace JSON and as SVG (into the directory
//! named by `GPU_TIMELINE_DIR`, or the current one).
//!
//! Run: `cargo run --release --example day7_pipeline`

use gpu_kernels::{busy, busy_rounds_lasting};
use gpu_runtime::{
    backend, launch, spans_to_chrome_trace, spans_to_svg, Backend, DeviceBuffer, Event,
    PinnedBuffer, Pipeline, SpanKind, Stream, Timeline,
};
use std::error::Error;
use std::process::ExitCode;

const CHUNKS: usize = 16;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("day7_pipeline: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    // 256 MiB of f32 on a GPU; a small problem on the CPU simulator, and on a
    // GPU under compute-sanitizer (`GPU_TEST_SMALL=1`, set by scripts/sanitize.sh).
    let n: usize = if backend() == Backend::Cuda && std::env::var_os("GPU_TEST_SMALL").is_none() {
        64 << 20
    } else {
        1 << 18
    };
    let stream = Stream::new()?;
    let input = PinnedBuffer::from_slice(
        &(0..n)
            .map(|i| (i % 1000) as f32 / 1000.0)
            .collect::<Vec<_>>(),
    )?;
    let mut device_in = DeviceBuffer::<f32>::zeroed_on(n, &stream)?;
    let mut device_out = DeviceBuffer::<f32>::zeroed_on(n, &stream)?;
    let blocks = n.div_ceil(256);

    // The kernel should take about as long as one copy.
    let copy_in_ms = timed(&stream, || Ok(device_in.copy_from_pinned(&input, &stream)?))?;
    let rounds = busy_rounds_lasting(copy_in_ms, &device_in, &mut device_out, &stream)?;

    // Sequential: one stream, copy in, compute, copy out, each timed.
    let mut sequential = PinnedBuffer::<f32>::new(n)?;
    let mut timeline = Timeline::new(&stream)?;
    timeline.record(&stream, 0, SpanKind::CopyIn, "all", || {
        device_in.copy_from_pinned(&input, &stream)
    })?;
    timeline.record(
        &stream,
        0,
        SpanKind::Kernel,
        "all",
        || launch!(busy[blocks, 256, stream](&device_in, rounds, &mut device_out)),
    )?;
    timeline.record(&stream, 0, SpanKind::CopyOut, "all", || {
        device_out.copy_to_pinned(&mut sequential, &stream)
    })?;
    let stages = timeline.spans()?;
    let stage = |k: SpanKind| {
        stages
            .iter()
            .find(|s| s.kind == k)
            .map(|s| s.end_ms - s.start_ms)
            .unwrap_or(0.0)
    };
    let (t_in, t_kernel, t_out) = (
        stage(SpanKind::CopyIn),
        stage(SpanKind::Kernel),
        stage(SpanKind::CopyOut),
    );
    let sequential_ms = stages.iter().map(|s| s.end_ms).fold(0.0, f64::max) - stages[0].start_ms;
    let bound = t_in.max(t_kernel).max(t_out);
    let expected = sequential.as_slice()?.to_vec();
    for i in (0..n).step_by(4099) {
        let mut v = (i % 1000) as f32 / 1000.0;
        for _ in 0..rounds {
            v = v.mul_add(0.999, 0.001);
        }
        if expected[i] != v {
            return Err(
                format!("element {i}: {} on the device, {v} on the CPU", expected[i]).into(),
            );
        }
    }

    println!(
        "{} elements ({} MiB), {CHUNKS} chunks, kernel of {rounds} rounds",
        n,
        (n * 4) >> 20
    );
    println!("sequential stages: copy in {t_in:.3} ms, compute {t_kernel:.3} ms, copy out {t_out:.3} ms; total {sequential_ms:.3} ms");
    println!("ideal bound max(copy in, compute, copy out) = {bound:.3} ms: at most {:.2}x faster than sequential", sequential_ms / bound);
    println!("| streams | time       | speed-up vs sequential | time / ideal bound |");
    println!("|---------|------------|------------------------|--------------------|");
    println!(
        "| 1 (seq) | {sequential_ms:>7.3} ms | {:>22} | {:>18.2} |",
        "1.00x",
        sequential_ms / bound
    );
    for count in [2usize, 4, 8] {
        let streams: Vec<Stream> = (0..count)
            .map(|_| Stream::new())
            .collect::<Result<_, _>>()?;
        let mut pipeline = Pipeline::new(&streams)?;
        let mut output = PinnedBuffer::<f32>::new(n)?;
        let mut run = |output: &mut PinnedBuffer<f32>, timeline: Option<&mut Timeline>| {
            pipeline.run(
                &input,
                output,
                CHUNKS,
                timeline,
                |s, x, out| launch!(busy[x.len().div_ceil(256), 256, s](x, rounds, out)),
            )
        };
        // Warm-up (allocates the staging buffers, first use of each stream).
        run(&mut output, None)?;
        output.as_slice()?; // waits for it
                            // Timed: an event on the first stream that the others wait for, the
                            // pipeline, the others joined back, an event after.
        let start = streams[0].record()?;
        for s in &streams[1..] {
            s.wait_event(&start)?;
        }
        run(&mut output, None)?;
        for s in &streams[1..] {
            streams[0].wait_event(&s.record()?)?;
        }
        let end = streams[0].record()?;
        let ms = Event::elapsed_ms(&start, &end)? as f64;
        if output.as_slice()? != &expected[..] {
            return Err(format!(
                "the {count}-stream pipeline's result differs from the sequential one"
            )
            .into());
        }
        println!(
            "| {count:>7} | {ms:>7.3} ms | {:>21.2}x | {:>18.2} |",
            sequential_ms / ms,
            ms / bound
        );
        if count == 4 {
            // Once more with a timeline (its events cost a little time).
            let mut timeline = Timeline::new(&streams[0])?;
            run(&mut output, Some(&mut timeline))?;
            let spans = timeline.spans()?;
            let lanes: Vec<String> = (0..count).map(|i| format!("stream {i}")).collect();
            let dir = std::path::PathBuf::from(
                std::env::var("GPU_TIMELINE_DIR").unwrap_or_else(|_| ".".into()),
            );
            std::fs::write(
                dir.join("day7_timeline.json"),
                spans_to_chrome_trace(&spans, &lanes),
            )?;
            std::fs::write(dir.join("day7_timeline.svg"), spans_to_svg(&spans, &lanes))?;
        }
    }
    println!("day7_pipeline: results of every pipeline match the sequential run; timeline written to day7_timeline.json and .svg");
    Ok(())
}

/// Milliseconds of the work `f` queues on `stream`, by events.
fn timed(
    stream: &Stream,
    f: impl FnOnce() -> Result<(), Box<dyn Error>>,
) -> Result<f64, Box<dyn Error>> {
    let start = stream.record()?;
    f()?;
    let end = stream.record()?;
    Ok(Event::elapsed_ms(&start, &end)? as f64)
}
