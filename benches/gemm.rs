//! Issue #22's bf16 GEMM table: `C = A Bᵀ` (A `M × K`, B `N × K`, bf16
//! in, f32 accumulation, bf16 out) by the Rust `mma.sync` kernel
//! (`gpu_ops::matmul::gemm_tc`, no `unsafe` in its body), the Rust `wgmma`
//! kernel (`gpu_ops::matmul::gemm_wgmma`, on compute capability 9.0),
//! `gpu_ops::matmul` itself (torch's operands: A `M × K` and B `K × N`,
//! dense and row-major; its time includes padding A's rows when K is not
//! a multiple of 8, B's when N is not, and allocating C; the `wgmma`
//! kernel it runs reads B as it is, MN-major, and has a row of its own), its
//! CUDA C twin (`gemm_bf16_mma_sync` in `benches/cuda/gemm_tc.cu`, built as
//! `gemm_tc`, which also times cuBLAS and the `wgmma` kernels) and
//! `torch.matmul` in bf16 (`benches/python/gemm_torch.py`), at the same
//! sizes, in one run.
//!
//! ```text
//! gemm --helpers DIR          # on the GPU machine; DIR holds gemm_tc,
//!                             # gemm_torch.py and twins_common.py
//! gemm --helpers DIR --quick  # correctness only, small odd sizes (helpers too)
//! gemm --quick                # the Rust side alone (the CPU simulator too)
//! gemm --helpers DIR --4096   # one size (or several: --8192, --4096, --odd),
//!                             # e.g. under a profiler
//! ```
//!
//! Sizes: 8192³, 4096³ and 4099 × 4097 × 4095 (`--quick`: 520 × 777 × 333,
//! 128 × 256 × 64, 1 × 1 × 1, 130 × 67 × 40). A and B have rows padded to a
//! multiple of 8 elements (NaN in the padding, never read as data) as the
//! twin's; C is `M × N` (the twin pads its rows to 8). Each Rust result is
//! checked against an f64 reference: every entry in `--quick`, else the
//! corners, the last row and column's samples and 2000 entries from seed 3,
//! each within `1.01 (2^-8 |exact| + gamma_K sum |a b|)` (bf16's rounding
//! of the result and f32 accumulation), before and after timing (the median
//! of 50 launches after 5 warm-ups, each between its own pair of events).
//! The table gives each implementation's ms and TFLOP/s, and the speed
//! ratios (their time over the Rust kernel's: the issue's goal is >= 0.97
//! against the twin), with both register counts; a last table puts
//! `gpu_ops::matmul` (the path it took) beside the best Rust kernel and
//! torch (the issue's "ops::matmul = the best of the above"). A last table
//! compares the `mma.sync` and TMA `wgmma` kernels with the twin's in this
//! process, interleaved on one stream (`gemm/twin_in_process.rs`: DIR's
//! `gemm_tc.cubin`, built from `benches/cuda/gemm_tc_cubin.cu`). Exits with
//! 1 if a check failed, here or in a helper.

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
#[cfg(feature = "bare-cust")]
#[path = "kernels/cubin.rs"]
mod cubin;
#[cfg(not(feature = "bare-cust"))]
#[path = "kernels/cubin_unavailable.rs"]
#[allow(dead_code)]
mod cubin;
#[path = "kernels/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "patterns/table.rs"]
#[allow(dead_code)]
mod table;
#[path = "gemm/tables.rs"]
mod tables;
#[path = "gemm/twin_in_process.rs"]
mod twin_in_process;

use common::{bench_args, Res};
use compiled::CompiledModule;
use gpu_device::half::bf16;
use gpu_ops::matmul::gemm_tc::{
    gemm_bf16_mma_sync, gemm_tc_blocks, GEMM_TC_SHARED_BYTES, GEMM_TC_THREADS,
};
use gpu_ops::matmul::gemm_wgmma::{gemm_bf16_wgmma, GEMM_WGMMA_SHARED_BYTES, GEMM_WGMMA_THREADS};
use gpu_ops::matmul::gemm_wgmma_tma::{
    gemm_bf16_wgmma_tma, gemm_bf16_wgmma_tma_kn, gemm_wgmma_tma_blocks,
    GEMM_WGMMA_TMA_SHARED_BYTES, GEMM_WGMMA_TMA_THREADS,
};
use gpu_ops::MatmulPath;
use gpu_runtime::{backend, launch, Backend, Device, DeviceBuffer, Stream, Swizzle, TensorMap};
use harness::{gamma, SplitMix64};
use std::time::Duration;
use table::{run_helpers, Baselines, Ctx};
use tables::{print_matmul_table, print_table, print_wgmma_table};
use twin_in_process::{Dims, TwinKernels};

