//! `#[vectorize]` beside a hand-written `#[kernel]` and Numba's
//! `@vectorize(target='cuda')`, and `#[vectorize(reduce)]` beside the
//! library's hand-written `gpu_ops::sum` and Numba's `@cuda.reduce`, in one
//! run; then the device random numbers checked against numba-cuda's.
//!
//! - `a + b` on f32 (2^20 and 2^24 elements) into a preallocated output on
//!   a stream: GPU time per call (events, median of 30);
//! - the sum of f64 (same sizes) into a one-element device buffer;
//! - `gpu_test_kernels::random::xoroshiro_draws` for seeds 1 and 12345 and
//!   70 threads, two launches, against `numba_rng_reference.py` (numba-cuda's
//!   `create_xoroshiro128p_states` and draws): the states and the uniform
//!   draws must be equal to the bit, the normal draws within 16 ulp (libm
//!   beside libdevice); any difference fails the run.
//!
//! `scripts/gpu-bundle.sh` builds this; on the GPU machine run it with
//! `--helpers DIR`, the directory holding `vectorize.py` and
//! `numba_rng_reference.py` (with numba-cuda installed).
//!
//! `--quick` (2^12 elements, 3 repeats, and the random numbers against the
//! script's `--emulate` mode, plain Python, instead of numba-cuda) checks the
//! benchmark itself on the simulator: `cargo bench --bench vectorize --
//! --quick --helpers benches/python`.

#[path = "common/mod.rs"]
mod common;

use common::{bench_args, median, ratio, run_helper, show, Res, Results};
use gpu_device::random::Xoroshiro128p;
use gpu_ops::random::create_xoroshiro128p_states;
use gpu_runtime::{launch, Device, DeviceBuffer, Event, Stream};
use gpu_test_kernels::random::xoroshiro_draws;
use gpu_test_kernels::vectorized::{sum_reduce, vector_add, vector_add_by_hand};
use std::process::Command;

const SIZES: [usize; 2] = [1 << 20, 1 << 24];
const QUICK_SIZES: [usize; 1] = [1 << 12];
const RNG_SEEDS: [u64; 2] = [1, 12345];
const RNG_THREADS: usize = 70;

/// Median GPU time in µs of `work` on `stream` over `repeats` calls, timed
/// with events, after 3 warm-up calls.
fn gpu_us(stream: &Stream, repeats: usize, mut work: impl FnMut() -> Res<()>) -> Res<f64> {
    for _ in 0..3 {
        work()?;
    }
    let (start, end) = (Event::new()?, Event::new()?);
    let mut times = Vec::new();
    for _ in 0..repeats {
        start.record_on(stream)?;
        work()?;
        end.record_on(stream)?;
        times.push(Event::elapsed_ms(&start, &end)? as f64 * 1e3);
    }
    Ok(median(times))
}

