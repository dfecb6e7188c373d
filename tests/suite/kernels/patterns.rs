//! The Rust ports of issue #20's kernels (`gpu_test_kernels::patterns`),
//! checked against CPU references at small odd sizes: row softmax (narrow
//! and wide), SGEMM (4 x 4 and 8 x 8 register tiles), the 5 x 5
//! convolution and layer norm. `benches/patterns.rs` times them at the
//! issue's sizes (and checks them again there; its `--quick` mode runs a
//! softmax of 65,537 rows, more than a grid's y extent holds, which is too
//! slow for the simulator: `tests/suite/device_api/ownership.rs` covers one block per row
//! over 70,000 rows with a smaller block). On the simulator where there is
//! no GPU, on the GPU otherwise.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::patterns::{conv, layernorm, sgemm, softmax};

/// splitmix64, the twins' input generator (`benches/cuda/twins.h`).
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 * (1.0 / (1u64 << 23) as f32) - 1.0
    }
}

fn softmax_reference(x: &[f32], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.into_iter().map(move |v| v / sum)
        })
        .collect()
}

fn check_close(got: &[f32], want: &[f64], bound: impl Fn(usize, f64) -> f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs();
        assert!(
            err <= bound(i, w),
            "{what}: element {i}: got {g}, want {w} (error {err:e})"
        );
    }
}

#[test]
fn softmax_narrow_and_wide_match_the_reference_at_odd_sizes() {
    let s = Stream::new().unwrap();
    let mut mix = Mix(11);
    // (rows, cols, wide): rows of 4 columns, of 1000 (250 float4 runs), of
    // 1024, of 1 and 3 columns (partial runs), and wide rows of 4099.
    for (rows, cols, wide) in [
        (7usize, 1000usize, false),
        (3, 1024, false),
        (5, 4, false),
        (4, 3, false),
        (2, 1, false),
        (3, 4099, true),
        (2, 1, true),
        (5, 300, true),
    ] {
        let x: Vec<f32> = (0..rows * cols).map(|_| 8.0 * mix.f32()).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        let mut y = DeviceBuffer::to_device_sync(&vec![f32::NAN; rows * cols], &s).unwrap();
        let view = y.view_2d_mut(rows, cols).unwrap();
        if wide {
            launch!(softmax::softmax_rows_strided[rows, 256, s](&dx, view)).unwrap();
        } else {
            launch!(softmax::softmax_rows_vec4[rows, 128, s](&dx, view)).unwrap();
        }
        let got = y.copy_to_host_sync(&s).unwrap();
        let want = softmax_reference(&x, cols);
        check_close(
            &got,
            &want,
            |_, w| 1e-5 * w.abs() + 1e-30,
            &format!("{rows} x {cols}"),
        );
    }
}

fn round_up4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// `C = A B` with padded leading dimensions; the padding holds NaN, so a
/// kernel that reads it as data fails the check.
fn sgemm_case(m: usize, n: usize, k: usize, eight: bool, s: &Stream) {
    let lds = (round_up4(k), round_up4(n), round_up4(n));
    sgemm_case_with_lds(m, n, k, lds, eight, s);
}

/// [`sgemm_case`] with leading dimensions of the caller's: ones that are
/// not multiples of 4 make every row but the first misaligned, so the
/// kernels read them on the element path.
fn sgemm_case_with_lds(
    m: usize,
    n: usize,
    k: usize,
    (lda, ldb, ldc): (usize, usize, usize),
    eight: bool,
    s: &Stream,
) {
    let mut mix = Mix((m * 31 + n * 7 + k) as u64);
    let mut a = vec![f32::NAN; m * lda];
    let mut b = vec![f32::NAN; k * ldb];
    for r in 0..m {
        for c in 0..k {
            a[r * lda + c] = mix.f32();
        }
    }
    for r in 0..k {
        for c in 0..n {
            b[r * ldb + c] = mix.f32();
        }
    }
    let (da, db) = (
        DeviceBuffer::to_device_sync(&a, s).unwrap(),
        DeviceBuffer::to_device_sync(&b, s).unwrap(),
    );
    let mut dc = DeviceBuffer::to_device_sync(&vec![f32::NAN; m * ldc], s).unwrap();
    let shape = sgemm::GemmShape {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        lda: lda as u32,
        ldb: ldb as u32,
    };
    let view = dc.view_2d_mut(m, ldc).unwrap();
    if eight {
        launch!(sgemm::sgemm_8x8[(n.div_ceil(128), m.div_ceil(128)), 256, s](&da, &db, shape, view)).unwrap();
    } else {
        launch!(sgemm::sgemm_4x4[(n.div_ceil(64), m.div_ceil(64)), 256, s](&da, &db, shape, view))
            .unwrap();
    }
    let c = dc.copy_to_host_sync(s).unwrap();
    let gamma = |n: usize| {
        let u = f64::powi(2.0, -24);
        n as f64 * u / (1.0 - n as f64 * u)
    };
    for r in 0..m {
        for j in 0..ldc {
            let got = c[r * ldc + j];
            if j >= n {
                assert!(
                    got.is_nan(),
                    "{m}x{n}x{k}: padding ({r}, {j}) was written: {got}"
                );
                continue;
            }
            let (mut want, mut abs) = (0.0f64, 0.0f64);
            for p in 0..k {
                let prod = a[r * lda + p] as f64 * b[p * ldb + j] as f64;
                want += prod;
                abs += prod.abs();
            }
            let bound = 1.01 * gamma(k) * abs + 1e-30;
            assert!(
                (got as f64 - want).abs() <= bound,
                "{} {m}x{n}x{k}: ({r}, {j}): got {got}, want {want}",
                if eight { "8x8" } else { "4x4" }
            );
        }
    }
}

