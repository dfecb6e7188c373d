//! The CPU simulator beside Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`)
//! on the same machine, running the same kernels: `add_kernel`, a
//! shared-memory block reduction, a block scan and a tiled matrix multiply
//! (Numba's at the sizes it finishes in minutes; this one's at 2^20 too),
//! and a tensor-core (warp-level MMA) tiled product, which Numba's simulator
//! cannot run; what the race detector costs when on; atomics; the overhead
//! of a simulated launch of an empty kernel; and, with `--scaling`, the 2^20
//! reduction on 1, 2, 4, ... OS threads up to the host's cores
//! (`GPU_SIM_THREADS`; 1, 2, 4, 8, 16 on 16 cores). Each figure is the
//! median wall time, with the minimum and the process's CPU time per run
//! beside it (on a loaded machine the steadier two).
//!
//! Needs no GPU: `cargo bench -p gpu-benches --bench simulator -- --helpers
//! python` (the directory holding `numba_simulator.py`, relative to
//! `benches/`, where cargo runs the benchmarks of this package; Numba from
//! PyPI), and `cargo bench -p gpu-benches --bench simulator -- --scaling`
//! for the core scaling. `-- --quick` runs only add_kernel and the
//! reduction at 2^16 (31 launches each, three times; `QUICK_ROUNDS=n`
//! launches once), for comparing builds of the simulator back to back.

#[path = "common/mod.rs"]
mod common;

use common::{bench_args, median, ratio, run_helper, show, Res, Results};
use gpu_device::bf16;
use gpu_kernels::add_kernel;
use gpu_runtime::{
    backend, launch, set_race_check, Backend, DeviceBuffer, Stream, BACKEND_ENV, SIM_THREADS_ENV,
};
use gpu_test_kernels::classic::matmul_tiled;
use gpu_test_kernels::tensor_cores::mma_tiled_bf16;
use gpu_test_kernels::{block_scan, block_sum_static, empty, histogram};
use std::process::Command;
use std::time::Instant;

/// The size both simulators run.
const SHARED_SIZE: usize = 1 << 16;
/// The size, for this simulator.
const LARGE_SIZE: usize = 1 << 20;
/// The scan's size on both simulators (Numba's takes minutes at 2^16).
const SCAN_SIZE: usize = 1 << 14;
/// The side of the square matrices both simulators multiply.
const MATMUL_SIDE: usize = 64;
/// The side this simulator multiplies too.
const MATMUL_LARGE_SIDE: usize = 512;

/// The Numba column of a kernel Numba's simulator cannot run.
const NOT_IN_NUMBA: &str = "n/a";

/// The side of the square bf16 matrices of the tensor-core row.
const MMA_SIDE: usize = 64;

/// Median wall time in seconds of `rounds` runs of `work`, each followed by
/// a synchronize, after one run to warm up.
fn seconds(stream: &Stream, rounds: usize, mut work: impl FnMut() -> Res<()>) -> Res<f64> {
    work()?;
    stream.synchronize()?;
    let cpu = cpu_seconds();
    let mut times = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        work()?;
        stream.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    let cpu = (cpu_seconds() - cpu) / rounds as f64;
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    *LAST.lock().unwrap_or_else(|e| e.into_inner()) = (min, cpu);
    Ok(median(times))
}

/// Records the minimum wall time and the CPU time per run of the last
/// `seconds` as `<key>_min` and `<key>_cpu`.
fn record_min(results: &mut Results, key: &str) {
    let (min, cpu) = *LAST.lock().unwrap_or_else(|e| e.into_inner());
    results.insert(format!("{key}_min"), min);
    results.insert(format!("{key}_cpu"), cpu);
}

/// The minimum wall time and the CPU time per run of the last `seconds`.
static LAST: std::sync::Mutex<(f64, f64)> = std::sync::Mutex::new((0.0, 0.0));

/// Median seconds of `add_kernel` on `n` elements, result checked.
fn add(stream: &Stream, n: usize, rounds: usize) -> Res<f64> {
    let a_host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let b = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(n, stream)?;
    let s = seconds(stream, rounds, || {
        Ok(launch!(add_kernel[n / 256, 256, stream](&a, &b, &mut c))?)
    })?;
    if c.copy_to_host_sync(stream)?
        .iter()
        .enumerate()
        .any(|(i, &v)| v != 2.0 * i as f32)
    {
        return Err("add_kernel computed a wrong result".into());
    }
    Ok(s)
}

