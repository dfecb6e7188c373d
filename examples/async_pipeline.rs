//! The Day 7 pipeline (copy in, compute, copy out, in chunks over 4 streams)
//! driven from tokio, as a service would: each batch is queued while the
//! previous one runs, and awaited without blocking a thread
//! (`Pipeline::async_done`). Meanwhile another task on the same
//! single-threaded runtime keeps running, which a blocking `synchronize()`
//! would stall. Each batch's result is checked against the CPU.
//!
//! Run: `cargo run --release --example async_pipeline --features async`

use gpu_kernels::busy;
use gpu_runtime::{
    backend, launch, Backend, DeviceView, DeviceViewMut, PinnedBuffer, Pipeline, Stream,
};
use std::error::Error;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BATCHES: usize = 6;
const CHUNKS: usize = 16;
const ROUNDS: u32 = 200;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("async_pipeline: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The kernel's result for one input value, on the CPU.
fn expected(x: f32) -> f32 {
    (0..ROUNDS).fold(x, |v, _| v.mul_add(0.999, 0.001))
}

async fn run() -> Result<(), Box<dyn Error>> {
    let n: usize = if backend() == Backend::Cuda {
        16 << 20
    } else {
        1 << 15
    };
    let streams: Vec<Stream> = (0..4).map(|_| Stream::new()).collect::<Result<_, _>>()?;
    let mut pipeline = Pipeline::new(&streams)?;
    let inputs: Vec<PinnedBuffer<f32>> = (0..BATCHES)
        .map(|b| PinnedBuffer::from_slice(&vec![b as f32 / BATCHES as f32; n]))
        .collect::<Result<_, _>>()?;
    let mut outputs: Vec<PinnedBuffer<f32>> = (0..BATCHES)
        .map(|_| PinnedBuffer::new(n))
        .collect::<Result<_, _>>()?;
    let kernel = |s: &Stream, x: DeviceView<'_, f32>, out: DeviceViewMut<'_, f32>| launch!(busy[x.len().div_ceil(256), 256, s](x, ROUNDS, out));

    // A task that ticks while the batches run: it only runs if awaiting the
    // GPU leaves the (single) thread free.
    let ticks = Arc::new(AtomicU64::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                ticks.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
        })
    };

    let start = Instant::now();
    // Batch b is queued, then batch b - 1 awaited: one batch always in flight
    // behind the one being awaited.
    let mut in_flight = None;
    for (b, output) in outputs.iter_mut().enumerate() {
        pipeline.run(&inputs[b], output, CHUNKS, None, kernel)?;
        let done = pipeline.async_done()?;
        if let Some((previous, previous_done)) = in_flight.replace((b, done)) {
            let previous_done: gpu_runtime::Done = previous_done;
            previous_done.await?;
            println!(
                "batch {previous} done at {:>8.3} ms",
                start.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    if let Some((last, done)) = in_flight {
        done.await?;
        println!(
            "batch {last} done at {:>8.3} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    let elapsed = start.elapsed();
    ticker.abort();

    for (b, output) in outputs.iter().enumerate() {
        let want = expected(b as f32 / BATCHES as f32);
        // Done: reading does not wait.
        let seen = output.as_slice()?;
        if let Some(i) = seen.iter().position(|&v| v != want) {
            return Err(format!(
                "batch {b}, element {i}: {} on the device, {want} on the CPU",
                seen[i]
            )
            .into());
        }
    }
    let ticks = ticks.load(Ordering::Relaxed);
    println!(
        "{BATCHES} batches of {n} elements in {:.3} ms; the other task ticked {ticks} times meanwhile",
        elapsed.as_secs_f64() * 1e3
    );
    if ticks < 2 {
        return Err("the other task did not run while the batches were awaited".into());
    }
    println!("async_pipeline: every batch matches the CPU");
    Ok(())
}
