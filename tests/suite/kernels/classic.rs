//! The five kernels of issue 9 (`gpu_test_kernels::classic`), run on the CPU
//! simulator (or a GPU, where there is one) against CPU references, with
//! sizes that are not multiples of the tile or the block and outputs
//! poisoned before each run, and edge shapes (1 x 1, 1 x N, N x 1, 2 x 2,
//! 33 x 65).
//!
//! Sums of products are compared with a tolerance: on a GPU the kernels are
//! built with FMA contraction (one rounding per multiply-add), the simulator
//! and the references round twice.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::classic::{self, StencilWeights};

/// A reproducible value in [-1, 1) for index `i` of stream `seed`.
fn value(seed: u64, i: usize) -> f32 {
    let mut z =
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z >> 40) as f32) * (1.0 / (1u64 << 23) as f32) - 1.0
}

fn values(seed: u64, n: usize) -> Vec<f32> {
    (0..n).map(|i| value(seed, i)).collect()
}

fn poisoned(n: usize, stream: &Stream) -> DeviceBuffer<f32> {
    DeviceBuffer::to_device_sync(&vec![f32::NAN; n], stream).unwrap()
}

fn assert_close(got: f32, want: f64, scale: f64, what: &str) {
    let tolerance = 1e-5 * scale.max(1.0);
    assert!(
        (got as f64 - want).abs() <= tolerance,
        "{what}: got {got}, expected {want} (tolerance {tolerance})"
    );
}

#[test]
fn tiled_matmul_matches_the_cpu_for_sizes_not_multiples_of_16() {
    let stream = Stream::new().unwrap();
    for (m, n, k) in [
        (37usize, 45usize, 29usize),
        (16, 16, 16),
        (1, 33, 17),
        (20, 3, 1),
    ] {
        let (a, b) = (values(1, m * k), values(2, k * n));
        let (da, db) = (
            DeviceBuffer::to_device_sync(&a, &stream).unwrap(),
            DeviceBuffer::to_device_sync(&b, &stream).unwrap(),
        );
        let mut c = poisoned(m * n, &stream);
        launch!(classic::matmul_tiled[(n.div_ceil(16), m.div_ceil(16)), (16, 16), stream](
            &da,
            &db,
            k,
            c.view_2d_mut(m, n).unwrap()
        ))
        .unwrap();
        let got = c.copy_to_host_sync(&stream).unwrap();
        for row in 0..m {
            for col in 0..n {
                let (mut want, mut scale) = (0.0f64, 0.0f64);
                for i in 0..k {
                    let p = a[row * k + i] as f64 * b[i * n + col] as f64;
                    want += p;
                    scale += p.abs();
                }
                assert_close(
                    got[row * n + col],
                    want,
                    scale,
                    &format!("{m}x{n}x{k} c[{row}][{col}]"),
                );
            }
        }
    }
}

/// Shapes with no interior, one interior element, a border of partial
/// blocks, and blocks that are partly outside on both axes.
const JACOBI_SHAPES: [(usize, usize); 11] = [
    (1, 1),
    (1, 9),
    (9, 1),
    (1, 40),
    (40, 1),
    (2, 2),
    (3, 3),
    (2, 45),
    (33, 65),
    (37, 45),
    (70, 33),
];

fn check_jacobi(h: usize, w: usize, stream: &Stream) {
    let input = values(3, h * w);
    let din = DeviceBuffer::to_device_sync(&input, stream).unwrap();
    let mut out = poisoned(h * w, stream);
    let grid = (w.div_ceil(32), h.div_ceil(8));
    launch!(classic::jacobi5[grid, (32, 8), stream](&din, out.view_2d_mut(h, w).unwrap())).unwrap();
    let got = out.copy_to_host_sync(stream).unwrap();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let want = if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
                0.25 * ((input[i - w] + input[i + w]) + (input[i - 1] + input[i + 1]))
            } else {
                input[i]
            };
            // No multiply-add to fuse: exact on both backends.
            assert_eq!(
                got[i].to_bits(),
                want.to_bits(),
                "jacobi5 {h}x{w} ({y}, {x})"
            );
        }
    }
}

#[test]
fn jacobi_steps_match_the_cpu() {
    let stream = Stream::new().unwrap();
    for (h, w) in JACOBI_SHAPES {
        check_jacobi(h, w, &stream);
    }
}

#[test]
fn the_jacobi_step_refuses_blocks_other_than_its_declared_shape() {
    // Blocks of (4, 16) cover the grid too, but `jacobi5` declares (32, 8):
    // the launcher refuses them before anything runs, and the output keeps
    // its poison.
    let stream = Stream::new().unwrap();
    let (h, w) = (19usize, 23usize);
    let din = DeviceBuffer::to_device_sync(&values(9, h * w), &stream).unwrap();
    let mut out = poisoned(h * w, &stream);
    for (grid, block) in [
        ((w.div_ceil(4), h.div_ceil(16)), (4, 16)),
        ((1, 1), (w, h)),
        ((w.div_ceil(32), h.div_ceil(8)), (8, 32)),
    ] {
        let refused =
            launch!(classic::jacobi5[grid, block, stream](&din, out.view_2d_mut(h, w).unwrap()));
        let message = refused.unwrap_err().to_string();
        assert!(
            message.contains("jacobi5") && message.contains("(32, 8, 1)"),
            "blocks {block:?}: {message}"
        );
    }
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert!(got.iter().all(|v| v.is_nan()), "a refused launch wrote");
}

