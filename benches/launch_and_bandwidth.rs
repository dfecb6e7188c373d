//! Launch cost and `add_kernel` bandwidth, side by side in one run:
//! `launch!` against a bare `cust` launch of the same PTX function, CUDA C
//! built by `nvcc -O3`, CuPy's `RawKernel` and Numba's `@cuda.jit`.
//!
//! `scripts/gpu-bundle.sh` builds this and runs it on the GPU machine:
//!
//! ```text
//! launch_and_bandwidth --helpers DIR
//! ```
//!
//! `DIR` holds `add_kernel_cuda` (`benches/cuda/add_kernel.cu` built with
//! `nvcc -O3`) and `launch_and_bandwidth.py`. Each prints `RESULT <name>
//! <value> <unit>` lines, gathered into one table here.

#[path = "common/mod.rs"]
mod common;

use common::{
    helpers_dir, kernels_ptx_file, median, ratio, run_helper, show, Res, Results,
    BARE_CUST_NOT_BUILT,
};
use gpu_kernels::add_kernel;
use gpu_runtime::{launch, Device, DeviceBuffer, Event, Stream};
use gpu_test_kernels::add_unchecked;
use std::process::Command;
use std::time::Instant;

// Many short rounds rather than a few long ones: the ratio of one pair of
// rounds moves by several percent with the machine (GPU clocks, the
// driver's queue), and its median over 41 pairs is steadier than over 11
// (benches/NOTES.md, "Launch cost: the estimator").
const LAUNCHES: usize = 5_000;
const ROUNDS: usize = 41;
const SMALL: usize = 256;
const BIG: usize = 16 << 20;

/// Microseconds per launch of one round: `LAUNCHES` launches, then a
/// synchronisation.
fn round_us(launch_once: &mut dyn FnMut() -> Res<()>, sync: &dyn Fn() -> Res<()>) -> Res<f64> {
    let start = Instant::now();
    for _ in 0..LAUNCHES {
        launch_once()?;
    }
    sync()?;
    Ok(start.elapsed().as_secs_f64() * 1e6 / LAUNCHES as f64)
}

/// `launch!` and a bare `cust` launch of the same PTX function, measured in
/// alternating rounds (so that the machine's drift reaches both alike), in
/// the same (primary) context. Returns the median per-launch time of each and
/// the median of the rounds' ratios, launch! over cust.
#[cfg(feature = "bare-cust")]
fn launch_costs_us() -> Res<(f64, Option<f64>, Option<[f64; 3]>)> {
    use cust::memory::CopyDestination;
    use cust::prelude::Module as CustModule;
    use cust::stream::{Stream as CustStream, StreamFlags};
    use gpu_kernels::KERNEL_MODULE;
    use std::ffi::c_void;

    // This crate first: its primary context is then current on the thread,
    // and cust's calls below use it too.
    let stream = Stream::new()?;
    let a = DeviceBuffer::to_device_sync(&vec![1.0f32; SMALL], &stream)?;
    let b = DeviceBuffer::to_device_sync(&vec![2.0f32; SMALL], &stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(SMALL, &stream)?;
    let mut rust = || -> Res<()> { Ok(launch!(add_kernel[1, SMALL, stream](&a, &b, &mut c))?) };
    let rust_sync = || -> Res<()> { Ok(stream.synchronize()?) };

    let module = CustModule::from_ptx(KERNEL_MODULE.ptx(), &[])?;
    let function = module.get_function("add_kernel__1d")?;
    let cust_stream = CustStream::new(StreamFlags::NON_BLOCKING, None)?;
    let ca = cust::memory::DeviceBuffer::from_slice(&vec![1.0f32; SMALL])?;
    let cb = cust::memory::DeviceBuffer::from_slice(&vec![2.0f32; SMALL])?;
    let cc = cust::memory::DeviceBuffer::from_slice(&vec![0.0f32; SMALL])?;
    let (pa, pb, pc) = (
        ca.as_device_ptr().as_raw(),
        cb.as_device_ptr().as_raw(),
        cc.as_device_ptr().as_raw(),
    );
    let n = SMALL;
    let mut bare = || -> Res<()> {
        let args: [*mut c_void; 6] = [
            &pa as *const u64 as *mut c_void,
            &n as *const usize as *mut c_void,
            &pb as *const u64 as *mut c_void,
            &n as *const usize as *mut c_void,
            &pc as *const u64 as *mut c_void,
            &n as *const usize as *mut c_void,
        ];
        // SAFETY: the six pointers match add_kernel's PTX parameters
        // (pointer and length for each slice) and the buffers outlive the launch.
        unsafe { cust_stream.launch(&function, 1, SMALL as u32, 0, &args)? };
        Ok(())
    };
    let bare_sync = || -> Res<()> { Ok(cust_stream.synchronize()?) };

    // Warm-up of both.
    for _ in 0..1000 {
        rust()?;
        bare()?;
    }
    rust_sync()?;
    bare_sync()?;
    let (mut rust_times, mut bare_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let r = round_us(&mut rust, &rust_sync)?;
        let b = round_us(&mut bare, &bare_sync)?;
        rust_times.push(r);
        bare_times.push(b);
        ratios.push(r / b);
    }
    if c.copy_to_host_sync(&stream)?.iter().any(|&x| x != 3.0) {
        return Err("launch! benchmark computed a wrong result".into());
    }
    let mut out = vec![0.0f32; SMALL];
    cc.copy_to(&mut out[..])?;
    if out.iter().any(|&x| x != 3.0) {
        return Err("cust benchmark computed a wrong result".into());
    }
    Ok((
        median(rust_times),
        Some(median(bare_times)),
        Some(quartiles(ratios)),
    ))
}

/// The lower quartile, the median and the upper quartile of `values`.
#[cfg(feature = "bare-cust")]
fn quartiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(|a, b| a.total_cmp(b));
    let at = |q: usize| values[(values.len() - 1) * q / 4];
    [at(1), at(2), at(3)]
}

