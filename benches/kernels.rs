//! The five kernels of issue #9 (six with both transposes), Rust against
//! CUDA C, in one run: `gpu_test_kernels::classic` (no `unsafe` in the kernel
//! bodies) against `benches/cuda/kernels.cu` built with `nvcc -O3` for the
//! GPU, at the same sizes, inputs, launch shapes, timing method and checks
//! (`benches/cuda/KERNELS.md` describes them).
//!
//! ```text
//! kernels --helpers DIR    # on the GPU machine; DIR holds kernels_cuda
//! kernels --check          # each kernel once at small sizes against the CPU
//!                          # (the CPU simulator too), no timing
//! ```
//!
//! Per kernel: 5 warm-up launches, then 50 launches each between its own
//! pair of events on one non-blocking stream; the figure is the median. The
//! result is checked against a CPU reference after a launch into a poisoned
//! output, and again after the timed launches. The table gives the speed
//! ratio nvcc time / Rust time (the goal is 0.97 or more) and the
//! registers per thread of both, as the driver compiled them for this GPU.
//! The program exits with 1 if a check failed, here or in the helper.

#[path = "kernels/cases.rs"]
mod cases;
#[path = "common/mod.rs"]
mod common;
#[cfg(feature = "bare-cust")]
#[path = "kernels/compiled.rs"]
mod compiled;

#[cfg(not(feature = "bare-cust"))]
#[path = "kernels/compiled_unavailable.rs"]
mod compiled;
#[path = "kernels/harness.rs"]
mod harness;

use cases::{Run, Sizes};
use common::{bench_args, run_helper, show, Res, Results};
use compiled::CompiledModule;
use gpu_runtime::{backend, Backend, Device, Stream};
use gpu_test_kernels::KERNEL_MODULE;
use std::process::Command;

/// One row of the table.
struct Kernel {
    /// The figures' name: `rust_<key>_ms`, `cuda_<key>_ms`.
    key: &'static str,
    /// The Rust kernel's PTX entry point for the benchmark's launch shape
    /// (`__1d` for one-dimensional launches, `__2d` for the others, whose z
    /// extents are all 1).
    entry: &'static str,
    /// The CUDA C kernel it is compared with: its figures' key.
    nvcc: &'static str,
    /// `tflops` or `gbps`.
    rate: &'static str,
    /// nvcc's registers per thread from `KERNELS.md` (nvcc 13.5, `-O3
    /// -arch=sm_90`), shown when the helper did not report its own.
    nvcc_registers: u32,
}

const KERNELS: [Kernel; 6] = [
    Kernel {
        key: "matmul",
        entry: "matmul_tiled__2d",
        nvcc: "matmul",
        rate: "tflops",
        nvcc_registers: 32,
    },
    Kernel {
        key: "jacobi",
        entry: "jacobi5__2d",
        nvcc: "jacobi",
        rate: "gbps",
        nvcc_registers: 18,
    },
    Kernel {
        key: "histogram",
        entry: "histogram256__1d",
        nvcc: "histogram",
        rate: "gbps",
        nvcc_registers: 23,
    },
    Kernel {
        key: "transpose_32x8",
        entry: "transpose_32x8__2d",
        nvcc: "transpose_32x8",
        rate: "gbps",
        nvcc_registers: 26,
    },
    Kernel {
        key: "transpose_32x32",
        entry: "transpose_32x32__2d",
        nvcc: "transpose_32x32",
        rate: "gbps",
        nvcc_registers: 14,
    },
    Kernel {
        key: "stencil",
        entry: "stencil1d_r4__1d",
        nvcc: "stencil",
        rate: "gbps",
        nvcc_registers: 24,
    },
];

/// The size column of each row, for `sizes`.
fn size_text(key: &str, s: &Sizes) -> String {
    match key {
        "jacobi" => format!("{}x{}", s.jacobi.0, s.jacobi.1),
        "matmul" => format!("{}x{}x{}", s.matmul.0, s.matmul.1, s.matmul.2),
        "histogram" => format!("{} u32", s.histogram),
        "stencil" => format!("{} f32", s.stencil),
        _ => format!("{}x{}", s.transpose.0, s.transpose.1),
    }
}