fn main() -> Res<()> {
    let (helpers, flags) = bench_args(&["--quick"])?;
    let quick = !flags.is_empty();
    let (sizes, repeats): (&[usize], usize) = if quick {
        (&QUICK_SIZES, 3)
    } else {
        (&SIZES, 30)
    };
    let device = Device::get(0)?;
    let stream = Stream::new()?;
    let mut results = Results::new();
    for &n in sizes {
        let ha: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        let hb: Vec<f32> = (0..n).map(|i| (i % 89) as f32).collect();
        let a = DeviceBuffer::to_device_sync(&ha, &stream)?;
        let b = DeviceBuffer::to_device_sync(&hb, &stream)?;
        let mut out = DeviceBuffer::<f32>::zeroed_on(n, &stream)?;
        let us = gpu_us(&stream, repeats, || {
            Ok(vector_add::launch(&a, &b, &mut out, &stream)?)
        })?;
        results.insert(format!("rust_vectorize_{n}"), us);
        check_sum(&out.copy_to_host_sync(&stream)?, &ha, &hb, "#[vectorize]")?;
        out.zero(&stream)?;
        let us = gpu_us(&stream, repeats, || {
            Ok(launch!(vector_add_by_hand[n.div_ceil(256), 256, stream](&a, &b, &mut out))?)
        })?;
        results.insert(format!("rust_by_hand_{n}"), us);
        check_sum(&out.copy_to_host_sync(&stream)?, &ha, &hb, "by hand")?;
        drop((a, b, out));

        let hx: Vec<f64> = (0..n).map(|i| (i % 13) as f64).collect();
        let want: f64 = hx.iter().sum();
        let x = DeviceBuffer::to_device_sync(&hx, &stream)?;
        let mut result = DeviceBuffer::<f64>::zeroed_on(1, &stream)?;
        let us = gpu_us(&stream, repeats, || {
            Ok(sum_reduce::reduce_into(&x, &mut result, &stream)?)
        })?;
        results.insert(format!("rust_reduce_{n}"), us);
        let got = result.copy_to_host_sync(&stream)?[0];
        if got != want {
            return Err(format!("#[vectorize(reduce)] summed {got}, expected {want}").into());
        }
        let us = gpu_us(&stream, repeats, || {
            gpu_ops::sum_on(&x, &stream)?;
            Ok(())
        })?;
        results.insert(format!("rust_ops_sum_{n}"), us);
    }

    let mut notes = Vec::new();
    let rng = match &helpers {
        Some(dir) => {
            if quick {
                notes.push("Numba: its timings not run (--quick)".into());
            } else {
                run_helper(
                    &mut results,
                    &mut notes,
                    "Numba",
                    Command::new("python3").arg(dir.join("vectorize.py")),
                );
            }
            Some(compare_rng_with_numba(
                &dir.join("numba_rng_reference.py"),
                quick,
                &stream,
            ))
        }
        None => {
            notes.push("Numba: not run (no --helpers): neither its timings nor the random numbers' comparison".into());
            None
        }
    };

    let get = |k: String| results.get(&k).copied();
    println!();
    println!("GPU: {}", device.name());
    println!();
    println!("a + b on f32 into a preallocated output, and the sum of f64 into a device scalar, on a stream: GPU time per call, events, median of {repeats}");
    println!("| what                                   | elements | time         | vs by hand | vs Numba | goal                  |");
    println!("|----------------------------------------|----------|--------------|------------|----------|-----------------------|");
    for &n in sizes {
        let hand = get(format!("rust_by_hand_{n}"));
        let numba = get(format!("numba_vectorize_{n}"));
        let v = get(format!("rust_vectorize_{n}"));
        println!("| #[vectorize] vector_add::launch        | 2^{:<6} | {:>12} | {:>10} | {:>8} | <= 1.05x by hand      |", n.trailing_zeros(), show(v, 2, "us"), ratio(v, hand), ratio(v, numba));
        println!("| #[kernel] by hand, launch!             | 2^{:<6} | {:>12} | 1.00x      | {:>8} | -                     |", n.trailing_zeros(), show(hand, 2, "us"), ratio(hand, numba));
        println!("| Numba @vectorize(out=, stream=)        | 2^{:<6} | {:>12} | {:>10} | 1.00x    | -                     |", n.trailing_zeros(), show(numba, 2, "us"), ratio(numba, hand));
        let ops = get(format!("rust_ops_sum_{n}"));
        let numba = get(format!("numba_reduce_{n}"));
        let r = get(format!("rust_reduce_{n}"));
        println!("| #[vectorize(reduce)] reduce_into       | 2^{:<6} | {:>12} | {:>10} | {:>8} | <= Numba              |", n.trailing_zeros(), show(r, 2, "us"), ratio(r, ops), ratio(r, numba));
        println!("| gpu_ops::sum_on (by hand)              | 2^{:<6} | {:>12} | 1.00x      | {:>8} | -                     |", n.trailing_zeros(), show(ops, 2, "us"), ratio(ops, numba));
        println!("| Numba @cuda.reduce(res=, stream=)      | 2^{:<6} | {:>12} | {:>10} | 1.00x    | -                     |", n.trailing_zeros(), show(numba, 2, "us"), ratio(numba, ops));
    }
    for note in notes {
        println!("note: {note}");
    }
    match rng {
        Some(Ok(lines)) => {
            println!();
            let against = if quick {
                "the script's plain-Python emulation (--quick)"
            } else {
                "numba-cuda"
            };
            println!("device random numbers against {against} (seeds {RNG_SEEDS:?}, {RNG_THREADS} threads, two launches of 24 draws each)");
            println!("| seed  | states equal | uniform_f32 equal | uniform_f64 equal | normal_f32 largest ulp | normal_f64 largest ulp |");
            println!("|-------|--------------|-------------------|-------------------|------------------------|------------------------|");
            let mut failed = false;
            for line in lines {
                println!("{}", line.row);
                failed |= !line.ok;
            }
            if failed {
                return Err(format!(
                    "the device random numbers differ from {against}'s (see the table)"
                )
                .into());
            }
            println!("device random numbers: equal to {against}'s");
        }
        Some(Err(e)) => println!("note: random numbers against numba-cuda: not compared ({e})"),
        None => {}
    }
    Ok(())
}