/// The longest a helper may run: the twin times six GEMMs at each size.
const HELPER_LIMIT: Duration = Duration::from_secs(300);
const FAMILY: &str = "bf16 GEMM (issue #22)";
/// The twin's name for its `mma.sync` kernel (its `RESULT` lines').
const TWIN: &str = "mma.sync m16n8k16 + ldmatrix 128x256";
const CUBLAS: &str = "cuBLAS cublasGemmEx (TN, bf16 -> f32 accumulate -> bf16)";
const TORCH: &str = "torch.matmul bf16 (cuBLAS)";
const WGMMA: &str = "wgmma+TMA 128x256, 2 consumer WGs";
const ENTRY: &str = "gemm_bf16_mma_sync";
/// The Rust rows' names.
const RUST_MMA: &str = "Rust mma.sync (cp.async ring, ldmatrix) 128x256";
const RUST_WGMMA: &str = "Rust wgmma m64n256k16 (cp.async ring) 128x256, 2 WGs";
const WGMMA_ENTRY: &str = "gemm_bf16_wgmma";
const RUST_WGMMA_TMA: &str =
    "Rust wgmma m64n256k16 (TMA ring, producer WG, persistent) 128x256, 2 WGs";
const WGMMA_TMA_ENTRY: &str = "gemm_bf16_wgmma_tma";
/// The same kernel with B row-major (`K × N`) read MN-major: `matmul`'s.
const RUST_WGMMA_TMA_KN: &str =
    "Rust wgmma m64n256k16 (TMA ring, B K x N read MN-major) 128x256, 2 WGs";
const WGMMA_TMA_KN_ENTRY: &str = "gemm_bf16_wgmma_tma_kn";
/// `gpu_ops::matmul`'s rows, by the path it took.
const MATMUL_WGMMA: &str = "gpu_ops::matmul (wgmma path: the TMA ring)";
const MATMUL_MMA: &str = "gpu_ops::matmul (mma.sync path)";