fn main() -> Res<()> {
    let (helpers, flags) = bench_args(&["--check"])?;
    let timed = !flags.iter().any(|f| f == "--check");
    harness::check_generator()?;
    let device = Device::get(0)?;
    let on_gpu = backend() == Backend::Cuda;
    if timed && !on_gpu {
        println!("kernels: not run: this is the CPU simulator, where these sizes take hours; `--check` runs each kernel once at small sizes");
        return Ok(());
    }
    let sizes = if timed { Sizes::FULL } else { Sizes::CHECK };

    // Registers (and spills) of the code the driver made of the Rust PTX,
    // and the histogram's grid: SMs x its resident blocks per SM.
    let mut notes = Vec::new();
    let mut registers = Results::new();
    let mut histogram_grid = 2;
    if on_gpu {
        match CompiledModule::load_newest(&KERNEL_MODULE.ptx_variants()) {
            Ok(module) => {
                for k in &KERNELS {
                    match (module.registers(k.entry), module.local_bytes(k.entry)) {
                        (Ok(regs), Ok(local)) => {
                            println!(
                                "RESULT rust_{}_regs {regs} registers ({}: {local} bytes of local memory)",
                                k.key, k.entry
                            );
                            registers.insert(k.key.to_string(), regs as f64);
                        }
                        (Err(e), _) | (_, Err(e)) => notes.push(format!("{}: {e}", k.entry)),
                    }
                }
                if timed {
                    let per_sm = module.max_blocks_per_sm("histogram256__1d", 256)?;
                    histogram_grid =
                        device.limits().multiprocessor_count as usize * per_sm.max(1) as usize;
                    println!(
                        "histogram grid: {} SMs x {per_sm} resident blocks of 256 threads",
                        device.limits().multiprocessor_count
                    );
                }
            }
            Err(e) => notes.push(format!("register counts: {e}")),
        }
    }

    let mut results = Results::new();
    let stream = Stream::new()?;
    let mut run = Run {
        stream: &stream,
        timed,
        results: &mut results,
        failures: 0,
    };
    run.matmul(sizes.matmul)?;
    run.jacobi(sizes.jacobi)?;
    run.histogram(sizes.histogram, histogram_grid)?;
    run.transposes(sizes.transpose)?;
    run.stencil(sizes.stencil)?;
    let failures = run.failures;
    if !timed {
        if failures == 0 {
            println!(
                "kernels --check: all {} kernels match the CPU references",
                KERNELS.len()
            );
            return Ok(());
        }
        return Err(format!("kernels --check: {failures} check(s) failed").into());
    }

    // The buffers are gone; give their memory back before the helper runs.
    device.release_pool_memory()?;
    match &helpers {
        Some(dir) => {
            let bin = dir.join("kernels_cuda");
            if bin.is_file() {
                run_helper(&mut results, &mut notes, "CUDA C", &mut Command::new(bin));
            } else {
                notes.push(format!("CUDA C: not run (no {})", bin.display()));
            }
        }
        None => notes.push("CUDA C: not run (no --helpers DIR)".into()),
    }

    print_table(device, &sizes, &results, &registers);
    let helper_failed = notes.iter().any(|n| {
        ["CUDA C: FAILED", "CUDA C exited", "CUDA C could not run"]
            .iter()
            .any(|start| n.starts_with(start))
    });
    for note in &notes {
        println!("note: {note}");
    }
    if failures > 0 {
        return Err(format!("{failures} check(s) of the Rust kernels failed").into());
    }
    if helper_failed {
        return Err("the CUDA C helper failed (see the notes)".into());
    }
    Ok(())
}

/// The table: per kernel, both times, the speed ratio, both rates and both
/// register counts.
fn print_table(device: Device, sizes: &Sizes, results: &Results, registers: &Results) {
    let get = |k: String| results.get(&k).copied();
    let ms = |v: Option<f64>| v.map_or_else(|| "not run".to_string(), |v| format!("{v:.4}"));
    println!();
    println!(
        "GPU: {} (compute capability {}.{}); per-launch time, median of {} launches after {} warm-ups",
        device.name(),
        device.limits().compute_capability.0,
        device.limits().compute_capability.1,
        harness::TIMED,
        harness::WARMUP,
    );
    println!();
    println!("| kernel | size | Rust ms | nvcc ms | nvcc/Rust (goal >= 0.97) | Rust rate | nvcc rate | registers Rust / nvcc |");
    println!("|---|---|---|---|---|---|---|---|");
    for k in &KERNELS {
        let (rust_ms, nvcc_ms) = (
            get(format!("rust_{}_ms", k.key)),
            get(format!("cuda_{}_ms", k.nvcc)),
        );
        let ratio = match (rust_ms, nvcc_ms) {
            (Some(r), Some(c)) => {
                let ratio = c / r;
                format!(
                    "{ratio:.3} {}",
                    if ratio >= 0.97 { "(met)" } else { "(missed)" }
                )
            }
            _ => "-".into(),
        };
        let unit = if k.rate == "tflops" {
            "TFLOP/s"
        } else {
            "GB/s"
        };
        let digits = if k.rate == "tflops" { 2 } else { 0 };
        let nvcc_regs = match get(format!("cuda_{}_regs", k.nvcc)) {
            Some(r) => format!("{r}"),
            None => format!("{} (KERNELS.md)", k.nvcc_registers),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            k.key,
            size_text(k.key, sizes),
            ms(rust_ms),
            ms(nvcc_ms),
            ratio,
            show(get(format!("rust_{}_{}", k.key, k.rate)), digits, unit),
            show(get(format!("cuda_{}_{}", k.nvcc, k.rate)), digits, unit),
            registers
                .get(k.key)
                .map_or_else(|| "?".to_string(), |r| r.to_string()),
            nvcc_regs,
        );
    }
}