/// `launch!` alone, where this benchmark was built without the `bare-cust`
/// feature (its baseline links libcuda): the bare cust column stays empty.
#[cfg(not(feature = "bare-cust"))]
fn launch_costs_us() -> Res<(f64, Option<f64>, Option<[f64; 3]>)> {
    let stream = Stream::new()?;
    let a = DeviceBuffer::to_device_sync(&vec![1.0f32; SMALL], &stream)?;
    let b = DeviceBuffer::to_device_sync(&vec![2.0f32; SMALL], &stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(SMALL, &stream)?;
    let mut rust = || -> Res<()> { Ok(launch!(add_kernel[1, SMALL, stream](&a, &b, &mut c))?) };
    let rust_sync = || -> Res<()> { Ok(stream.synchronize()?) };
    for _ in 0..1000 {
        rust()?;
    }
    rust_sync()?;
    let mut rust_times = Vec::new();
    for _ in 0..ROUNDS {
        rust_times.push(round_us(&mut rust, &rust_sync)?);
    }
    if c.copy_to_host_sync(&stream)?.iter().any(|&x| x != 3.0) {
        return Err("launch! benchmark computed a wrong result".into());
    }
    Ok((median(rust_times), None, None))
}

/// Which Rust kernel the bandwidth run launches.
#[derive(Clone, Copy)]
enum AddVariant {
    /// `add_kernel`: safe, bounds-checked, written through the thread-index witness.
    Safe,
    /// `testing::add_unchecked`: unchecked, as CUDA C is written.
    Unchecked,
}

fn rust_add_gbps(variant: AddVariant) -> Res<f64> {
    let stream = Stream::new()?;
    let a_host: Vec<f32> = (0..BIG).map(|i| (i % 1000) as f32).collect();
    let b_host: Vec<f32> = (0..BIG).map(|i| 2.0 * (i % 777) as f32).collect();
    let a = DeviceBuffer::to_device_sync(&a_host, &stream)?;
    let b = DeviceBuffer::to_device_sync(&b_host, &stream)?;
    let mut c = DeviceBuffer::<f32>::device_array(BIG)?;
    let blocks = BIG.div_ceil(256);
    let run = |c: &mut DeviceBuffer<f32>| match variant {
        AddVariant::Safe => launch!(add_kernel[blocks, 256, stream](&a, &b, c)),
        AddVariant::Unchecked => launch!(add_unchecked[blocks, 256, stream](&a, &b, c)),
    };
    for _ in 0..10 {
        run(&mut c)?;
    }
    let (start, stop) = (Event::new()?, Event::new()?);
    let mut times = Vec::new();
    for _ in 0..50 {
        start.record_on(&stream)?;
        run(&mut c)?;
        stop.record_on(&stream)?;
        times.push(Event::elapsed_ms(&start, &stop)? as f64);
    }
    let c_host = c.copy_to_host_sync(&stream)?;
    if (0..BIG).any(|i| c_host[i] != a_host[i] + b_host[i]) {
        return Err("add_kernel bandwidth run computed a wrong result".into());
    }
    let ms = median(times);
    Ok(3.0 * BIG as f64 * 4.0 / (ms * 1e-3) / 1e9)
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    let device = Device::get(0)?;
    let mut results = Results::new();
    let mut notes = Vec::new();

    let (rust_us, cust_us, paired) = launch_costs_us()?;
    results.insert("rust_launch_us".to_string(), rust_us);
    match cust_us {
        Some(us) => {
            results.insert("cust_launch_us".to_string(), us);
        }
        None => notes.push(BARE_CUST_NOT_BUILT.into()),
    }
    results.insert(
        "rust_add_16M_gbps".to_string(),
        rust_add_gbps(AddVariant::Safe)?,
    );
    results.insert(
        "rust_unchecked_add_16M_gbps".to_string(),
        rust_add_gbps(AddVariant::Unchecked)?,
    );
    match &helpers {
        Some(dir) => {
            let bin = dir.join("add_kernel_cuda");
            if bin.is_file() {
                run_helper(&mut results, &mut notes, "CUDA C", &mut Command::new(bin));
            } else {
                notes.push("CUDA C: not run (no add_kernel_cuda)".into());
            }
            let ptx = kernels_ptx_file()?;
            let script = dir.join("launch_and_bandwidth.py");
            run_helper(
                &mut results,
                &mut notes,
                "CuPy/Numba",
                Command::new("python3").arg(script).arg(&ptx),
            );
        }
        None => notes.push("CUDA C, CuPy and Numba: not run (no --helpers)".into()),
    }

    let get = |k: &str| results.get(k).copied();
    let fmt = |v: Option<f64>, unit: &str| show(v, 3, unit);
    let rust = get("rust_launch_us");
    println!();
    println!(
        "GPU: {} (compute capability {}.{})",
        device.name(),
        device.limits().compute_capability.0,
        device.limits().compute_capability.1
    );
    println!();
    println!("Launch cost: add_kernel (3 buffers, tracked), 1 block of {SMALL} threads, {LAUNCHES} launches + synchronize, median of {ROUNDS} rounds alternating launch! and bare cust");
    println!("| launcher                 | time per launch | relative to launch! | goal                      |");
    println!("|--------------------------|-----------------|---------------------|---------------------------|");
    println!(
        "| launch! (this crate)     | {:>15} | {:>19} | -                         |",
        fmt(rust, "us"),
        "1.00x"
    );
    println!(
        "| bare cust launch         | {:>15} | {:>19} | launch! within 5% of this |",
        fmt(get("cust_launch_us"), "us"),
        ratio(get("cust_launch_us"), rust)
    );
    println!(
        "| CUDA C <<<>>> (nvcc -O3) | {:>15} | {:>19} | -                         |",
        fmt(get("cuda_c_launch_us"), "us"),
        ratio(get("cuda_c_launch_us"), rust)
    );
    println!(
        "| CuPy RawKernel           | {:>15} | {:>19} | >= 1.5x                   |",
        fmt(get("cupy_rawkernel_launch_us"), "us"),
        ratio(get("cupy_rawkernel_launch_us"), rust)
    );
    println!(
        "| Numba @cuda.jit          | {:>15} | {:>19} | >= 7x                     |",
        fmt(get("numba_jit_launch_us"), "us"),
        ratio(get("numba_jit_launch_us"), rust)
    );
    if let Some([q1, paired, q3]) = paired {
        println!(
            "launch! / bare cust, median of the {ROUNDS} paired rounds: {paired:.3} (goal <= 1.05; quartiles {q1:.3} / {q3:.3})"
        );
    }
    println!();
    let rust_bw = get("rust_add_16M_gbps");
    println!("Bandwidth: add_kernel on 16M f32 (3 x 64 MiB moved), events, median of 50");
    println!("| kernel                   | bandwidth       | relative to nvcc    | goal                      |");
    println!("|--------------------------|-----------------|---------------------|---------------------------|");
    println!(
        "| Rust #[kernel]           | {:>15} | {:>19} | >= 0.98x                  |",
        fmt(rust_bw, "GB/s"),
        ratio(rust_bw, get("cuda_c_add_16M_gbps"))
    );
    let unchecked = get("rust_unchecked_add_16M_gbps");
    println!(
        "| Rust, unchecked (unsafe) | {:>15} | {:>19} | -                         |",
        fmt(unchecked, "GB/s"),
        ratio(unchecked, get("cuda_c_add_16M_gbps"))
    );
    println!(
        "| CUDA C (nvcc -O3)        | {:>15} | {:>19} | -                         |",
        fmt(get("cuda_c_add_16M_gbps"), "GB/s"),
        "1.00x"
    );
    println!(
        "| CuPy cp.add              | {:>15} | {:>19} | -                         |",
        fmt(get("cupy_add_16M_gbps"), "GB/s"),
        ratio(get("cupy_add_16M_gbps"), get("cuda_c_add_16M_gbps"))
    );
    for note in notes {
        println!("note: {note}");
    }
    Ok(())
}