/// Median seconds of `block_sum_static` on `n` elements, result checked.
fn reduce(stream: &Stream, n: usize, rounds: usize) -> Res<f64> {
    let ones = DeviceBuffer::to_device_sync(&vec![1.0f32; n], stream)?;
    let mut sums = DeviceBuffer::<f32>::zeroed_on(n / 256, stream)?;
    let s = seconds(stream, rounds, || {
        Ok(launch!(block_sum_static[n / 256, 256, stream](&ones, &mut sums))?)
    })?;
    if sums.copy_to_host_sync(stream)?.iter().any(|&v| v != 256.0) {
        return Err("block_sum_static computed a wrong result".into());
    }
    Ok(s)
}

/// Median seconds of `block_scan` on `n` elements, result checked.
fn scan(stream: &Stream, n: usize, rounds: usize) -> Res<f64> {
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let input = DeviceBuffer::to_device_sync(&values, stream)?;
    let mut out = DeviceBuffer::<f32>::zeroed_on(n, stream)?;
    let s = seconds(stream, rounds, || {
        Ok(launch!(block_scan[n / 256, 256, stream](&input, &mut out))?)
    })?;
    let got = out.copy_to_host_sync(stream)?;
    let mut sum = 0.0;
    for (i, (&v, &g)) in values.iter().zip(&got).enumerate() {
        sum = if i % 256 == 0 { v } else { sum + v };
        if g != sum {
            return Err(format!("block_scan computed a wrong result at {i}").into());
        }
    }
    Ok(s)
}

