//! CUDA graphs and futures, side by side in one run:
//!
//! - the per-kernel cost of a graph of 100 tiny kernels (`add_kernel` on one
//!   block of 256 threads) replayed with `GraphExec::launch`, against 100
//!   `launch!` calls, CUDA C's `cudaGraphLaunch` (and its separate
//!   launches) and CuPy's captured graph (`Stream.begin_capture` /
//!   `end_capture`, `Graph.launch`), all running the same PTX;
//! - the latency from a stream's completion to the awaiting task's wake-up
//!   (`stream.async_done().await` on tokio, single- and multi-threaded),
//!   against `synchronize()`: the stream's last work is a callback that reads
//!   the clock, and the waiter reads it again when it runs.
//!
//! `scripts/gpu-bundle.sh` builds this and runs it on the GPU machine:
//!
//! ```text
//! graphs_and_async --helpers DIR
//! ```
//!
//! `DIR` holds `graphs_cuda` (`benches/cuda/graphs.cu` built with `nvcc
//! -O3`) and `graphs.py`. Each prints `RESULT <name> <value> <unit>` lines,
//! gathered into one table here.

#[path = "common/mod.rs"]
mod common;

use common::{helpers_dir, kernels_ptx_file, median, ratio, run_helper, show, Res, Results};
use gpu_kernels::add_kernel;
use gpu_runtime::{launch, Device, DeviceBuffer, Stream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Kernels per graph (and per sequence of launches).
const KERNELS: usize = 100;
/// Sequences per timed round.
const REPLAYS: usize = 200;
/// Elements: one block of 256 threads.
const N: usize = 256;
/// Waits measured per latency figure.
const WAITS: usize = 2000;

/// Median over 7 rounds of the time per kernel, in µs, of `run` (one
/// sequence of `KERNELS` kernels) repeated `REPLAYS` times, then a synchronize.
fn per_kernel_us(mut run: impl FnMut() -> Res<()>, stream: &Stream) -> Res<f64> {
    for _ in 0..20 {
        run()?;
    }
    stream.synchronize()?;
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..REPLAYS {
            run()?;
        }
        stream.synchronize()?;
        rounds.push(start.elapsed().as_secs_f64() * 1e6 / (REPLAYS * KERNELS) as f64);
    }
    Ok(median(rounds))
}

/// 100 `launch!` calls per sequence, then the same 100 as a replayed graph.
fn rust_graph(results: &mut Results) -> Res<()> {
    let stream = Stream::new()?;
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; N], &stream)?;
    let mut p = DeviceBuffer::<f32>::device_array(N)?;
    let mut q = DeviceBuffer::<f32>::device_array(N)?;
    let sequence = |s: &Stream, p: &mut DeviceBuffer<f32>, q: &mut DeviceBuffer<f32>| {
        for k in 0..KERNELS {
            if k % 2 == 0 {
                launch!(add_kernel[1, N, s](&*p, &ones, &mut *q))?;
            } else {
                launch!(add_kernel[1, N, s](&*q, &ones, &mut *p))?;
            }
        }
        Ok::<(), gpu_runtime::Error>(())
    };
    let separate = per_kernel_us(|| Ok(sequence(&stream, &mut p, &mut q)?), &stream)?;
    results.insert("rust_separate_us".into(), separate);

    let graph = stream.capture(|s| sequence(s, &mut p, &mut q))?;
    let exec = graph.instantiate()?;
    p.zero(&stream)?;
    exec.launch(&stream)?;
    let first = p.copy_to_host_sync(&stream)?;
    if first.iter().any(|&v| v != KERNELS as f32) {
        return Err(format!("the graph computed {}, not {KERNELS}", first[0]).into());
    }
    let replay = per_kernel_us(|| Ok(exec.launch(&stream)?), &stream)?;
    results.insert("rust_graph_us".into(), replay);
    Ok(())
}

/// A stream with a tiny kernel queued, then a callback that notes when the
/// stream reached it: what the waiters below measure from.
fn queue_work(
    stream: &Stream,
    x: &mut DeviceBuffer<f32>,
    reached: &Arc<Mutex<Option<Instant>>>,
) -> Res<()> {
    launch!(gpu_kernels::fill[1, N, stream](1.0f32, &mut *x))?;
    let reached = Arc::clone(reached);
    stream.add_callback(move || {
        *reached.lock().unwrap() = Some(Instant::now());
    })?;
    Ok(())
}

/// Median µs from the stream's completion to the waiter's return, for
/// `wait` (which waits for the stream).
fn completion_to_wake_us(mut wait: impl FnMut(&Stream) -> Res<()>) -> Res<f64> {
    let stream = Stream::new()?;
    let mut x = DeviceBuffer::<f32>::device_array(N)?;
    let reached = Arc::new(Mutex::new(None));
    let mut samples = Vec::new();
    for i in 0..WAITS + 50 {
        queue_work(&stream, &mut x, &reached)?;
        wait(&stream)?;
        let woke = Instant::now();
        let at = reached
            .lock()
            .unwrap()
            .take()
            .ok_or("the callback had not run")?;
        if i >= 50 {
            samples.push((woke - at).as_secs_f64() * 1e6);
        }
    }
    Ok(median(samples))
}

