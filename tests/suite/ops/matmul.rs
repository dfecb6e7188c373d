//! `gpu_ops::matmul` (`torch.matmul` of 2-D tensors) against an f64 CPU
//! reference: bf16 and f16 on the device's tensor-core path (K packed and padded, B
//! packed K-major), f32 on the FP32 SGEMM, at ragged sizes, one element,
//! and tile multiples, each checking which kernel ran (the stream's last
//! kernel, against `matmul_path`); the path chosen for each compute
//! capability; and each bad input refused with an error naming it. On the
//! simulator where there is no GPU (compute capability 9.0: the `wgmma`
//! path), on the GPU otherwise (an H100 or H200 runs `wgmma`, an sm_80
//! device `mma.sync`). (The `mma.sync` path on a simulated 8.0 device and a
//! device too old for bf16 are in `tests/forced_simulated_architectures.rs`,
//! another device's buffer in `tests/multi_device/peer.rs`.)

use gpu_device::half::{bf16, f16};
use gpu_ops::MatmulPath;
use gpu_runtime::{Device, DeviceBuffer, Error, Stream};

/// splitmix64 mapped to [-1, 1), for inputs.
fn values(seed: u64, n: usize) -> Vec<f32> {
    super::numbers(seed, n)
        .into_iter()
        .map(|z| (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        .collect()
}

/// `C = A @ B` in f64 with its scale (the sum of the products' magnitudes).
fn reference(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize)) -> Vec<(f64, f64)> {
    let mut c = vec![(0.0, 0.0); m * n];
    for i in 0..m {
        for j in 0..n {
            let (mut sum, mut scale) = (0.0, 0.0);
            for kk in 0..k {
                let p = a[i * k + kk] * b[kk * n + j];
                sum += p;
                scale += p.abs();
            }
            c[i * n + j] = (sum, scale);
        }
    }
    c
}

/// A 16-bit element type `matmul` takes on tensor cores: its conversions,
/// its kernels (wgmma, mma.sync) and the relative error of one rounding.
struct Half<T> {
    name: &'static str,
    from_f32: fn(f32) -> T,
    to_f64: fn(T) -> f64,
    kernels: [&'static str; 2],
    rounding: f64,
}

const BF16: Half<bf16> = Half {
    name: "bf16",
    from_f32: bf16::from_f32,
    to_f64: bf16::to_f64,
    kernels: ["gemm_bf16_wgmma_tma_kn", "gemm_bf16_mma_sync"],
    rounding: 1.0 / 128.0,
};

const F16: Half<f16> = Half {
    name: "f16",
    from_f32: f16::from_f32,
    to_f64: f16::to_f64,
    kernels: ["gemm_f16_wgmma_tma_kn", "gemm_f16_mma_sync"],
    rounding: 1.0 / 1024.0,
};

fn half_matches_the_reference<T: gpu_ops::MatmulElement>(
    half: &Half<T>,
    (m, k, n): (usize, usize, usize),
    stream: &Stream,
) {
    let name = half.name;
    let a: Vec<T> = values(m as u64 * 7 + k as u64, m * k)
        .into_iter()
        .map(half.from_f32)
        .collect();
    let b: Vec<T> = values(n as u64 * 13 + k as u64, k * n)
        .into_iter()
        .map(half.from_f32)
        .collect();
    let da = DeviceBuffer::to_device_sync(&a, stream).unwrap();
    let db = DeviceBuffer::to_device_sync(&b, stream).unwrap();
    let c = gpu_ops::matmul_on(&da, (m, k), &db, (k, n), stream).unwrap();
    assert_eq!(c.len(), m * n);
    let kernel = match gpu_ops::matmul_path::<T>(stream.device()).unwrap() {
        MatmulPath::Wgmma => half.kernels[0],
        MatmulPath::MmaSync => half.kernels[1],
        other => panic!("{name} on the {other:?} path"),
    };
    assert_eq!(
        stream.last_kernel(),
        Some(kernel),
        "{name} {m} × {k} @ {k} × {n}"
    );
    let got = c.copy_to_host_sync(stream).unwrap();
    let wide = |v: &[T]| v.iter().map(|&x| (half.to_f64)(x)).collect::<Vec<_>>();
    let expected = reference(&wide(&a), &wide(&b), (m, k, n));
    for (index, (&g, &(sum, scale))) in got.iter().zip(&expected).enumerate() {
        let g = (half.to_f64)(g);
        // One rounding of the result, and f32 accumulation.
        let tolerance = sum.abs() * half.rounding + 1e-5 * scale + 1e-30;
        assert!(
            (g - sum).abs() <= tolerance,
            "{name} {m} × {k} @ {k} × {n}: C[{}][{}] is {g}, the reference {sum}",
            index / n,
            index % n
        );
    }
}

fn f32_matches_the_reference((m, k, n): (usize, usize, usize), stream: &Stream) {
    let a = values(m as u64 * 3 + k as u64, m * k);
    let b = values(n as u64 * 5 + k as u64, k * n);
    let da = DeviceBuffer::to_device_sync(&a, stream).unwrap();
    let db = DeviceBuffer::to_device_sync(&b, stream).unwrap();
    let c = gpu_ops::matmul_on(&da, (m, k), &db, (k, n), stream).unwrap();
    assert_eq!(stream.last_kernel(), Some("sgemm_8x8"));
    let got = c.copy_to_host_sync(stream).unwrap();
    let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let expected = reference(&wide(&a), &wide(&b), (m, k, n));
    for (index, (&g, &(sum, scale))) in got.iter().zip(&expected).enumerate() {
        // f32 accumulation: k roundings of at most 2⁻²⁴ of the scale each.
        let tolerance = (k as f64 + 2.0) * f64::powi(2.0, -24) * scale + 1e-30;
        assert!(
            (g as f64 - sum).abs() <= tolerance,
            "f32 {m} × {k} @ {k} × {n}: C[{}][{}] is {g}, the reference {sum}",
            index / n,
            index % n
        );
    }
}

/// Ragged in every extent (K not a multiple of 8: A packed too), one
/// element, one whole block tile, K past the ring's four stages, two
/// block tiles each way with every extent cut (M, N and K one past a tile
/// or a k-block, K odd).
const SHAPES: &[(usize, usize, usize)] = &[
    (130, 40, 67),
    (130, 67, 40),
    (1, 1, 1),
    (3, 5, 2),
    (128, 64, 256),
    (17, 300, 9),
    (129, 65, 257),
];

/// `transpose_k_major` of the `k × n` matrix whose element `i` (row-major)
/// is `from_f32(i)`, into an `n × ld` buffer poisoned with -1 first: every
/// element written, B's column `j` as row `j`, the columns `k..ld` zero.
fn transpose_matches<T>(
    (k, n, ld): (usize, usize, usize),
    from_f32: impl Fn(f32) -> T,
    to_f32: impl Fn(T) -> f32,
    stream: &Stream,
) where
    T: gpu_runtime::DeviceCopy + Default + gpu_ops::matmul::transpose_k_major::Instance,
{
    use gpu_ops::matmul::{transpose_k_major, TRANSPOSE_ROWS, TRANSPOSE_TILE};
    use gpu_runtime::launch;
    let b: Vec<T> = (0..k * n).map(|i| from_f32(i as f32)).collect();
    let src = DeviceBuffer::from_host_sync(&b).unwrap();
    let poison: Vec<T> = (0..n * ld).map(|_| from_f32(-1.0)).collect();
    let mut out = DeviceBuffer::from_host_sync(&poison).unwrap();
    let grid = (
        ld.div_ceil(TRANSPOSE_TILE) as u32,
        n.div_ceil(TRANSPOSE_TILE) as u32,
    );
    let block = (TRANSPOSE_TILE as u32, TRANSPOSE_ROWS as u32);
    let view = out.view_2d_mut(n, ld).unwrap();
    launch!(transpose_k_major[grid, block, stream](&src, k, view)).unwrap();
    let got = out.to_host_sync().unwrap();
    for j in 0..n {
        for c in 0..ld {
            let want = if c < k { to_f32(b[c * n + j]) } else { 0.0 };
            assert_eq!(
                to_f32(got[j * ld + c]),
                want,
                "k {k}, n {n}, ld {ld}: out[{j}][{c}]"
            );
        }
    }
}

/// `pad_rows_k_major` of a `rows × cols` matrix of distinct non-zero bit
/// patterns, into a `rows × ld` buffer poisoned with all-ones first: every
/// element written, each row's columns `cols..ld` zero (compared as bits).
/// Odd `cols` (rows never 16-byte aligned), `cols` a multiple of 8, `ld`
/// past `cols + 8` (runs of padding only), one row, rows past a block's
/// tile, columns past a tile's and several tiles; bf16 and f16.
#[test]
fn a_rows_are_padded_with_zeros_and_every_element_written() {
    let stream = Stream::new().unwrap();
    for (rows, cols, ld) in [
        (1, 1, 8),
        (1, 7, 8),
        (5, 7, 8),
        (1, 9, 64),
        (3, 8, 8),
        (2, 16, 64),
        (9, 300, 304),
        (130, 255, 256),
        (3, 520, 528),
        (67, 129, 192),
        (70, 131, 512),
        (200, 63, 64),
    ] {
        pad_matches::<bf16>((rows, cols, ld), &stream);
        pad_matches::<f16>((rows, cols, ld), &stream);
    }
}

/// A `rows × ld` grid of `pad_rows_k_major` blocks, tile rows in y.
fn pad_grid(rows: usize, ld: usize) -> (u32, u32, u32) {
    use gpu_ops::matmul::{PAD_TILE_COLS, PAD_TILE_ROWS};
    (
        ld.div_ceil(PAD_TILE_COLS) as u32,
        rows.div_ceil(PAD_TILE_ROWS) as u32,
        1,
    )
}

/// One `pad_rows_k_major` launch checked element by element, as bits.
fn pad_matches<T>((rows, cols, ld): (usize, usize, usize), stream: &Stream)
where
    T: gpu_runtime::DeviceCopy
        + gpu_device::vector::VectorElement
        + Default
        + gpu_runtime::bytemuck::Pod
        + gpu_ops::matmul::pad_rows_k_major::Instance,
{
    use gpu_ops::matmul::{pad_rows_k_major, PAD_THREADS};
    use gpu_runtime::bytemuck::cast_slice;
    use gpu_runtime::launch;
    // Bits `1 ..= 65_000`, never 0 (the padding) nor 0xFFFF (the poison).
    let bits: Vec<u16> = (0..rows * cols).map(|i| (i % 65_000) as u16 + 1).collect();
    let src = DeviceBuffer::<T>::to_device_sync(cast_slice(&bits), stream).unwrap();
    let poison = vec![0xFFFFu16; rows * ld];
    let mut out = DeviceBuffer::<T>::to_device_sync(cast_slice(&poison), stream).unwrap();
    let view = out.view_2d_mut(rows, ld).unwrap();
    launch!(pad_rows_k_major[pad_grid(rows, ld), PAD_THREADS as u32, stream](&src, cols, view))
        .unwrap();
    let got: Vec<T> = out.copy_to_host_sync(stream).unwrap();
    let got: &[u16] = cast_slice(&got);
    for r in 0..rows {
        for c in 0..ld {
            let want = if c < cols { bits[r * cols + c] } else { 0 };
            assert_eq!(
                got[r * ld + c],
                want,
                "{}: {rows} × {cols} to {ld}: ({r}, {c})",
                std::any::type_name::<T>()
            );
        }
    }
}

/// Attack on `pad_rows_k_major`: `src` one element shorter than `rows ×
/// cols` fails the launch at the index past it (the last row's last run,
/// read element by element), never reads past it. In a process of its own:
/// a failed launch ends the device.
#[test]
fn a_pad_of_a_short_source_fails_its_launch() {
    use crate::common::faults::{failure, in_own_process};
    use gpu_ops::matmul::pad_rows_k_major;
    use gpu_runtime::launch;
    if !in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let (rows, cols, ld) = (3usize, 13usize, 64usize);
    let short = vec![bf16::ONE; rows * cols - 1];
    let src = DeviceBuffer::<bf16>::to_device_sync(&short, &stream).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(rows * ld, &stream).unwrap();
    let view = out.view_2d_mut(rows, ld).unwrap();
    launch!(pad_rows_k_major[pad_grid(rows, ld), 256, stream](&src, cols, view)).unwrap();
    let report = failure(&stream);
    assert!(report.starts_with("pad_rows_k_major"), "{report}");
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(report.contains("index out of bounds"), "{report}");
    }
}

/// Attack on `pad_rows_k_major`'s tiles: a block of another size than 256
/// threads (whose tiles would overlap or leave gaps) is refused before
/// anything runs, naming the output and its map.
#[test]
fn a_pad_in_blocks_of_another_size_is_refused() {
    use gpu_ops::matmul::pad_rows_k_major;
    use gpu_runtime::launch;
    let stream = Stream::new().unwrap();
    let (rows, cols, ld) = (3usize, 13usize, 64usize);
    let src = DeviceBuffer::<bf16>::to_device_sync(&vec![bf16::ONE; rows * cols], &stream).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(rows * ld, &stream).unwrap();
    for block in [(128u32, 1u32, 1u32), (512, 1, 1), (16, 8, 1)] {
        let view = out.view_2d_mut(rows, ld).unwrap();
        match launch!(pad_rows_k_major[pad_grid(rows, ld), block, stream](&src, cols, view)) {
            Err(Error::InvalidLaunch { kernel, reason }) => {
                assert!(kernel.contains("pad_rows_k_major"), "{kernel}");
                assert!(reason.contains("256"), "{reason}");
            }
            other => panic!("block {block:?}: expected InvalidLaunch, got {other:?}"),
        }
    }
    let got: Vec<bf16> = out.copy_to_host_sync(&stream).unwrap();
    assert!(got.iter().all(|v| v.to_bits() == 0), "nothing ran");
}

/// B made K-major by the tiled transpose `matmul` runs, at tile multiples
/// and ragged sizes; the 16-bit instances `matmul` runs for bf16 and f16.
#[test]
fn b_is_transposed_k_major_with_zero_padding() {
    let stream = Stream::new().unwrap();
    for shape in [
        (1, 1, 8),
        (32, 32, 32),
        (67, 40, 72),
        (33, 65, 40),
        (9, 300, 16),
        (64, 1, 64),
    ] {
        transpose_matches(shape, |x| x, |x| x, &stream);
    }
    transpose_matches((19, 45, 24), bf16::from_f32, bf16::to_f32, &stream);
    transpose_matches((19, 45, 24), f16::from_f32, f16::to_f32, &stream);
}

/// The path of each element type on each kind of device: `wgmma` on 9.0
/// only (sm_90a code runs nowhere else), `mma.sync` on every other device
/// of sm_80 and later, none before; f32 on the SGEMM everywhere.
#[test]
fn each_device_gets_its_fastest_path() {
    for cc in [(8, 0), (8, 6), (8, 9), (10, 0), (12, 0)] {
        assert_eq!(
            MatmulPath::tensor_cores(cc),
            Some(MatmulPath::MmaSync),
            "{cc:?}"
        );
    }
    assert_eq!(MatmulPath::tensor_cores((9, 0)), Some(MatmulPath::Wgmma));
    assert_eq!(MatmulPath::tensor_cores((7, 5)), None);
    assert_eq!(MatmulPath::tensor_cores((7, 0)), None);
    // This test's device (the simulator's is 9.0 unless told otherwise).
    let device = Stream::new().unwrap().device();
    let cc = Device::get(device).unwrap().limits().compute_capability;
    let expected = if cc == (9, 0) {
        MatmulPath::Wgmma
    } else {
        MatmulPath::MmaSync
    };
    assert_eq!(gpu_ops::matmul_path::<bf16>(device).unwrap(), expected);
    assert_eq!(gpu_ops::matmul_path::<f16>(device).unwrap(), expected);
    assert_eq!(
        gpu_ops::matmul_path::<f32>(device).unwrap(),
        MatmulPath::Sgemm
    );
}

#[test]
fn bf16_matmul_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    for &shape in SHAPES {
        half_matches_the_reference(&BF16, shape, &stream);
    }
}