#[test]
fn an_input_shorter_than_the_output_is_a_launch_error_naming_it() {
    // `jacobi5` and `transpose_32x32` declare `len(input >= out)`: their
    // entry points take the input's length as known (no test on the
    // device), so the launcher checks it. One element short is refused
    // before anything runs, naming `input` and `out`; the output keeps its
    // poison. (A longer input is accepted: its first h * w elements are
    // the grid.)
    let stream = Stream::new().unwrap();
    let (h, w) = (19usize, 23usize);
    let short = DeviceBuffer::to_device_sync(&values(9, h * w - 1), &stream).unwrap();
    let mut out = poisoned(h * w, &stream);
    let refused = [
        launch!(classic::jacobi5[(1, 3), (32, 8), stream](&short, out.view_2d_mut(h, w).unwrap())),
        launch!(classic::transpose_32x32[(1, 1), (32, 32), stream](&short, out.view_2d_mut(w, h).unwrap())),
    ];
    for (kernel, result) in ["jacobi5", "transpose_32x32"].into_iter().zip(refused) {
        let message = result.unwrap_err().to_string();
        assert!(
            message.contains(kernel)
                && message.contains(&format!("`input` has {} elements", h * w - 1))
                && message.contains(&format!("{} of `out`", h * w)),
            "{kernel}: {message}"
        );
    }
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert!(got.iter().all(|v| v.is_nan()), "a refused launch wrote");
    let long = DeviceBuffer::to_device_sync(&values(3, h * w + 5), &stream).unwrap();
    launch!(classic::jacobi5[(1, 3), (32, 8), stream](&long, out.view_2d_mut(h, w).unwrap()))
        .unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap()[0], values(3, 1)[0]);
}

#[test]
fn privatised_histogram_counts_every_value() {
    let stream = Stream::new().unwrap();
    for (n, blocks) in [(100_003usize, 7usize), (1000, 1), (5, 3), (0, 2)] {
        let input: Vec<u32> = (0..n)
            .map(|i| (value(4, i).to_bits() >> 3) ^ (i as u32).wrapping_mul(2_654_435_761))
            .collect();
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed_on(256, &stream).unwrap();
        launch!(classic::histogram256[blocks, 256, stream](&din, &mut bins)).unwrap();
        let got = bins.copy_to_host_sync(&stream).unwrap();
        let mut want = vec![0u32; 256];
        for v in &input {
            want[(v & 0xff) as usize] += 1;
        }
        assert_eq!(got, want, "n = {n}, {blocks} blocks");
    }
}

/// The two transposes.
const TRANSPOSES: [&str; 2] = ["transpose_32x8", "transpose_32x32"];

fn check_transpose(h: usize, w: usize, kernel: &str, stream: &Stream) {
    let input = values(5, h * w);
    let din = DeviceBuffer::to_device_sync(&input, stream).unwrap();
    let mut out = poisoned(h * w, stream);
    let grid = (h.div_ceil(32), w.div_ceil(32));
    let view = out.view_2d_mut(w, h).unwrap();
    match kernel {
        "transpose_32x8" => launch!(classic::transpose_32x8[grid, (32, 8), stream](&din, view)),
        "transpose_32x32" => launch!(classic::transpose_32x32[grid, (32, 32), stream](&din, view)),
        _ => unreachable!("{kernel}"),
    }
    .unwrap();
    let got = out.copy_to_host_sync(stream).unwrap();
    for r in 0..w {
        for c in 0..h {
            assert_eq!(
                got[r * h + c].to_bits(),
                input[c * w + r].to_bits(),
                "{kernel} {h}x{w} out[{r}][{c}]"
            );
        }
    }
}

#[test]
fn transposes_match_the_cpu_for_non_square_sizes_not_multiples_of_32() {
    let stream = Stream::new().unwrap();
    for (h, w) in [
        (45usize, 70usize),
        (33, 1),
        (1, 65),
        (64, 32),
        (1, 1),
        (2, 2),
        (33, 65),
    ] {
        for kernel in TRANSPOSES {
            check_transpose(h, w, kernel, &stream);
        }
    }
}

#[test]
fn stencil_with_a_shared_halo_matches_the_cpu() {
    let stream = Stream::new().unwrap();
    let weights = StencilWeights {
        w: [0.05, -0.1, 0.15, 0.2, 0.4, 0.2, 0.15, -0.1, 0.05],
    };
    for n in [1000usize, 256, 257, 3, 1] {
        let input = values(6, n);
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let mut out = poisoned(n, &stream);
        launch!(classic::stencil1d_r4[n.div_ceil(256), 256, stream](&din, weights, &mut out))
            .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for (i, &got) in got.iter().enumerate() {
            let (mut want, mut scale) = (0.0f64, 0.0f64);
            for (k, &wk) in weights.w.iter().enumerate() {
                let j = i as isize + k as isize - 4;
                let x = if j >= 0 && (j as usize) < n {
                    input[j as usize]
                } else {
                    0.0
                };
                want += wk as f64 * x as f64;
                scale += (wk as f64 * x as f64).abs();
            }
            assert_close(got, want, scale, &format!("n = {n}, out[{i}]"));
        }
    }
}
