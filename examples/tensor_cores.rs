//! Tensor cores from Rust: a bf16 matrix product two ways, each checked
//! against the CPU.
//!
//! 1. `gpu_ops::matmul`, `torch.matmul` for device buffers: A (`m × k`)
//!    and B (`k × n`) row-major bf16 (or f16), C of the same type
//!    accumulated in f32, on the fastest tensor-core path of the device
//!    (`gpu_ops::matmul_path` says which): Hopper's `wgmma` GEMM on
//!    compute capability 9.0 (H100, H200), the `mma.sync` GEMM on the other
//!    devices of sm_80 and later; ragged sizes are fine.
//! 2. A hand-written kernel, `gpu_kernels::tensor_cores::mma_bf16_warp_tiles`:
//!    one warp a 16 × 8 tile of `C = A Bᵀ`, `mma.sync.m16n8k16` on
//!    fragments whose lane layout `gpu_device::mma` owns.
//!
//! | PyTorch / CUDA C | here |
//! |---|---|
//! | `c = a @ b` (bf16 tensors) | `let c = gpu_ops::matmul(&a, (m, k), &b, (k, n))?;` |
//! | `wmma::load_matrix_sync`, `mma.sync` in inline PTX | `FragmentA::<Bf16>::load(..)`, `mma(&fa, &fb, acc)` |
//!
//! On a device before sm_80 both are errors naming the device (multiply
//! f32 there: `gpu_ops::matmul` of `f32` buffers runs the FP32 SGEMM).

use gpu_device::half::bf16;
use gpu_kernels::tensor_cores::mma_bf16_warp_tiles;
use gpu_runtime::{launch, DeviceBuffer, Stream};
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tensor_cores: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Small integers and halves, exact in bf16: `(i * 7 + seed) % 9 - 4`, halved.
fn values(n: usize, seed: usize) -> Vec<bf16> {
    (0..n)
        .map(|i| bf16::from_f32(((i * 7 + seed) % 9) as f32 / 2.0 - 2.0))
        .collect()
}

/// `C[i][j] = Σ_kk a(i, kk) · b(kk, j)` in f64.
fn cpu_product(
    (m, k, n): (usize, usize, usize),
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|kk| a(i, kk) * b(kk, j)).sum();
        }
    }
    c
}

/// An error naming the first element of `got` further from `expected`
/// than one bf16 rounding of it.
fn check(what: &str, got: &[f64], expected: &[f64]) -> Result<(), Box<dyn Error>> {
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        if (g - e).abs() > e.abs() / 128.0 + 1e-6 {
            return Err(format!("{what}: element {i} is {g}, the CPU's {e}").into());
        }
    }
    Ok(())
}

fn run() -> Result<(), Box<dyn Error>> {
    let stream = Stream::new()?;

    // 1. torch.matmul's shapes, ragged: 100 × 70 @ 70 × 30.
    let (m, k, n) = (100, 70, 30);
    let (a, b) = (values(m * k, 1), values(k * n, 2));
    let (da, db) = (
        DeviceBuffer::to_device_sync(&a, &stream)?,
        DeviceBuffer::to_device_sync(&b, &stream)?,
    );
    let c = gpu_ops::matmul_on(&da, (m, k), &db, (k, n), &stream)?;
    let got: Vec<f64> = c
        .copy_to_host_sync(&stream)?
        .iter()
        .map(|x| x.to_f64())
        .collect();
    let expected = cpu_product(
        (m, k, n),
        |i, kk| a[i * k + kk].to_f64(),
        |kk, j| b[kk * n + j].to_f64(),
    );
    check("gpu_ops::matmul", &got, &expected)?;
    let path = gpu_ops::matmul_path::<bf16>(stream.device())?;
    println!(
        "tensor_cores: gpu_ops::matmul {m} x {k} @ {k} x {n} (bf16, {path:?} path) matches the CPU"
    );

    // 2. The hand-written kernel: C (f32) = A Bᵀ, A 64 × 48, B 32 × 48,
    // one warp a 16 × 8 tile of C.
    let (m, k, n) = (64, 48, 32);
    let (a, b_t) = (values(m * k, 3), values(n * k, 4));
    let (da, db) = (
        DeviceBuffer::to_device_sync(&a, &stream)?,
        DeviceBuffer::to_device_sync(&b_t, &stream)?,
    );
    let mut dc = DeviceBuffer::<f32>::zeroed_on(m * n, &stream)?;
    let blocks = (m / 16) * (n / 8);
    launch!(mma_bf16_warp_tiles[blocks, 32, stream](&da, &db, k, dc.view_2d_mut(m, n)?))?;
    let got: Vec<f64> = dc
        .copy_to_host_sync(&stream)?
        .iter()
        .map(|&x| x as f64)
        .collect();
    let expected = cpu_product(
        (m, k, n),
        |i, kk| a[i * k + kk].to_f64(),
        |kk, j| b_t[j * k + kk].to_f64(),
    );
    // Exact: small halves, sums far below f32's 24 bits.
    if got != expected {
        return Err("mma_bf16_warp_tiles: differs from the CPU".into());
    }
    println!(
        "tensor_cores: mma_bf16_warp_tiles {m} x {k} by {n} x {k} (A Bt) matches the CPU exactly"
    );
    println!("tensor_cores: matches the CPU");
    Ok(())
}
