//! SGEMM (issue #20): the Rust kernels `sgemm_4x4` (64 x 64 x 16 block
//! tiles) and `sgemm_8x8` (128 x 128 x 8), register tiles a thread, beside
//! the twins `sgemm_4x4` and `sgemm_8x8`, `cublasSgemm` (FP32, from the
//! twin program) and `torch.matmul` (TF32 off). Same inputs (splitmix64
//! seeds 1 and 2, leading dimensions rounded up to 4 with NaN padding) and
//! check (the corners, 400 entries from seed 3, the last row and column;
//! every entry in `--quick`; bound `1.01 gamma_K sum |a b|`).

use crate::common::Res;
use crate::harness::{gamma, SplitMix64, POISON_F32};
use crate::table::{Baselines, Ctx};
use gpu_runtime::{launch, DeviceBuffer};
use gpu_test_kernels::patterns::sgemm::{sgemm_4x4, sgemm_8x8, GemmShape};

const FAMILY: &str = "SGEMM, f32 (issue #20)";
const LIBRARIES: &[(&str, f64)] = &[
    ("cuBLAS cublasSgemm (FP32, no TF32)", 0.8),
    ("torch.matmul (cuBLAS FP32, allow_tf32 = False)", 0.8),
];

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let sizes: &[(usize, usize, usize)] = if ctx.quick {
        &[(129, 131, 67), (64, 64, 16), (1, 1, 1), (300, 200, 9)]
    } else {
        &[(4099, 4097, 4095), (4096, 4096, 4096)]
    };
    for &(m, n, k) in sizes {
        case(ctx, m, n, k)?;
    }
    Ok(())
}

fn round_up4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

fn case(ctx: &mut Ctx, m: usize, n: usize, k: usize) -> Res<()> {
    let (lda, ldb, ldc) = (round_up4(k), round_up4(n), round_up4(n));
    let mut a = vec![f32::NAN; m * lda];
    let mut b = vec![f32::NAN; k * ldb];
    let mut rng = SplitMix64::new(1);
    for i in 0..m {
        for j in 0..k {
            a[i * lda + j] = rng.next_f32();
        }
    }
    let mut rng = SplitMix64::new(2);
    for i in 0..k {
        for j in 0..n {
            b[i * ldb + j] = rng.next_f32();
        }
    }
    let mut entries: Vec<(usize, usize)> = Vec::new();
    if ctx.quick {
        entries.extend((0..m).flat_map(|i| (0..n).map(move |j| (i, j))));
    } else {
        let mut pick = SplitMix64::new(3);
        entries.extend([(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)]);
        for _ in 0..400 {
            let i = (pick.next_u64() % m as u64) as usize;
            let j = (pick.next_u64() % n as u64) as usize;
            entries.push((i, j));
        }
        entries.extend((0..n).map(|j| (m - 1, j)));
        entries.extend((0..m).map(|i| (i, n - 1)));
    }
    let exact: Vec<(f64, f64)> = entries
        .iter()
        .map(|&(i, j)| {
            (0..k).fold((0.0, 0.0), |(s, mag), p| {
                let prod = a[i * lda + p] as f64 * b[p * ldb + j] as f64;
                (s + prod, mag + prod.abs())
            })
        })
        .collect();
    let stream = ctx.stream;
    let (da, db) = (
        DeviceBuffer::to_device_sync(&a, stream)?,
        DeviceBuffer::to_device_sync(&b, stream)?,
    );
    let mut c = DeviceBuffer::<f32>::device_array(m * ldc)?;
    let shape = GemmShape {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        lda: lda as u32,
        ldb: ldb as u32,
    };
    let g = gamma(k);
    for eight in [false, true] {
        let (kernel, entry, twin, symbol) = if eight {
            (
                "sgemm_8x8 (128x128x8 tiles, 8x8 a thread)",
                "sgemm_8x8__2d",
                "sgemm 128x128x8 tiles, 8x8 per thread",
                "sgemm_8x8",
            )
        } else {
            (
                "sgemm_4x4 (64x64x16 tiles, 4x4 a thread)",
                "sgemm_4x4__2d",
                "sgemm 64x64x16 tiles, 4x4 per thread",
                "sgemm_4x4",
            )
        };
        let baselines = Baselines {
            family: FAMILY,
            twin,
            twin_symbol: symbol,
            libraries: LIBRARIES,
        };
        ctx.run(
            kernel,
            entry,
            format!("{m}x{n}x{k}"),
            baselines,
            &mut c,
            |c| c.fill(POISON_F32, stream),
            |c| {
                let view = c.view_2d_mut(m, ldc)?;
                if eight {
                    launch!(sgemm_8x8[(n.div_ceil(128), m.div_ceil(128)), 256, stream](&da, &db, shape, view))
                } else {
                    launch!(sgemm_4x4[(n.div_ceil(64), m.div_ceil(64)), 256, stream](&da, &db, shape, view))
                }
            },
            |c, pass| {
                let got = c.copy_to_host_sync(stream)?;
                let mut bad = crate::harness::Mismatches::new(kernel, pass);
                let mut max_error = 0.0f64;
                for (&(i, j), &(want, mag)) in entries.iter().zip(&exact) {
                    let v = got[i * ldc + j];
                    let err = (v as f64 - want).abs();
                    if !crate::harness::within(v, want, g * mag) {
                        bad.report(|| format!("C[{i}][{j}] = {v:e}, reference {want:e}"));
                    }
                    if err > max_error || err.is_nan() {
                        max_error = err;
                    }
                }
                Ok((bad.ok(entries.len()), max_error))
            },
        )?;
    }
    Ok(())
}
