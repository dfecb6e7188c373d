//! The CPU simulator beside Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`)
//! on the same machine, running the same kernels: `add_kernel` and a
//! shared-memory block reduction, at 2^16 elements (both simulators) and
//! 2^20 (this one; Numba's did not finish 2^20 in 18 minutes here); and the
//! overhead of a simulated launch of an empty kernel.
//!
//! Needs no GPU: `cargo bench --bench simulator -- --helpers benches/python`
//! (the directory holding `numba_simulator.py`; Numba from PyPI).

#[path = "common/mod.rs"]
mod common;

use common::{helpers_dir, median, ratio, run_helper, show, Res, Results};
use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Stream, BACKEND_ENV};
use gpu_test_kernels::{block_sum_static, empty, histogram};
use gpu_tutorial_kernels::add_kernel;
use std::process::Command;
use std::time::Instant;

/// The size both simulators run.
const SHARED_SIZE: usize = 1 << 16;
/// The size, for this simulator.
const LARGE_SIZE: usize = 1 << 20;

/// Median wall time in seconds of `work` followed by a synchronize.
fn seconds(stream: &Stream, rounds: usize, mut work: impl FnMut() -> Res<()>) -> Res<f64> {
    work()?;
    stream.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        work()?;
        stream.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(median(times))
}

/// Median seconds of `add_kernel` and of `block_sum_static` on `n` elements,
/// results checked.
fn kernels(stream: &Stream, n: usize) -> Res<(f64, f64)> {
    let a_host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let b = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(n, stream)?;
    let add = seconds(stream, 5, || {
        Ok(launch!(add_kernel[n / 256, 256, stream](&a, &b, &mut c))?)
    })?;
    if c.copy_to_host_sync(stream)?
        .iter()
        .enumerate()
        .any(|(i, &v)| v != 2.0 * i as f32)
    {
        return Err("add_kernel computed a wrong result".into());
    }
    let ones = DeviceBuffer::to_device_sync(&vec![1.0f32; n], stream)?;
    let mut sums = DeviceBuffer::<f32>::zeroed_on(n / 256, stream)?;
    let reduce = seconds(stream, 5, || {
        Ok(launch!(block_sum_static[n / 256, 256, stream](&ones, &mut sums))?)
    })?;
    if sums.copy_to_host_sync(stream)?.iter().any(|&v| v != 256.0) {
        return Err("block_sum_static computed a wrong result".into());
    }
    Ok((add, reduce))
}

