//! Two GPUs, in one run (issue #11's table):
//!
//! - **peer copy of 1 GiB** between the GPUs (`copy_from_device` with a buffer
//!   of the other device, `cuMemcpyPeerAsync`, peer access enabled both
//!   ways), each direction, against CUDA C's `cudaMemcpyPeerAsync` of
//!   `cudaMalloc` memory (`peer_copy_cuda`); events, median of 11;
//! - **the Day 7 pipeline on 2 GPUs against 1**: 512 MiB of f32 in 32 chunks,
//!   4 streams per GPU, the kernel about as long as copying its chunk in;
//!   events, median of 5; then options that could raise the 2-GPU figure,
//!   the same pipeline in CUDA C (`multi_gpu_pipeline_cuda`), the copies
//!   alone (`copy_bound_cuda`: the bound of any pipeline through host
//!   memory) and what limits the speed-up (`multi_gpu/pipeline.rs`);
//! - **all-reduce of 256 MiB of f32** (sum): bus bandwidth as NCCL's tests
//!   compute it (`algbw * 2(n-1)/n`), one process driving both GPUs
//!   (`Communicators`) and one process per GPU (`Communicator`, this binary
//!   run again as each rank), against PyTorch's
//!   `torch.distributed.all_reduce` (NCCL backend, one process per GPU,
//!   `allreduce.py`); host clock around batches of 10, median of 5 batches.
//!
//! On a machine with fewer than 2 devices it says so and exits 0.
//! `scripts/gpu-bundle.sh` builds it; on the GPU machine run it with
//! `--helpers DIR`, the directory with `peer_copy_cuda`,
//! `multi_gpu_pipeline_cuda`, `copy_bound_cuda` and `allreduce.py`.

#[path = "common/mod.rs"]
mod common;
#[path = "multi_gpu/pipeline.rs"]
mod pipeline;

use common::{helpers_dir, median, ratio, run_helper, show, Res, Results};
use gpu_runtime::{
    backend, Backend, Communicator, Communicators, Device, DeviceBuffer, Event, ReduceOp, Stream,
    UniqueId, UNIQUE_ID_ENV,
};
use std::process::Command;
use std::time::Instant;

/// The sizes on GPUs; on the simulator (`GPU_SIM_DEVICES=2`, to try the
/// benchmark's code) each is divided by [`SIMULATOR_SHRINK`].
const PEER_BYTES: usize = 1 << 30;
const ALLREDUCE_ELEMENTS: usize = 64 << 20; // 256 MiB of f32
const SIMULATOR_SHRINK: usize = 1 << 10;

/// `size` on a GPU, shrunk on the simulator.
fn sized(size: usize) -> usize {
    match backend() {
        Backend::Cuda => size,
        Backend::Simulator => size / SIMULATOR_SHRINK,
    }
}
/// Set in the rank processes of the multi-process all-reduce.
const RANK_ENV: &str = "MULTI_GPU_BENCH_RANK";

