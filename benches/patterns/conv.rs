//! 5 x 5 convolution (issue #20): the Rust kernel `conv2d_5x5` (filter as a
//! struct by value, 36 x 36 halo tile in shared memory, 25 taps unrolled, 4
//! outputs a thread) beside the twin `conv2d_5x5` and
//! `torch.nn.functional.conv2d` (cuDNN, TF32 off). Same inputs (splitmix64
//! seeds 12 and 13) and check (every element, bound `1.01 gamma_25 sum |w
//! x|`).

use crate::common::Res;
use crate::harness::{gamma, random_f32, POISON_F32};
use crate::table::{Baselines, Ctx};
use gpu_runtime::{launch, DeviceBuffer};
use gpu_test_kernels::patterns::conv::{conv2d_5x5, Filter5x5};

pub const FAMILY: &str = "5x5 convolution and layer norm, f32 (issue #20)";

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let sizes: &[(usize, usize)] = if ctx.quick {
        &[(37, 45), (1, 1), (33, 31)]
    } else {
        &[(8191, 4097)]
    };
    for &(h, w) in sizes {
        case(ctx, h, w)?;
    }
    Ok(())
}

fn case(ctx: &mut Ctx, h: usize, w: usize) -> Res<()> {
    let cells = h * w;
    let x = random_f32(cells, 12);
    let taps = random_f32(25, 13);
    let filter = Filter5x5 {
        w: core::array::from_fn(|i| taps[i]),
    };
    let mut want = vec![(0.0f64, 0.0f64); cells];
    for y in 0..h {
        for xx in 0..w {
            let (mut s, mut mag) = (0.0, 0.0);
            for dy in 0..5 {
                for dx in 0..5 {
                    let (iy, ix) = ((y + dy).wrapping_sub(2), (xx + dx).wrapping_sub(2));
                    if iy < h && ix < w {
                        let p = filter.w[5 * dy + dx] as f64 * x[iy * w + ix] as f64;
                        s += p;
                        mag += p.abs();
                    }
                }
            }
            want[y * w + xx] = (s, mag);
        }
    }
    let stream = ctx.stream;
    let dx = DeviceBuffer::to_device_sync(&x, stream)?;
    let mut out = DeviceBuffer::<f32>::device_array(cells)?;
    let g = gamma(25);
    let baselines = Baselines {
        family: FAMILY,
        twin: "conv2d 5x5, 32x32 tile + halo in shared, 4 outputs a thread",
        twin_symbol: "conv2d_5x5",
        libraries: &[("torch.nn.functional.conv2d (cuDNN, TF32 off)", 0.0)],
    };
    let kernel = "conv2d_5x5 (filter by value, halo tile, 25 taps unrolled)";
    ctx.run(
        kernel,
        "conv2d_5x5__2d",
        format!("{h} x {w}"),
        baselines,
        &mut out,
        |o| o.fill(POISON_F32, stream),
        |o| {
            let grid = (w.div_ceil(32), h.div_ceil(32));
            launch!(conv2d_5x5[grid, (32, 8), stream](&dx, filter, o.view_2d_mut(h, w)?))
        },
        |o, pass| {
            let got = o.copy_to_host_sync(stream)?;
            let mut bad = crate::harness::Mismatches::new(kernel, pass);
            let mut max_error = 0.0f64;
            for (i, (&v, &(s, mag))) in got.iter().zip(&want).enumerate() {
                let err = (v as f64 - s).abs();
                if !crate::harness::within(v, s, g * mag) {
                    bad.report(|| format!("out[{}][{}] = {v:e}, reference {s:e}", i / w, i % w));
                }
                if err > max_error || err.is_nan() {
                    max_error = err;
                }
            }
            Ok((bad.ok(cells), max_error))
        },
    )
}