/// Median seconds of `matmul_tiled` on `side x side` matrices, result checked.
fn matmul(stream: &Stream, side: usize, rounds: usize) -> Res<f64> {
    let a_host: Vec<f32> = (0..side * side).map(|i| (i % 5) as f32).collect();
    let b_host: Vec<f32> = (0..side * side).map(|i| (i % 3) as f32).collect();
    let a = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let b = DeviceBuffer::to_device_sync(&b_host, stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(side * side, stream)?;
    let tiles = side.div_ceil(16);
    let s = seconds(stream, rounds, || {
        Ok(launch!(matmul_tiled[(tiles, tiles), (16, 16), stream](
            &a,
            &b,
            side,
            c.view_2d_mut(side, side)?
        ))?)
    })?;
    let got = c.copy_to_host_sync(stream)?;
    for (row, col) in [(0, 0), (side - 1, side - 1), (side / 2, 3)] {
        let expected: f32 = (0..side)
            .map(|k| a_host[row * side + k] * b_host[k * side + col])
            .sum();
        if got[row * side + col] != expected {
            return Err("matmul_tiled computed a wrong result".into());
        }
    }
    Ok(s)
}

/// Median seconds of `mma_tiled_bf16` (`A Bᵀ`, warp-level m16n8k16 bf16
/// tensor-core fragments, one 16 x 8 tile per block of one warp) on
/// `side x side` matrices, every element checked against the host.
fn mma(stream: &Stream, side: usize, rounds: usize) -> Res<f64> {
    let value = |i: usize, seed: usize| bf16::from_f32(((i * seed) % 17) as f32 / 8.0 - 1.0);
    let a_host: Vec<bf16> = (0..side * side).map(|i| value(i, 7)).collect();
    let b_host: Vec<bf16> = (0..side * side).map(|i| value(i, 5)).collect();
    let a = DeviceBuffer::to_device_sync(&a_host, stream)?;
    let b = DeviceBuffer::to_device_sync(&b_host, stream)?;
    let tiles = (side / 16) * (side / 8);
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32 * tiles, stream)?;
    let s = seconds(stream, rounds, || {
        Ok(launch!(mma_tiled_bf16[tiles, 32, stream](
            &a, &b, side, side, &mut out
        ))?)
    })?;
    // Each lane holds four (row, column, value) triples of its tile.
    let mut seen = vec![false; side * side];
    for lane in out.copy_to_host_sync(stream)? {
        for e in 0..4 {
            let (row, col) = (lane[3 * e] as usize, lane[3 * e + 1] as usize);
            let wrong = || format!("mma_tiled_bf16 computed a wrong result at ({row}, {col})");
            if row >= side || col >= side || seen[row * side + col] {
                return Err(wrong().into());
            }
            // The values are multiples of 1/8 of magnitude at most 1: every
            // product and partial sum is exact in f32, in any order.
            let expected: f32 = (0..side)
                .map(|k| a_host[row * side + k].to_f32() * b_host[col * side + k].to_f32())
                .sum();
            if lane[3 * e + 2] != expected {
                return Err(wrong().into());
            }
            seen[row * side + col] = true;
        }
    }
    Ok(s)
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

/// The process's CPU time so far (user and system, all threads), in
/// seconds: on a loaded machine a steadier measure of work than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime
    // are the 12th and 13th of them, in clock ticks (100 per second).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// `--quick`: add_kernel and the reduction at 2^16, 31 launches each, three
/// times (`QUICK_ROUNDS` launches, once, if set below 31): the minimum and
/// median wall time and the CPU time per launch.
fn quick(stream: &Stream) -> Res<()> {
    let rounds: usize = std::env::var("QUICK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(31);
    for _ in 0..if rounds < 31 { 1 } else { 3 } {
        for (what, f) in [
            ("add 2^16", add as fn(&Stream, usize, usize) -> Res<f64>),
            ("reduce 2^16", reduce),
        ] {
            let median = f(stream, SHARED_SIZE, rounds)?;
            let (min, cpu) = *LAST.lock().unwrap_or_else(|e| e.into_inner());
            println!(
                "quick: {what}: min {:.3} ms, median {:.3} ms, CPU {:.3} ms per launch",
                min * 1e3,
                median * 1e3,
                cpu * 1e3
            );
        }
    }
    Ok(())
}

/// The 2^20 reduction with `GPU_SIM_THREADS` = 1, 2, 4, ... up to the
/// host's cores, each in a child process (the pool is sized once per
/// process): a table of times and speed-ups over one thread.
fn scaling() -> Res<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts: Vec<usize> = std::iter::successors(Some(1), |&n| Some(n * 2))
        .take_while(|&n| n < cores)
        .collect();
    counts.push(cores);
    println!("Block reduction, 2^20 elements (4096 blocks of 256), by OS threads; {cores} cores");
    println!("| threads | median of 9 | speed-up over 1 |");
    println!("|---------|-------------|-----------------|");
    let mut one = None;
    for threads in counts {
        let out = Command::new(std::env::current_exe()?)
            .arg("--reduce-large")
            .env(SIM_THREADS_ENV, threads.to_string())
            .output()?;
        let seconds: f64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("RESULT reduce_large_s "))
            .ok_or_else(|| {
                format!(
                    "the child with {threads} threads printed no result: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })?
            .trim()
            .parse()?;
        let base = *one.get_or_insert(seconds);
        println!(
            "| {threads:>7} | {:>8.1} ms | {:>15} |",
            seconds * 1e3,
            format!("{:.2}x", base / seconds)
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let (helpers, flags) = bench_args(&["--scaling", "--reduce-large", "--quick"])?;
    // This benchmark is about the simulator, with or without a GPU present.
    std::env::set_var(BACKEND_ENV, "simulator");
    assert_eq!(backend(), Backend::Simulator);
    // Off unless a row asks (the workspace's cargo config turns it on for tests).
    set_race_check(false);
    if flags.iter().any(|f| f == "--scaling") {
        return scaling();
    }
    let stream = Stream::new()?;
    if flags.iter().any(|f| f == "--quick") {
        return quick(&stream);
    }
    if flags.iter().any(|f| f == "--reduce-large") {
        println!("RESULT reduce_large_s {}", reduce(&stream, LARGE_SIZE, 9)?);
        return Ok(());
    }
    let mut results = Results::new();
    for (n, tag, rounds) in [(SHARED_SIZE, "small", 21), (LARGE_SIZE, "large", 5)] {
        results.insert(format!("rust_add_{tag}_s"), add(&stream, n, rounds)?);
        record_min(&mut results, &format!("rust_add_{tag}_s"));
        results.insert(format!("rust_reduce_{tag}_s"), reduce(&stream, n, rounds)?);
        record_min(&mut results, &format!("rust_reduce_{tag}_s"));
    }
    results.insert("rust_scan_s".into(), scan(&stream, SCAN_SIZE, 21)?);
    record_min(&mut results, "rust_scan_s");
    results.insert("rust_scan_large_s".into(), scan(&stream, LARGE_SIZE, 5)?);
    record_min(&mut results, "rust_scan_large_s");
    results.insert("rust_matmul_s".into(), matmul(&stream, MATMUL_SIDE, 21)?);
    record_min(&mut results, "rust_matmul_s");
    results.insert(
        "rust_matmul_large_s".into(),
        matmul(&stream, MATMUL_LARGE_SIDE, 5)?,
    );
    record_min(&mut results, "rust_matmul_large_s");

    results.insert("rust_mma_s".into(), mma(&stream, MMA_SIDE, 5)?);
    record_min(&mut results, "rust_mma_s");

    set_race_check(true);
    results.insert("rust_add_checked_s".into(), add(&stream, SHARED_SIZE, 5)?);
    results.insert(
        "rust_reduce_checked_s".into(),
        reduce(&stream, SHARED_SIZE, 5)?,
    );
    results.insert(
        "rust_matmul_checked_s".into(),
        matmul(&stream, MATMUL_SIDE, 5)?,
    );
    set_race_check(false);

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
                .arg(SCAN_SIZE.to_string())
                .arg(MATMUL_SIDE.to_string())
                .env("NUMBA_ENABLE_CUDASIM", "1"),
        ),
        None => notes.push("Numba: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let ms = |k: &str| show(get(k).map(|v| v * 1e3), 3, "ms");
    let speedup = |ours: &str, theirs: &str| ratio(get(theirs), get(ours));
    println!();
    println!(
        "CPU simulator vs Numba's CUDA simulator, {} host threads (medians; the minimum and the process's CPU time per run beside)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| kernel (blocks of 256)                          | this simulator | min        | CPU per run | Numba simulator | speed-up | goal                |");
    println!("|-------------------------------------------------|----------------|------------|-------------|-----------------|----------|---------------------|");
    let row = |what: &str, ours: &str, theirs: Option<&str>, goal: &str| {
        println!(
            "| {what:<47} | {:>14} | {:>10} | {:>11} | {:>15} | {:>8} | {goal:<19} |",
            ms(ours),
            ms(&format!("{ours}_min")),
            ms(&format!("{ours}_cpu")),
            match theirs {
                None => "not run".into(),
                Some(NOT_IN_NUMBA) => NOT_IN_NUMBA.into(),
                Some(t) => ms(t),
            },
            match theirs {
                None | Some(NOT_IN_NUMBA) => "-".into(),
                Some(t) => speedup(ours, t),
            },
        )
    };
    row(
        "add_kernel, 2^16 elements",
        "rust_add_small_s",
        Some("numba_add_s"),
        "<= 1.5 ms, >= 5000x",
    );
    row(
        "shared-memory block reduction, 2^16 elements",
        "rust_reduce_small_s",
        Some("numba_reduce_s"),
        "<= 13 ms, >= 5000x",
    );
    row(
        "block scan (Hillis-Steele), 2^14 elements",
        "rust_scan_s",
        Some("numba_scan_s"),
        "-",
    );
    row(
        "tiled matmul 16x16, 64 x 64 x 64",
        "rust_matmul_s",
        Some("numba_matmul_s"),
        "-",
    );
    row("add_kernel, 2^20 elements", "rust_add_large_s", None, "-");
    row(
        "shared-memory block reduction, 2^20 elements",
        "rust_reduce_large_s",
        None,
        "-",
    );
    row("block scan, 2^20 elements", "rust_scan_large_s", None, "-");
    row(
        "tiled matmul 16x16, 512 x 512 x 512",
        "rust_matmul_large_s",
        None,
        "-",
    );
    row(
        "tensor-core mma (bf16 m16n8k16), 64^3, warps",
        "rust_mma_s",
        Some(NOT_IN_NUMBA),
        "-",
    );
    println!("note: Numba's simulator has no tensor-core (mma) operations: the mma row has no Numba figure (n/a)");
    println!();
    println!("| race detector (GPU_SIM_RACECHECK)               | off            | on             | cost     |");
    println!("|-------------------------------------------------|----------------|----------------|----------|");
    for (what, off, on) in [
        (
            "add_kernel, 2^16 elements",
            "rust_add_small_s",
            "rust_add_checked_s",
        ),
        (
            "shared-memory block reduction, 2^16 elements",
            "rust_reduce_small_s",
            "rust_reduce_checked_s",
        ),
        (
            "tiled matmul 16x16, 64 x 64 x 64",
            "rust_matmul_s",
            "rust_matmul_checked_s",
        ),
    ] {
        println!(
            "| {what:<47} | {:>14} | {:>14} | {:>8} |",
            ms(off),
            ms(on),
            ratio(get(on), get(off))
        );
    }
    println!();
    println!("| atomics: histogram of 2^20 values, 256 bins, blocks of 256 | this simulator |");
    println!("|------------------------------------------------------------|----------------|");
    println!(
        "| one atomic per thread (4096 blocks)                        | {:>14} |",
        ms("rust_histogram_1_s")
    );
    println!(
        "| 64 atomics per thread (64 blocks)                          | {:>14} |",
        ms("rust_histogram_64_s")
    );
    println!();
    println!("| empty kernel, 1 thread                      | this simulator | Numba simulator | goal    |");
    println!("|---------------------------------------------|----------------|-----------------|---------|");
    println!(
        "| per launch, 10000 queued then synchronize   | {:>14} | {:>15} | < 20 us |",
        show(get("rust_empty_us"), 3, "us"),
        show(get("numba_empty_us"), 3, "us")
    );
    println!(
        "| one launch + synchronize                    | {:>14} | {:>15} | -       |",
        show(get("rust_empty_sync_us"), 3, "us"),
        "-"
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
