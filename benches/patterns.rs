//! The kernels after the textbook (issue #20), Rust against CUDA C and the
//! libraries, in one run: the Rust ports in `gpu_test_kernels::patterns`
//! (no `unsafe` in the kernel bodies) against their twins in
//! `benches/cuda/patterns.cu` (built with `nvcc -O3` for the GPU as
//! `patterns_cuda`; `benches/cuda/KERNELS.md` specifies them) and torch's
//! kernels (`benches/python/patterns_torch.py`), at the same sizes, inputs,
//! launch shapes and checks.
//!
//! ```text
//! patterns --helpers DIR          # on the GPU machine; DIR holds patterns_cuda,
//!                                 # patterns_torch.py and twins_common.py
//! patterns --helpers DIR --quick  # correctness only, small odd sizes (helpers too)
//! patterns --quick                # the Rust side alone (the CPU simulator too)
//! ```
//!
//! One module per kernel family (`benches/patterns/`): exclusive scan
//! (`gpu_ops::scan` and the three-kernel form, beside CUB), softmax, SGEMM,
//! convolution, layer norm. Each
//! Rust case poisons its output (NaN), launches, checks against a CPU
//! reference, then times 50 launches (each between its own pair of events,
//! after 5 warm-ups, on one non-blocking stream; the median) and checks
//! again. The helpers run after the Rust side, each with a time limit.
//! Then one table per family: each Rust kernel, its twin and its baselines,
//! the speed ratios (their time over the Rust kernel's: the issue's goals
//! are >= 0.97 against the twin, >= 1 against `torch.softmax`, >= 0.8
//! against cuBLAS, >= 0.9 against CUB), and both register counts. Exits with 1 if a check
//! failed, here or in a helper.

#[path = "common/mod.rs"]
mod common;
#[cfg(feature = "bare-cust")]
#[path = "kernels/compiled.rs"]
#[allow(dead_code)]
mod compiled;
#[cfg(not(feature = "bare-cust"))]
#[path = "kernels/compiled_unavailable.rs"]
#[allow(dead_code)]
mod compiled;
#[path = "patterns/conv.rs"]
mod conv;
#[path = "kernels/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "patterns/layernorm.rs"]
mod layernorm;
#[path = "patterns/scan.rs"]
mod scan;
#[path = "patterns/sgemm.rs"]
mod sgemm;
#[path = "patterns/softmax.rs"]
mod softmax;
#[path = "patterns/table.rs"]
mod table;

use common::{bench_args, Res, Results};
use compiled::CompiledModule;
use gpu_runtime::{backend, Backend, Device, Stream};
use gpu_test_kernels::KERNEL_MODULE;
use std::time::Duration;
use table::{run_helpers, Ctx};

/// The longest a helper may run (the bundle gives the whole benchmark 5
/// minutes).
const HELPER_LIMIT: Duration = Duration::from_secs(90);

fn main() -> Res<()> {
    let (helpers, flags) = bench_args(&["--quick"])?;
    let quick = flags.iter().any(|f| f == "--quick");
    harness::check_generator()?;
    let device = Device::get(0)?;
    let on_gpu = backend() == Backend::Cuda;
    if !quick && !on_gpu {
        println!("patterns: not run: this is the CPU simulator, where the issue's sizes take hours; `--quick` checks every kernel at small sizes");
        return Ok(());
    }
    let stream = Stream::new()?;
    let mut ctx = Ctx {
        stream: &stream,
        quick,
        on_gpu,
        rows: Vec::new(),
    };
    scan::run(&mut ctx)?;
    softmax::run(&mut ctx)?;
    sgemm::run(&mut ctx)?;
    conv::run(&mut ctx)?;
    layernorm::run(&mut ctx)?;
    let rows = ctx.rows;
    let failures = rows.iter().filter(|r| !r.ok).count();

    let mut notes = Vec::new();
    let mut registers = Results::new();
    if on_gpu {
        // The test kernels' module, and gpu-ops' (the scan's `scan_tiles`).
        // Each crate's newest architecture's text: the one the runtime runs.
        let modules = [
            KERNEL_MODULE.ptx_variants(),
            gpu_ops::KERNEL_MODULE.ptx_variants(),
        ]
        .map(|variants| CompiledModule::load_newest(&variants))
        .into_iter()
        .collect::<Result<Vec<_>, _>>();
        match modules {
            Ok(modules) => {
                for r in &rows {
                    let found = modules.iter().find_map(|m| {
                        Some((m.registers(r.entry).ok()?, m.local_bytes(r.entry).ok()?))
                    });
                    if let Some((regs, local)) = found {
                        if !registers.contains_key(r.entry) {
                            println!(
                                "RESULT rust_regs {} {regs} registers, {local} bytes local",
                                r.entry
                            );
                        }
                        registers.insert(r.entry.to_string(), regs as f64);
                    }
                }
            }
            Err(e) => notes.push(format!("register counts: {e}")),
        }
    }

    // The buffers are gone; give their memory back before the helpers run.
    device.release_pool_memory()?;
    let (twin, torch) = run_helpers(
        helpers.as_deref(),
        on_gpu,
        quick,
        ("patterns_cuda", "patterns_torch.py"),
        HELPER_LIMIT,
        &mut notes,
    );
    table::finish(&device, quick, &notes, failures, || {
        table::print_tables(&rows, &twin, &[&torch], &registers)
    })
}
