//! The GEMM bench's tables: each Rust kernel beside its twin, torch and
//! cuBLAS, and `gpu_ops::matmul` beside the kernels.

use super::table::{self, Helper};
use super::{
    CUBLAS, ENTRY, FAMILY, MATMUL_MMA, MATMUL_WGMMA, RUST_MMA, RUST_WGMMA, RUST_WGMMA_TMA,
    RUST_WGMMA_TMA_KN, TORCH, TWIN, WGMMA,
};

/// TFLOP/s of an `m × n × k` GEMM in `ms`.
pub(crate) fn tflops(size: &str, ms: Option<f64>) -> String {
    let dims: Vec<f64> = size.split('x').filter_map(|d| d.parse().ok()).collect();
    match (ms, &dims[..]) {
        (Some(ms), &[m, n, k]) if ms > 0.0 => {
            format!("{:.1}", 2.0 * m * n * k / (ms * 1e-3) / 1e12)
        }
        _ => "-".into(),
    }
}

/// `theirs / ours` (a speed ratio), with the goal's verdict when it has one.
pub(crate) fn ratio(theirs: Option<f64>, ours: Option<f64>, goal: Option<f64>) -> String {
    match (theirs, ours) {
        (Some(t), Some(o)) if o > 0.0 => {
            let r = t / o;
            match goal {
                Some(g) => format!("{r:.3} {}", if r >= g { "(met)" } else { "(missed)" }),
                None => format!("{r:.3}"),
            }
        }
        _ => "-".into(),
    }
}

pub(crate) fn print_table(
    rows: &[table::Row],
    twin: &Helper,
    torch: &Helper,
    rust_registers: Option<u32>,
) {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    println!("\n### {FAMILY}\n");
    println!("| size | Rust mma.sync ms | TFLOP/s | CUDA C twin ms | TFLOP/s | twin/Rust (goal >= 0.97) | torch.matmul ms | TFLOP/s | torch/Rust | cuBLAS (twin's) ms | cuBLAS/Rust | CUDA C wgmma ms | registers Rust / twin | max error | check |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows.iter().filter(|r| r.kernel == RUST_MMA) {
        let key = |name: &str| (name.to_string(), r.size.clone());
        let twin_ms = twin.ms.get(&key(TWIN)).copied();
        let torch_ms = torch.ms.get(&key(TORCH)).copied();
        let cublas_ms = twin.ms.get(&key(CUBLAS)).copied();
        let wgmma_ms = twin.ms.get(&key(WGMMA)).copied();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {:.3e} | {} |",
            r.size,
            ms(r.ms),
            tflops(&r.size, r.ms),
            ms(twin_ms),
            tflops(&r.size, twin_ms),
            ratio(twin_ms, r.ms, Some(0.97)),
            ms(torch_ms),
            tflops(&r.size, torch_ms),
            ratio(torch_ms, r.ms, None),
            ms(cublas_ms),
            ratio(cublas_ms, r.ms, None),
            ms(wgmma_ms),
            rust_registers.map_or("?".into(), |v| v.to_string()),
            twin.registers
                .get(ENTRY)
                .map_or("?".into(), |v| v.to_string()),
            r.max_error,
            if r.ok { "ok" } else { "WRONG" },
        );
    }
}

/// The `wgmma` rows of Rust kernel `kernel` beside the twin's `wgmma`
/// kernel (TMA, producer and consumer warpgroups) and `torch.matmul`.
pub(crate) fn print_wgmma_table(
    rows: &[table::Row],
    kernel: &str,
    twin: &Helper,
    torch: &Helper,
    rust_registers: Option<u32>,
) {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    let rows: Vec<&table::Row> = rows.iter().filter(|r| r.kernel == kernel).collect();
    if rows.is_empty() {
        return;
    }
    println!("\n### {FAMILY}: {kernel}\n");
    println!("| size | Rust wgmma ms | TFLOP/s | CUDA C wgmma ms | TFLOP/s | twin/Rust (goal >= 0.97) | torch.matmul ms | TFLOP/s | torch/Rust (goal >= 0.85 at 8192) | cuBLAS (twin's) ms | registers Rust | max error | check |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let key = |name: &str| (name.to_string(), r.size.clone());
        let wgmma_ms = twin.ms.get(&key(WGMMA)).copied();
        let torch_ms = torch.ms.get(&key(TORCH)).copied();
        let cublas_ms = twin.ms.get(&key(CUBLAS)).copied();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3e} | {} |",
            r.size,
            ms(r.ms),
            tflops(&r.size, r.ms),
            ms(wgmma_ms),
            tflops(&r.size, wgmma_ms),
            ratio(wgmma_ms, r.ms, Some(0.97)),
            ms(torch_ms),
            tflops(&r.size, torch_ms),
            ratio(torch_ms, r.ms, Some(0.85)),
            ms(cublas_ms),
            rust_registers.map_or("?".into(), |v| v.to_string()),
            r.max_error,
            if r.ok { "ok" } else { "WRONG" },
        );
    }
}

/// `gpu_ops::matmul` beside the Rust kernels it chooses from and torch:
/// the goal is that it runs the best of them for the device (its
/// time over the best kernel's, packing included).
pub(crate) fn print_matmul_table(rows: &[table::Row], torch: &Helper) {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    let matmul: Vec<&table::Row> = rows
        .iter()
        .filter(|r| r.kernel == MATMUL_WGMMA || r.kernel == MATMUL_MMA)
        .collect();
    println!("\n### {FAMILY}: gpu_ops::matmul (A M × K, B K × N row-major; packing and C's allocation timed)\n");
    println!("| size | path | gpu_ops::matmul ms | TFLOP/s | Rust mma.sync ms | Rust wgmma ms | Rust wgmma (TMA) ms | Rust wgmma (TMA, B K × N) ms | best kernel / matmul | torch.matmul ms | torch/matmul | max error | check |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in matmul {
        let kernel_ms = |name: &str| {
            rows.iter()
                .find(|k| k.kernel == name && k.size == r.size)
                .and_then(|k| k.ms)
        };
        let (mma, wgmma) = (kernel_ms(RUST_MMA), kernel_ms(RUST_WGMMA));
        let (wgmma_tma, wgmma_tma_kn) = (kernel_ms(RUST_WGMMA_TMA), kernel_ms(RUST_WGMMA_TMA_KN));
        let best = [mma, wgmma, wgmma_tma, wgmma_tma_kn]
            .into_iter()
            .flatten()
            .reduce(f64::min);
        let torch_ms = torch.ms.get(&(TORCH.to_string(), r.size.clone())).copied();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3e} | {} |",
            r.size,
            if r.kernel == MATMUL_WGMMA {
                "wgmma"
            } else {
                "mma.sync"
            },
            ms(r.ms),
            tflops(&r.size, r.ms),
            ms(mma),
            ms(wgmma),
            ms(wgmma_tma),
            ms(wgmma_tma_kn),
            ratio(best, r.ms, None),
            ms(torch_ms),
            ratio(torch_ms, r.ms, None),
            r.max_error,
            if r.ok { "ok" } else { "WRONG" },
        );
    }
}