/// Median seconds of `histogram` on 2^20 values into 256 bins, with one
/// atomic per thread (4096 blocks) and 64 per thread (64 blocks), results
/// checked: the cost of atomics, and of the simulator's yield every few of them.
fn histograms(stream: &Stream) -> Res<(f64, f64)> {
    let n = LARGE_SIZE;
    let values: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 5)
        .collect();
    let mut expected = vec![0u32; 256];
    for v in &values {
        expected[*v as usize % 256] += 1;
    }
    let input = DeviceBuffer::to_device_sync(&values, stream)?;
    let mut bins = DeviceBuffer::<u32>::zeroed_on(256, stream)?;
    let mut time = |blocks: usize| -> Res<f64> {
        let s = seconds(stream, 5, || {
            bins.copy_from_host_sync(&[0; 256], stream)?;
            Ok(launch!(histogram[blocks, 256, stream](&input, &mut bins))?)
        })?;
        if bins.copy_to_host_sync(stream)? != expected {
            return Err("histogram computed a wrong result".into());
        }
        Ok(s)
    };
    Ok((time(n / 256)?, time(n / 256 / 64)?))
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    // This benchmark is about the simulator, with or without a GPU present.
    std::env::set_var(BACKEND_ENV, "simulator");
    assert_eq!(backend(), Backend::Simulator);
    let stream = Stream::new()?;
    let mut results = Results::new();

    for (n, tag) in [(SHARED_SIZE, "small"), (LARGE_SIZE, "large")] {
        let (add, reduce) = kernels(&stream, n)?;
        results.insert(format!("rust_add_{tag}_s"), add);
        results.insert(format!("rust_reduce_{tag}_s"), reduce);
    }

    let (one, many) = histograms(&stream)?;
    results.insert("rust_histogram_1_s".into(), one);
    results.insert("rust_histogram_64_s".into(), many);

    let launches = 10_000;
    let s = seconds(&stream, 3, || {
        for _ in 0..launches {
            launch!(empty[1, 1, stream]())?;
        }
        Ok(())
    })?;
    results.insert("rust_empty_us".into(), s / launches as f64 * 1e6);
    let s = seconds(&stream, 101, || Ok(launch!(empty[1, 1, stream]())?))?;
    results.insert("rust_empty_sync_us".into(), s * 1e6);

    let mut notes = Vec::new();
    match &helpers {
        Some(dir) => run_helper(
            &mut results,
            &mut notes,
            "Numba",
            Command::new("python3")
                .arg(dir.join("numba_simulator.py"))
                .arg(SHARED_SIZE.to_string())
                .env("NUMBA_ENABLE_CUDASIM", "1"),
        ),
        None => notes.push("Numba: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let show = |v: Option<f64>, scale: f64, unit: &str| show(v.map(|v| v * scale), 3, unit);
    let speedup = |ours: Option<f64>, theirs: Option<f64>| ratio(theirs, ours);
    println!();
    println!(
        "CPU simulator vs Numba's CUDA simulator, {} host threads",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| kernel (blocks of 256)                                | this simulator | Numba simulator | speed-up | goal    |");
    println!("|-------------------------------------------------------|----------------|-----------------|----------|---------|");
    println!("| add_kernel, 2^16 elements                             | {:>14} | {:>15} | {:>8} | >= 100x |", show(get("rust_add_small_s"), 1e3, "ms"), show(get("numba_add_s"), 1e3, "ms"), speedup(get("rust_add_small_s"), get("numba_add_s")));
    println!("| shared-memory block reduction, 2^16 elements          | {:>14} | {:>15} | {:>8} | >= 100x |", show(get("rust_reduce_small_s"), 1e3, "ms"), show(get("numba_reduce_s"), 1e3, "ms"), speedup(get("rust_reduce_small_s"), get("numba_reduce_s")));
    println!("| add_kernel, 2^20 elements                             | {:>14} | {:>15} | {:>8} | >= 100x |", show(get("rust_add_large_s"), 1e3, "ms"), "not run", "-");
    println!("| shared-memory block reduction, 2^20 elements          | {:>14} | {:>15} | {:>8} | >= 100x |", show(get("rust_reduce_large_s"), 1e3, "ms"), "not run", "-");
    println!();
    println!("| atomics: histogram of 2^20 values, 256 bins, blocks of 256 | this simulator |");
    println!("|------------------------------------------------------------|----------------|");
    println!(
        "| one atomic per thread (4096 blocks)                        | {:>14} |",
        show(get("rust_histogram_1_s"), 1e3, "ms")
    );
    println!(
        "| 64 atomics per thread (64 blocks)                          | {:>14} |",
        show(get("rust_histogram_64_s"), 1e3, "ms")
    );
    println!();
    println!("| empty kernel, 1 thread                      | this simulator | Numba simulator | goal    |");
    println!("|---------------------------------------------|----------------|-----------------|---------|");
    println!(
        "| per launch, 10000 queued then synchronize   | {:>14} | {:>15} | < 20 us |",
        show(get("rust_empty_us"), 1.0, "us"),
        show(get("numba_empty_us"), 1.0, "us")
    );
    println!(
        "| one launch + synchronize                    | {:>14} | {:>15} | -       |",
        show(get("rust_empty_sync_us"), 1.0, "us"),
        "-"
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