#[test]
fn sgemm_with_4x4_register_tiles_matches_the_reference() {
    let s = Stream::new().unwrap();
    for (m, n, k) in [
        (129, 131, 67),
        (64, 64, 16),
        (1, 1, 1),
        (70, 5, 33),
        (3, 200, 0),
    ] {
        sgemm_case(m, n, k, false, &s);
    }
    // Rows 16-byte aligned in no matrix but the first row: whole runs read
    // element by element.
    sgemm_case_with_lds(70, 67, 35, (37, 69, 70), false, &s);
}

#[test]
fn sgemm_with_8x8_register_tiles_matches_the_reference() {
    let s = Stream::new().unwrap();
    for (m, n, k) in [(129, 131, 67), (128, 128, 8), (1, 1, 1), (130, 9, 17)] {
        sgemm_case(m, n, k, true, &s);
    }
    sgemm_case_with_lds(130, 131, 19, (21, 133, 131), true, &s);
}

#[test]
fn the_5x5_convolution_with_a_filter_struct_matches_the_reference() {
    let s = Stream::new().unwrap();
    let mut mix = Mix(21);
    let filter = conv::Filter5x5 {
        w: core::array::from_fn(|_| mix.f32()),
    };
    for (h, w) in [(37usize, 45usize), (32, 32), (1, 1), (70, 3)] {
        let x: Vec<f32> = (0..h * w).map(|_| mix.f32()).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; h * w], &s).unwrap();
        let grid = (w.div_ceil(32), h.div_ceil(32));
        launch!(conv::conv2d_5x5[grid, (32, 8), s](&dx, filter, out.view_2d_mut(h, w).unwrap()))
            .unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        let gamma25 = 25.0 * f64::powi(2.0, -24) / (1.0 - 25.0 * f64::powi(2.0, -24));
        for y in 0..h {
            for xx in 0..w {
                let (mut want, mut abs) = (0.0f64, 0.0f64);
                for dy in 0..5 {
                    for dx_ in 0..5 {
                        let (iy, ix) = (y as isize + dy - 2, xx as isize + dx_ - 2);
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            let p = filter.w[(5 * dy + dx_) as usize] as f64
                                * x[iy as usize * w + ix as usize] as f64;
                            want += p;
                            abs += p.abs();
                        }
                    }
                }
                let g = got[y * w + xx] as f64;
                assert!(
                    (g - want).abs() <= 1.01 * gamma25 * abs + 1e-30,
                    "{h}x{w}: ({y}, {xx}): got {g}, want {want}"
                );
            }
        }
    }
}

#[test]
fn layer_norm_matches_the_reference() {
    let s = Stream::new().unwrap();
    let mut mix = Mix(31);
    for (rows, cols, wide) in [
        (3usize, 4099usize, true),
        (5, 1000, false),
        (2, 1, false),
        (2, 1, true),
        (4, 257, true),
    ] {
        let x: Vec<f32> = (0..rows * cols).map(|_| 4.0 * mix.f32() + 1.0).collect();
        let gamma: Vec<f32> = (0..cols).map(|_| mix.f32()).collect();
        let beta: Vec<f32> = (0..cols).map(|_| mix.f32()).collect();
        let (dx, dg, db) = (
            DeviceBuffer::to_device_sync(&x, &s).unwrap(),
            DeviceBuffer::to_device_sync(&gamma, &s).unwrap(),
            DeviceBuffer::to_device_sync(&beta, &s).unwrap(),
        );
        let mut y = DeviceBuffer::to_device_sync(&vec![f32::NAN; rows * cols], &s).unwrap();
        let view = y.view_2d_mut(rows, cols).unwrap();
        let eps = 1e-5f32;
        if wide {
            launch!(layernorm::layer_norm_rows_256x17[rows, 256, s](&dx, &dg, &db, eps, view))
                .unwrap();
        } else {
            launch!(layernorm::layer_norm_rows_128x8[rows, 128, s](&dx, &dg, &db, eps, view))
                .unwrap();
        }
        let got = y.copy_to_host_sync(&s).unwrap();
        let mut want = Vec::new();
        for row in x.chunks(cols) {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
            let rstd = 1.0 / (var + eps as f64).sqrt();
            want.extend(
                row.iter()
                    .enumerate()
                    .map(|(c, &v)| (v as f64 - mean) * rstd * gamma[c] as f64 + beta[c] as f64),
            );
        }
        check_close(
            &got,
            &want,
            |_, w| 1e-5 * (1.0 + w.abs()),
            &format!("{rows} x {cols}"),
        );
    }
}