fn main() -> Res<()> {
    let (helpers, flags) = bench_args(&["--quick", "--8192", "--4096", "--odd"])?;
    let quick = flags.iter().any(|f| f == "--quick");
    harness::check_generator()?;
    let device = Device::get(0)?;
    let on_gpu = backend() == Backend::Cuda;
    if !quick && !on_gpu {
        println!("gemm: not run: this is the CPU simulator, where the issue's sizes take days; `--quick` checks the kernel at small sizes");
        return Ok(());
    }
    let stream = Stream::new()?;
    let mut ctx = Ctx {
        stream: &stream,
        quick,
        on_gpu,
        rows: Vec::new(),
    };
    let sizes: Vec<(usize, usize, usize)> = if quick {
        vec![(520, 777, 333), (128, 256, 64), (1, 1, 1), (130, 67, 40)]
    } else {
        let all = [
            ("--8192", (8192, 8192, 8192)),
            ("--4096", (4096, 4096, 4096)),
            ("--odd", (4099, 4097, 4095)),
        ];
        // The sizes named, or all of them when none is.
        let named = |flag: &str| flags.iter().any(|f| f == flag);
        let any_named = all.iter().any(|(flag, _)| named(flag));
        all.iter()
            .filter(|(flag, _)| !any_named || named(flag))
            .map(|&(_, size)| size)
            .collect()
    };
    // The wgmma kernel is sm_90a's: compute capability 9.0 (the
    // simulator's default) only.
    let wgmma = device.limits().compute_capability == (9, 0);
    // The twin's kernels in this process (sm_90a: a Hopper GPU), or why not.
    let sms = device.limits().multiprocessor_count;
    let twin_module = twin_in_process::load(helpers.as_deref(), on_gpu);
    let twin_kernels = match &twin_module {
        Ok(module) => TwinKernels::new(module, sms).map_err(|e| format!("not run: {e}")),
        Err(why) => Err(why.clone()),
    };
    let mut in_process = Vec::new();
    for &(m, n, k) in &sizes {
        let twin = twin_kernels.as_ref().ok();
        case(&mut ctx, m, n, k, wgmma, twin, &mut in_process)?;
    }
    let twin_unavailable = twin_kernels.err();
    drop(twin_module);
    let rows = ctx.rows;
    let failures = rows.iter().filter(|r| !r.ok).count()
        + in_process.iter().filter(|r| r.failed.is_some()).count();

    let mut notes = Vec::new();
    if let Some(why) = &twin_unavailable {
        notes.push(format!("the twin in this process: {why}"));
    }
    let mut rust_registers = None;
    let (mut wgmma_registers, mut wgmma_tma_registers) = (None, None);
    if on_gpu && wgmma {
        for (entry, registers) in [
            (WGMMA_ENTRY, &mut wgmma_registers),
            (WGMMA_TMA_ENTRY, &mut wgmma_tma_registers),
        ] {
            match CompiledModule::load_newest(&gpu_ops::KERNEL_MODULE.ptx_variants())
                .and_then(|m| Ok((m.registers(entry)?, m.local_bytes(entry)?)))
            {
                Ok((regs, local)) => {
                    println!("RESULT rust_regs {entry} {regs} registers, {local} bytes local");
                    *registers = Some(regs);
                }
                Err(e) => notes.push(format!("register counts ({entry}): {e}")),
            }
        }
    }
    if on_gpu {
        // The newest architecture's text (the kernel is built for sm_80 and
        // newer only, and the device runs the newest it can), in gpu-ops.
        match CompiledModule::load_newest(&gpu_ops::KERNEL_MODULE.ptx_variants())
            .and_then(|m| Ok((m.registers(ENTRY)?, m.local_bytes(ENTRY)?)))
        {
            Ok((regs, local)) => {
                println!("RESULT rust_regs {ENTRY} {regs} registers, {local} bytes local");
                rust_registers = Some(regs);
            }
            Err(e) => notes.push(format!("register counts: {e}")),
        }
    }

    device.release_pool_memory()?;
    let (twin, torch) = run_helpers(
        helpers.as_deref(),
        on_gpu,
        quick,
        ("gemm_tc", "gemm_torch.py"),
        HELPER_LIMIT,
        &mut notes,
    );
    table::finish(&device, quick, &notes, failures, || {
        print_table(&rows, &twin, &torch, rust_registers);
        print_wgmma_table(&rows, RUST_WGMMA, &twin, &torch, wgmma_registers);
        print_wgmma_table(&rows, RUST_WGMMA_TMA, &twin, &torch, wgmma_tma_registers);
        print_wgmma_table(&rows, RUST_WGMMA_TMA_KN, &twin, &torch, None);
        print_matmul_table(&rows, &torch);
        twin_in_process::print_table(FAMILY, &in_process, twin_unavailable.as_deref(), quick);
    })
}

/// `rows × ld` bf16 with the first `k` of each row from `rng` in [-1, 1)
/// (as the twin's operands) and NaN padding.
fn operand(rows: usize, k: usize, ld: usize, seed: u64) -> Vec<bf16> {
    let mut rng = SplitMix64::new(seed);
    let nan = bf16::from_f32(f32::NAN);
    let mut out = vec![nan; rows * ld];
    for r in 0..rows {
        for v in &mut out[r * ld..r * ld + k] {
            *v = bf16::from_f32(2.0 * rng.next_f32() - 1.0);
        }
    }
    out
}