#[test]
fn f16_matmul_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    for &shape in SHAPES {
        half_matches_the_reference(&F16, shape, &stream);
    }
}

#[test]
fn f32_matmul_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    for &shape in SHAPES.iter().chain(&[(129, 17, 130), (256, 8, 128)]) {
        f32_matches_the_reference(shape, &stream);
    }
}

#[test]
fn matmul_on_the_current_stream_is_torch_matmul() {
    // [[1, 2, 3], [4, 5, 6]] @ [[1, 0], [0, 1], [1, 1]]: exact in bf16.
    let a: Vec<bf16> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
        .map(bf16::from_f32)
        .to_vec();
    let b: Vec<bf16> = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]
        .map(bf16::from_f32)
        .to_vec();
    let (da, db) = (
        DeviceBuffer::from_host_sync(&a).unwrap(),
        DeviceBuffer::from_host_sync(&b).unwrap(),
    );
    let c = gpu_ops::matmul(&da, (2, 3), &db, (3, 2)).unwrap();
    let c: Vec<f32> = c
        .to_host_sync()
        .unwrap()
        .into_iter()
        .map(bf16::to_f32)
        .collect();
    assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
}

/// The error of `matmul` for these inputs, as text, after checking it is
/// an `InvalidArgument` of `gpu_ops::matmul`.
fn refusal(a_len: usize, a_shape: (usize, usize), b_len: usize, b_shape: (usize, usize)) -> String {
    let stream = Stream::new().unwrap();
    let a = DeviceBuffer::<bf16>::zeroed_on(a_len, &stream).unwrap();
    let b = DeviceBuffer::<bf16>::zeroed_on(b_len, &stream).unwrap();
    let error = gpu_ops::matmul_on(&a, a_shape, &b, b_shape, &stream).unwrap_err();
    assert!(
        matches!(
            error,
            Error::InvalidArgument {
                operation: "gpu_ops::matmul",
                ..
            }
        ),
        "{error:?}"
    );
    // The f32 path checks alike.
    let (a32, b32) = (
        DeviceBuffer::<f32>::zeroed_on(a_len, &stream).unwrap(),
        DeviceBuffer::<f32>::zeroed_on(b_len, &stream).unwrap(),
    );
    let error32 = gpu_ops::matmul_on(&a32, a_shape, &b32, b_shape, &stream).unwrap_err();
    assert_eq!(error32.to_string(), error.to_string());
    error.to_string()
}

#[test]
fn matmul_refuses_bad_inputs_naming_them() {
    let message = refusal(6, (2, 3), 8, (4, 2));
    assert!(
        message.contains("A is 2 × 3, B is 4 × 2: A's columns must equal B's rows"),
        "{message}"
    );
    let message = refusal(5, (2, 3), 6, (3, 2));
    assert!(
        message.contains("`a` holds 5 elements, but A is 2 × 3, B is 3 × 2: 2 × 3 = 6"),
        "{message}"
    );
    let message = refusal(6, (2, 3), 7, (3, 2));
    assert!(message.contains("`b` holds 7 elements"), "{message}");
    for (a_shape, b_shape) in [((0, 3), (3, 2)), ((2, 0), (0, 2)), ((2, 3), (3, 0))] {
        let message = refusal(0, a_shape, 0, b_shape);
        assert!(message.contains("an empty matrix"), "{message}");
    }
    let message = refusal(1, (usize::MAX, 2), 2, (2, 1));
    assert!(message.contains("overflows usize"), "{message}");
}