fn latencies(results: &mut Results) -> Res<()> {
    results.insert(
        "sync_wake_us".into(),
        completion_to_wake_us(|s| Ok(s.synchronize()?))?,
    );
    let single = tokio::runtime::Builder::new_current_thread().build()?;
    results.insert(
        "await_current_thread_us".into(),
        completion_to_wake_us(|s| Ok(single.block_on(s.async_done()?)?))?,
    );
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()?;
    results.insert(
        "await_multi_thread_us".into(),
        completion_to_wake_us(|s| {
            let done = s.async_done()?;
            // Awaited by a task on a worker thread; this thread waits for the task.
            Ok(multi.block_on(multi.spawn(done))??)
        })?,
    );
    Ok(())
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    let device = Device::get(0)?;
    let mut results = Results::new();
    let mut notes = Vec::new();
    rust_graph(&mut results)?;
    latencies(&mut results)?;
    match &helpers {
        Some(dir) => {
            let ptx = kernels_ptx_file()?;
            let bin = dir.join("graphs_cuda");
            if bin.is_file() {
                run_helper(
                    &mut results,
                    &mut notes,
                    "CUDA C",
                    Command::new(bin).arg(&ptx),
                );
            } else {
                notes.push("CUDA C: not run (no graphs_cuda)".into());
            }
            run_helper(
                &mut results,
                &mut notes,
                "CuPy",
                Command::new("python3").arg(dir.join("graphs.py")).arg(&ptx),
            );
            let _ = std::fs::remove_file(ptx);
        }
        None => notes.push("CUDA C, CuPy: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let us = |v: Option<f64>| show(v, 3, "us");
    let graph = get("rust_graph_us");
    println!();
    println!("GPU: {}", device.name());
    println!();
    println!("A graph of {KERNELS} tiny kernels (add_kernel, 1 block of {N} threads), time per kernel, median of 7 rounds of {REPLAYS} sequences");
    println!("| what                                | per kernel   | vs graph replay | vs CUDA C graph | goal                         |");
    println!("|-------------------------------------|--------------|-----------------|-----------------|------------------------------|");
    println!(
        "| GraphExec::launch (this crate)      | {:>12} | {:>15} | {:>15} | within 5% of CUDA C's graph  |",
        us(graph),
        "1.00x",
        ratio(graph, get("cuda_c_graph_us"))
    );
    println!(
        "| 100 launch! calls (this crate)      | {:>12} | {:>15} | {:>15} | >= 3x the graph's cost       |",
        us(get("rust_separate_us")),
        ratio(get("rust_separate_us"), graph),
        ratio(get("rust_separate_us"), get("cuda_c_graph_us"))
    );
    println!(
        "| cudaGraphLaunch (CUDA C)            | {:>12} | {:>15} | {:>15} | -                            |",
        us(get("cuda_c_graph_us")),
        ratio(get("cuda_c_graph_us"), graph),
        "1.00x"
    );
    println!(
        "| 100 cuLaunchKernel (CUDA C)         | {:>12} | {:>15} | {:>15} | -                            |",
        us(get("cuda_c_separate_us")),
        ratio(get("cuda_c_separate_us"), graph),
        ratio(get("cuda_c_separate_us"), get("cuda_c_graph_us"))
    );
    println!(
        "| Graph.launch (CuPy)                 | {:>12} | {:>15} | {:>15} | -                            |",
        us(get("cupy_graph_us")),
        ratio(get("cupy_graph_us"), graph),
        ratio(get("cupy_graph_us"), get("cuda_c_graph_us"))
    );
    println!(
        "| 100 RawKernel calls (CuPy)          | {:>12} | {:>15} | {:>15} | -                            |",
        us(get("cupy_separate_us")),
        ratio(get("cupy_separate_us"), graph),
        ratio(get("cupy_separate_us"), get("cuda_c_graph_us"))
    );
    println!();
    println!("From a stream's completion (a callback reads the clock) to the waiter running again, median of {WAITS}");
    println!("| waiter                                      | latency      | goal     |");
    println!("|---------------------------------------------|--------------|----------|");
    println!(
        "| stream.synchronize()                        | {:>12} | -        |",
        us(get("sync_wake_us"))
    );
    println!(
        "| async_done().await, tokio current-thread    | {:>12} | < 20 us  |",
        us(get("await_current_thread_us"))
    );
    println!(
        "| async_done().await, tokio multi-thread      | {:>12} | < 20 us  |",
        us(get("await_multi_thread_us"))
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