fn main() -> Res<()> {
    if let Ok(rank) = std::env::var(RANK_ENV) {
        return allreduce_rank(rank.parse()?);
    }
    let helpers = helpers_dir()?;
    let count = Device::count()?;
    if count < 2 {
        println!(
            "multi_gpu: needs 2 GPUs; this machine has {count} device(s) ({:?} backend): nothing measured",
            backend()
        );
        return Ok(());
    }
    if backend() == Backend::Simulator {
        println!("multi_gpu: on the CPU simulator, with every size divided by {SIMULATOR_SHRINK}: the figures say nothing of GPUs");
    }
    let (d0, d1) = (Device::get(0)?, Device::get(1)?);
    let mut results = Results::new();
    let mut notes = Vec::new();

    // Peer copies.
    for (a, b) in [(d0, d1), (d1, d0)] {
        if a.can_access_peer(b)? {
            a.enable_peer_access(b)?;
        } else {
            notes.push(format!(
                "no peer access from device {} to device {}: copies go through the host",
                a.ordinal(),
                b.ordinal()
            ));
        }
    }
    let (s0, s1) = (Stream::on_device(d0)?, Stream::on_device(d1)?);
    let mut on0 = DeviceBuffer::<u8>::zeroed_on(sized(PEER_BYTES), &s0)?;
    let mut on1 = DeviceBuffer::<u8>::zeroed_on(sized(PEER_BYTES), &s1)?;
    on0.fill(7, &s0)?;
    for (key, stream) in [
        ("rust_peer_copy_01_gbps", &s0),
        ("rust_peer_copy_10_gbps", &s1),
    ] {
        let mut times = Vec::new();
        for i in 0..12 {
            let start = stream.record()?;
            if stream == &s0 {
                on1.copy_from_device(&on0, stream)?;
            } else {
                on0.copy_from_device(&on1, stream)?;
            }
            let end = stream.record()?;
            let ms = Event::elapsed_ms(&start, &end)? as f64;
            if i > 0 {
                times.push(ms); // the first is a warm-up
            }
        }
        results.insert(
            key.into(),
            sized(PEER_BYTES) as f64 / (median(times) * 1e-3) / 1e9,
        );
        // The bytes arrived (7s from device 0, copied there and back).
        let last = sized(PEER_BYTES) - 4;
        for (buffer, own) in [(&on0, &s0), (&on1, &s1)] {
            let ends = [buffer.slice(0..4), buffer.slice(last..last + 4)];
            for end in ends.into_iter().flatten() {
                if end.copy_to_host_sync(own)? != [7; 4] {
                    return Err("a peer copy did not carry its data".into());
                }
            }
        }
    }
    drop((on0, on1));

    pipeline::measure(&[d0, d1], helpers.as_deref(), &mut results, &mut notes)?;
    allreduce_one_process(&[d0, d1], &mut results)?;
    allreduce_processes(2, &mut results, &mut notes);

    match &helpers {
        Some(dir) => {
            let bin = dir.join("peer_copy_cuda");
            if bin.is_file() {
                run_helper(&mut results, &mut notes, "CUDA C", &mut Command::new(bin));
            } else {
                notes.push("CUDA C: not run (no peer_copy_cuda)".into());
            }
            run_helper(
                &mut results,
                &mut notes,
                "PyTorch",
                Command::new("python3")
                    .arg(dir.join("allreduce.py"))
                    .arg(sized(ALLREDUCE_ELEMENTS).to_string())
                    .arg("2"),
            );
        }
        None => notes.push(
            "CUDA C (peer copy, pipeline, copies alone), PyTorch: not run (no --helpers)".into(),
        ),
    }

    let get = |k: &str| results.get(k).copied();
    let show = |v: Option<f64>, unit: &str| show(v, 2, unit);
    println!();
    println!("GPUs: 2 x {}", d0.name());
    println!();
    println!(
        "| {:<56} | {:<12} | {:<28} | {:<7} | {:<8} |",
        "measurement", "measured", "reference", "ratio", "goal"
    );
    println!(
        "|{:-<58}|{:-<14}|{:-<30}|{:-<9}|{:-<10}|",
        "", "", "", "", ""
    );
    for (dir, ours, theirs) in [
        (
            "0 -> 1",
            "rust_peer_copy_01_gbps",
            "cuda_c_peer_copy_01_gbps",
        ),
        (
            "1 -> 0",
            "rust_peer_copy_10_gbps",
            "cuda_c_peer_copy_10_gbps",
        ),
    ] {
        row(
            &format!("peer copy of 1 GiB, {dir}"),
            show(get(ours), "GB/s"),
            format!("{} (CUDA C)", show(get(theirs), "GB/s")),
            ratio(get(ours), get(theirs)),
            ">= 0.97x",
        );
    }
    pipeline::rows(&results);
    for (what, ours) in [
        ("one process, 2 GPUs", "rust_allreduce_busbw_gbps"),
        ("one process per GPU", "rust_mp_allreduce_busbw_gbps"),
    ] {
        row(
            &format!("all-reduce 256 MiB f32, {what}"),
            show(get(ours), "GB/s"),
            format!(
                "{} (PyTorch)",
                show(get("torch_allreduce_busbw_gbps"), "GB/s")
            ),
            ratio(get(ours), get("torch_allreduce_busbw_gbps")),
            ">= 0.97x",
        );
    }
    println!();
    println!(
        "Pipeline: kernel of {} rounds; all-reduce: bus bandwidth = algbw * 2(n-1)/n, n = 2 (one all-reduce: {} ms here, {} ms PyTorch)",
        get("pipeline_rounds").unwrap_or(0.0),
        show(get("rust_allreduce_ms"), "").trim(),
        show(get("torch_allreduce_ms"), "").trim()
    );
    println!();
    println!("What limits the pipeline on 2 GPUs:");
    for line in pipeline::limits(&results) {
        println!("- {line}");
    }
    println!();
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}

/// One row of the table: what, this crate's figure, the reference, their
/// ratio and the goal.
fn row(what: &str, ours: String, reference: String, ratio: String, goal: &str) {
    println!("| {what:<56} | {ours:>12} | {reference:>28} | {ratio:>7} | {goal:>8} |");
}