fn check_sum(out: &[f32], a: &[f32], b: &[f32], what: &str) -> Res<()> {
    match (0..out.len())
        .step_by(4099)
        .find(|&i| out[i] != a[i] + b[i])
    {
        Some(i) => Err(format!(
            "{what}: element {i} is {}, expected {}",
            out[i],
            a[i] + b[i]
        )
        .into()),
        None => Ok(()),
    }
}

/// One seed's row of the comparison, and whether it passed.
struct RngLine {
    row: String,
    ok: bool,
}

/// The distance in units in the last place between two floats' bit patterns
/// (of one sign; `u64::MAX` across signs).
fn ulps(a: u64, b: u64, sign_bit: u64) -> u64 {
    if (a ^ b) & sign_bit != 0 {
        return if a == b { 0 } else { u64::MAX };
    }
    a.abs_diff(b)
}

fn compare_rng_with_numba(
    script: &std::path::Path,
    emulate: bool,
    stream: &Stream,
) -> Res<Vec<RngLine>> {
    let seeds = RNG_SEEDS.map(|s| s.to_string()).join(",");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .args(["--seeds", &seeds, "--threads", &RNG_THREADS.to_string()]);
    if emulate {
        command.arg("--emulate");
    }
    let out = command.output()?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    let reference: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let mut lines = Vec::new();
    for seed in RNG_SEEDS {
        let entry = &reference["seeds"][seed.to_string()];
        let numba_states: Vec<(u64, u64)> = entry["states"]
            .as_array()
            .ok_or("no states in the reference")?
            .iter()
            .map(|s| (s[0].as_u64().unwrap_or(0), s[1].as_u64().unwrap_or(0)))
            .collect();
        let mut states = create_xoroshiro128p_states(RNG_THREADS, seed, stream)?;
        let ours: Vec<(u64, u64)> = states
            .copy_to_host_sync(stream)?
            .iter()
            .map(|s: &Xoroshiro128p| (s.s0, s.s1))
            .collect();
        let states_equal = ours == numba_states;
        let (mut u32_equal, mut u64_equal, mut total) = (0usize, 0usize, 0usize);
        let (mut n32_ulp, mut n64_ulp) = (0u64, 0u64);
        for launch_number in 0..2 {
            let n = RNG_THREADS;
            let mut u32s = DeviceBuffer::<[f32; 4]>::zeroed_on(n, stream)?;
            let mut u64s = DeviceBuffer::<[f64; 4]>::zeroed_on(n, stream)?;
            let mut n32s = DeviceBuffer::<[f32; 4]>::zeroed_on(n, stream)?;
            let mut n64s = DeviceBuffer::<[f64; 4]>::zeroed_on(n, stream)?;
            launch!(xoroshiro_draws[n.div_ceil(64), 64, stream](&mut states, &mut u32s, &mut u64s, &mut n32s, &mut n64s))?;
            let theirs = &entry["launches"][launch_number];
            let bits =
                |key: &str, i: usize, k: usize| theirs[key][i][k].as_u64().unwrap_or(u64::MAX);
            let (u32s, u64s) = (
                u32s.copy_to_host_sync(stream)?,
                u64s.copy_to_host_sync(stream)?,
            );
            let (n32s, n64s) = (
                n32s.copy_to_host_sync(stream)?,
                n64s.copy_to_host_sync(stream)?,
            );
            for i in 0..n {
                for k in 0..4 {
                    total += 1;
                    u32_equal +=
                        usize::from(u32s[i][k].to_bits() as u64 == bits("uniform_f32", i, k));
                    u64_equal += usize::from(u64s[i][k].to_bits() == bits("uniform_f64", i, k));
                    n32_ulp = n32_ulp.max(ulps(
                        n32s[i][k].to_bits() as u64,
                        bits("normal_f32", i, k),
                        1 << 31,
                    ));
                    n64_ulp = n64_ulp.max(ulps(
                        n64s[i][k].to_bits(),
                        bits("normal_f64", i, k),
                        1 << 63,
                    ));
                }
            }
        }
        // normal_f64 takes the logarithm of an f32 in f32 (as Numba): its
        // error is an f32's, some 2^29 ulp of an f64.
        let ok = states_equal
            && u32_equal == total
            && u64_equal == total
            && n32_ulp <= 16
            && n64_ulp <= 16 << 29;
        lines.push(RngLine {
            row: format!(
                "| {seed:<5} | {:<12} | {:>8} / {:<6} | {:>8} / {:<6} | {:>22} | {:>22} |",
                if states_equal { "yes" } else { "NO" },
                u32_equal,
                total,
                u64_equal,
                total,
                n32_ulp,
                n64_ulp
            ),
            ok,
        });
    }
    Ok(lines)
}
