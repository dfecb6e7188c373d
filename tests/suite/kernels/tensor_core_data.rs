//! What the tensor-core tests share (`tensor_cores`, `wgmma`): random
//! operands, device buffers of them, and the bf16 GEMMs' padded operands
//! and their check against an f64 reference.

use gpu_device::half::bf16;
use gpu_runtime::{DeviceBuffer, DeviceCopy, Stream};

/// Deterministic values in [-1, 1).
pub fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// `data` in a device buffer.
pub fn buffer<T: DeviceCopy>(data: &[T], stream: &Stream) -> DeviceBuffer<T> {
    let mut buffer = DeviceBuffer::zeroed_on(data.len(), stream).unwrap();
    buffer.copy_from_host_sync(data, stream).unwrap();
    buffer
}

/// A GEMM's operand of `rows` rows of `k` random bf16 (from `seed`), each
/// row padded to `ld` with NaN (never read as data).
pub fn padded_operand(rows: usize, k: usize, ld: usize, seed: u64) -> Vec<bf16> {
    let values = random(rows * k, seed);
    (0..rows * ld)
        .map(|i| match i % ld {
            c if c < k => bf16::from_f32(values[i / ld * k + c]),
            _ => bf16::from_f32(f32::NAN),
        })
        .collect()
}

/// Checks `got` (`m × n`) against `C = A Bᵀ` in f64 for A `m × k` and B
/// `n × k` (rows `ld` apart), to bf16's rounding of the result and f32
/// accumulation on a GPU.
pub fn check_gemm(got: &[bf16], a: &[bf16], b: &[bf16], [m, n, k, ld]: [usize; 4]) {
    for i in 0..m {
        for j in 0..n {
            let (mut sum, mut scale) = (0f64, 0f64);
            for kk in 0..k {
                let p = a[i * ld + kk].to_f64() * b[j * ld + kk].to_f64();
                sum += p;
                scale += p.abs();
            }
            let g = got[i * n + j].to_f64();
            let tolerance = sum.abs() / 128.0 + 1e-5 * scale + 1e-30;
            assert!(
                (g - sum).abs() <= tolerance,
                "{m} × {n} × {k} (ld {ld}): C[{i}][{j}] is {g}, the reference {sum}"
            );
        }
    }
}