/// Seconds per all-reduce: 5 warm-ups, then the median of 5 batches of 10,
/// host clock, `queue` queueing one all-reduce and `wait` waiting for all.
fn time_allreduce(mut queue: impl FnMut() -> Res<()>, wait: impl Fn() -> Res<()>) -> Res<f64> {
    for _ in 0..5 {
        queue()?;
    }
    wait()?;
    let mut batches = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..10 {
            queue()?;
        }
        wait()?;
        batches.push(start.elapsed().as_secs_f64() / 10.0);
    }
    Ok(median(batches))
}

/// Bus bandwidth in GB/s of an all-reduce of 256 MiB taking `seconds` on `ranks`.
fn bus_bandwidth(seconds: f64, ranks: usize) -> f64 {
    let bytes = (sized(ALLREDUCE_ELEMENTS) * 4) as f64;
    bytes / seconds / 1e9 * 2.0 * (ranks as f64 - 1.0) / ranks as f64
}

fn allreduce_one_process(devices: &[Device], results: &mut Results) -> Res<()> {
    let mut comms = Communicators::new(devices)?;
    let streams = devices
        .iter()
        .map(|&d| Stream::on_device(d))
        .collect::<Result<Vec<_>, _>>()?;
    let mut buffers = streams
        .iter()
        .map(|s| DeviceBuffer::to_device_sync(&vec![1.0f32; sized(ALLREDUCE_ELEMENTS)], s))
        .collect::<Result<Vec<_>, _>>()?;
    let seconds = time_allreduce(
        || Ok(comms.all_reduce_in_place(buffers.iter_mut(), ReduceOp::Sum, &streams)?),
        || {
            for s in &streams {
                s.synchronize()?;
            }
            Ok(())
        },
    )?;
    // 5 + 50 in-place sums of ones on 2 ranks, each doubling: 2^55, exact in f32.
    let first = buffers[0]
        .slice(0..4)
        .expect("4 elements")
        .copy_to_host_sync(&streams[0])?;
    if first != [2f32.powi(55); 4] {
        return Err(format!("all-reduce result {first:?}, expected 2^55").into());
    }
    results.insert("rust_allreduce_ms".into(), seconds * 1e3);
    results.insert(
        "rust_allreduce_busbw_gbps".into(),
        bus_bandwidth(seconds, devices.len()),
    );
    Ok(())
}

/// Runs this binary once per rank; rank 0 prints the figure.
fn allreduce_processes(ranks: usize, results: &mut Results, notes: &mut Vec<String>) {
    let id = match UniqueId::new() {
        Ok(id) => id,
        Err(e) => return notes.push(format!("one process per GPU: not run: {e}")),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return notes.push(format!("one process per GPU: not run: {e}")),
    };
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            Command::new(&exe)
                .env(RANK_ENV, format!("{rank}/{ranks}"))
                .env(UNIQUE_ID_ENV, id.to_hex())
                .stdout(std::process::Stdio::piped())
                .spawn()
        })
        .collect();
    for (rank, child) in children.into_iter().enumerate() {
        let mut parsed = Results::new();
        match child.and_then(|c| c.wait_with_output()) {
            Ok(out) => {
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    if let ["RESULT", name, value, ..] =
                        line.split_whitespace().collect::<Vec<_>>()[..]
                    {
                        if let Ok(v) = value.parse() {
                            parsed.insert(name.to_string(), v);
                        }
                    }
                }
                if !out.status.success() {
                    notes.push(format!(
                        "one process per GPU: rank {rank} failed: {}",
                        out.status
                    ));
                }
            }
            Err(e) => notes.push(format!("one process per GPU: rank {rank}: {e}")),
        }
        results.extend(parsed);
    }
}

/// One rank of the multi-process all-reduce (`RANK/RANKS` in [`RANK_ENV`]).
fn allreduce_rank(which: String) -> Res<()> {
    let (rank, ranks) = which
        .split_once('/')
        .and_then(|(r, n)| Some((r.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
        .ok_or_else(|| format!("{RANK_ENV}={which}: expected RANK/RANKS"))?;
    let device = Device::get(rank)?;
    let id = UniqueId::from_env(UNIQUE_ID_ENV)?;
    let mut comm = Communicator::init_rank(&id, ranks, rank, device)?;
    let stream = Stream::on_device(device)?;
    let mut buffer =
        DeviceBuffer::to_device_sync(&vec![1.0f32; sized(ALLREDUCE_ELEMENTS)], &stream)?;
    let seconds = time_allreduce(
        || Ok(comm.all_reduce_in_place(&mut buffer, ReduceOp::Sum, &stream)?),
        || Ok(stream.synchronize()?),
    )?;
    if rank == 0 {
        println!("RESULT rust_mp_allreduce_ms {} ms", seconds * 1e3);
        println!(
            "RESULT rust_mp_allreduce_busbw_gbps {} GB/s",
            bus_bandwidth(seconds, ranks)
        );
    }
    Ok(())
}