fn case(
    ctx: &mut Ctx,
    m: usize,
    n: usize,
    k: usize,
    wgmma: bool,
    twin: Option<&TwinKernels>,
    in_process: &mut Vec<twin_in_process::Row>,
) -> Res<()> {
    let ld = k.div_ceil(8) * 8;
    let (a, b) = (operand(m, k, ld, 1), operand(n, k, ld, 2));
    let stream = ctx.stream;
    let upload = |data: &[bf16]| -> gpu_runtime::Result<DeviceBuffer<bf16>> {
        let mut buffer = DeviceBuffer::zeroed_on(data.len(), stream)?;
        buffer.copy_from_host_sync(data, stream)?;
        Ok(buffer)
    };
    let (da, db) = (upload(&a)?, upload(&b)?);
    let dc = DeviceBuffer::<bf16>::zeroed_on(m * n, stream)?;

    let mut entries: Vec<(usize, usize)> = Vec::new();
    if ctx.quick {
        entries.extend((0..m).flat_map(|i| (0..n).map(move |j| (i, j))));
    } else {
        entries.extend([(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)]);
        let mut pick = SplitMix64::new(3);
        for _ in 0..2000 {
            let i = (pick.next_u64() % m as u64) as usize;
            let j = (pick.next_u64() % n as u64) as usize;
            entries.push((i, j));
        }
        for s in 0..50 {
            entries.push((m - 1, s * n / 50));
            entries.push((s * m / 50, n - 1));
        }
    }
    // The exact values and their bounds.
    let want: Vec<(f64, f64)> = entries
        .iter()
        .map(|&(i, j)| {
            let (mut sum, mut magnitude) = (0f64, 0f64);
            for kk in 0..k {
                let p = a[i * ld + kk].to_f64() * b[j * ld + kk].to_f64();
                sum += p;
                magnitude += p.abs();
            }
            (sum, 1.01 * (sum.abs() / 256.0 + gamma(k) * magnitude))
        })
        .collect();

    let blocks = gemm_tc_blocks(m, n);
    let bytes = GEMM_TC_SHARED_BYTES as u32;
    let baselines = Baselines {
        family: FAMILY,
        twin: TWIN,
        twin_symbol: ENTRY,
        libraries: &[(TORCH, 0.0), (CUBLAS, 0.0)],
    };
    let poison = vec![bf16::from_bits(0xffff); m * n];
    type State = (DeviceBuffer<bf16>, DeviceBuffer<bf16>, DeviceBuffer<bf16>);
    let poison_c = |(_, _, dc): &mut State| dc.copy_from_host_sync(&poison, stream);
    let check = |(_, _, dc): &mut State, pass: &str| -> Res<(bool, f64)> {
        let got = dc.copy_to_host_sync(stream)?;
        let (mut ok, mut max_error, mut reported) = (true, 0f64, 0);
        for (&(i, j), &(exact, bound)) in entries.iter().zip(&want) {
            let g = got[i * n + j].to_f64();
            let error = (g - exact).abs();
            if error.is_nan() || error > bound {
                ok = false;
                if reported < 5 {
                    println!("  {pass}: C[{i}][{j}] = {g}, exact {exact} (bound {bound:.3e})");
                    reported += 1;
                }
            } else {
                max_error = max_error.max(error);
            }
        }
        Ok((ok, max_error))
    };
    let mut state = (da, db, dc);
    let mut rust_mma = |(da, db, dc): &mut State| {
        let view = dc.view_2d_mut(m, n)?;
        launch!(gemm_bf16_mma_sync[blocks, GEMM_TC_THREADS, stream, bytes](&*da, &*db, k, ld, ld, view))
    };
    let size = format!("{m}x{n}x{k}");
    ctx.run(
        RUST_MMA,
        ENTRY,
        size.clone(),
        baselines,
        &mut state,
        poison_c,
        &mut rust_mma,
        check,
    )?;
    let dims = Dims { m, n, k, ld };
    // The twin's kernel in this process, interleaved with the Rust one: a
    // failure is the row's (and the run's), after the other rows.
    let mut in_process_row = |names: (&'static str, &'static str, &str), result: Res<_>| {
        in_process.push(result.unwrap_or_else(|e| {
            println!("FAILED {} {size} (the twin in this process): {e}", names.1);
            twin_in_process::Row::failed(names.0, names.1, size.clone(), format!("FAILED: {e}"))
        }))
    };
    if let Some(twin) = twin {
        let names = (RUST_MMA, TWIN, "mma_sync");
        let result = twin_in_process::compare(
            stream,
            ctx.quick,
            names,
            size.clone(),
            &mut state,
            poison_c,
            &mut rust_mma,
            |(da, db, dc): &mut State| twin.launch_mma(stream, da, db, dc, dims),
            check,
        );
        in_process_row(names, result);
    }
    if wgmma {
        let bytes = GEMM_WGMMA_SHARED_BYTES as u32;
        ctx.run(
            RUST_WGMMA,
            WGMMA_ENTRY,
            format!("{m}x{n}x{k}"),
            Baselines {
                twin: WGMMA,
                twin_symbol: WGMMA_ENTRY,
                ..baselines
            },
            &mut state,
            poison_c,
            |(da, db, dc)| {
                let view = dc.view_2d_mut(m, n)?;
                launch!(gemm_bf16_wgmma[blocks, GEMM_WGMMA_THREADS, stream, bytes](&*da, &*db, k, ld, ld, view))
            },
            check,
        )?;
        // The twin's design: the tensor maps read copies of A and B (they
        // borrow their buffers for the launches' life).
        let (ta, tb) = (upload(&a)?, upload(&b)?);
        let map_a = TensorMap::matrix(&ta, (m, k, ld), (128, 64), Swizzle::Bytes128)?;
        let map_b = TensorMap::matrix(&tb, (n, k, ld), (256, 64), Swizzle::Bytes128)?;
        let bytes = GEMM_WGMMA_TMA_SHARED_BYTES as u32;
        let sms = Device::get(stream.device())?.limits().multiprocessor_count;
        let tma_blocks = gemm_wgmma_tma_blocks(m, n, sms);
        let mut rust_tma = |(_, _, dc): &mut State| {
            let view = dc.view_2d_mut(m, n)?;
            launch!(gemm_bf16_wgmma_tma[tma_blocks, GEMM_WGMMA_TMA_THREADS, stream, bytes](&map_a, &map_b, k, view))
        };
        ctx.run(
            RUST_WGMMA_TMA,
            WGMMA_TMA_ENTRY,
            size.clone(),
            Baselines {
                twin: WGMMA,
                twin_symbol: WGMMA_ENTRY,
                ..baselines
            },
            &mut state,
            poison_c,
            &mut rust_tma,
            check,
        )?;
        if let Some(twin) = twin {
            // The twin's maps read the same copies of A and B.
            let names = (RUST_WGMMA_TMA, WGMMA, "wgmma_tma");
            let result = twin.maps(stream, &ta, &tb, dims).and_then(|maps| {
                twin_in_process::compare(
                    stream,
                    ctx.quick,
                    names,
                    size.clone(),
                    &mut state,
                    poison_c,
                    &mut rust_tma,
                    |(_, _, dc): &mut State| twin.launch_wgmma(stream, &maps, dc),
                    check,
                )
            });
            in_process_row(names, result);
        }
        // B row-major, `k × n`, read MN-major; its rows padded (NaN) as
        // `matmul` pads them: to 64 elements where `n` is not a multiple of 8.
        let ld_n = if n.is_multiple_of(8) {
            n
        } else {
            n.next_multiple_of(64)
        };
        let nan = bf16::from_f32(f32::NAN);
        let b_kn_padded: Vec<bf16> = (0..k * ld_n)
            .map(|i| match (i / ld_n, i % ld_n) {
                (kk, j) if j < n => b[j * ld + kk],
                _ => nan,
            })
            .collect();
        let tb_kn = upload(&b_kn_padded)?;
        let map_b_kn = TensorMap::matrix(&tb_kn, (k, n, ld_n), (64, 64), Swizzle::Bytes128)?;
        ctx.run(
            RUST_WGMMA_TMA_KN,
            WGMMA_TMA_KN_ENTRY,
            size.clone(),
            Baselines {
                twin: WGMMA,
                twin_symbol: WGMMA_ENTRY,
                ..baselines
            },
            &mut state,
            poison_c,
            |(_, _, dc)| {
                let view = dc.view_2d_mut(m, n)?;
                launch!(gemm_bf16_wgmma_tma_kn[tma_blocks, GEMM_WGMMA_TMA_THREADS, stream, bytes](&map_a, &map_b_kn, k, view))
            },
            check,
        )?;
    }

    // `gpu_ops::matmul` on torch's operands: A `m × k` and B `k × n`,
    // dense, the same values (B is the kernels' Bᵀ).
    let dense_a: Vec<bf16> = (0..m)
        .flat_map(|r| a[r * ld..r * ld + k].iter().copied())
        .collect();
    let b_kn: Vec<bf16> = (0..k * n).map(|i| b[(i % n) * ld + i / n]).collect();
    let (_, _, dc) = state;
    let mut state = (upload(&dense_a)?, upload(&b_kn)?, dc);
    let (kernel, entry, twin) = match gpu_ops::matmul_path::<bf16>(stream.device())? {
        MatmulPath::Wgmma => (MATMUL_WGMMA, WGMMA_TMA_KN_ENTRY, WGMMA),
        _ => (MATMUL_MMA, ENTRY, TWIN),
    };
    ctx.run(
        kernel,
        entry,
        format!("{m}x{n}x{k}"),
        Baselines {
            twin,
            twin_symbol: entry,
            ..baselines
        },
        &mut state,
        poison_c,
        |(da, db, dc)| {
            *dc = gpu_ops::matmul_on(&*da, (m, k), &*db, (k, n), stream)?;
            Ok(())
        },
        check,
    )?;
    Ok(())
}
