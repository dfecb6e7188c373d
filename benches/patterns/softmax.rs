//! Row softmax (issue #20): the Rust kernels `softmax_rows_vec4` (narrow:
//! at most 1024 columns, a multiple of 4) and `softmax_rows_strided` (wide,
//! fused), one block per row on a 1-D grid, beside the twins
//! `softmax_rows_vec4<128, 2>` and `softmax_rows_strided<256, 17>` and
//! `torch.softmax`; same inputs (splitmix64 seed 11, times 8) and check
//! (relative error at most 1e-5 against a double reference).

use crate::common::Res;
use crate::harness::{random_f32, POISON_F32};
use crate::table::{Baselines, Ctx};
use gpu_runtime::{launch, DeviceBuffer};
use gpu_test_kernels::patterns::softmax::{softmax_rows_strided, softmax_rows_vec4};

const FAMILY: &str = "row softmax, f32 (issue #20)";
const TORCH: &[(&str, f64)] = &[("torch.softmax", 1.0)];

/// The sizes: the issue's, or small odd ones (and 65,537 rows, more than a
/// grid's y extent, on a GPU) for `--quick`.
pub fn run(ctx: &mut Ctx) -> Res<()> {
    let sizes: &[(usize, usize)] = if ctx.quick {
        &[(65_537, 1000), (5, 1024), (3, 4), (7, 4099), (2, 1)]
    } else {
        &[(100_003, 1000), (100_003, 1024), (16_411, 4099)]
    };
    for &(rows, cols) in sizes {
        if rows > 65_535 && !ctx.on_gpu {
            println!("softmax {rows} x {cols}: left out on the simulator (too slow there; tests/suite/device_api/ownership.rs covers 70,000 rows)");
            continue;
        }
        case(ctx, rows, cols)?;
    }
    Ok(())
}

fn case(ctx: &mut Ctx, rows: usize, cols: usize) -> Res<()> {
    let narrow = cols.is_multiple_of(4) && cols <= 1024;
    let cells = rows * cols;
    let x: Vec<f32> = random_f32(cells, 11).into_iter().map(|v| 8.0 * v).collect();
    let mut want = vec![0.0f64; cells];
    for (row, out) in x.chunks(cols).zip(want.chunks_mut(cols)) {
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        for (o, &v) in out.iter_mut().zip(row) {
            *o = (v as f64 - max).exp() / sum;
        }
    }
    let stream = ctx.stream;
    let dx = DeviceBuffer::to_device_sync(&x, stream)?;
    let mut y = DeviceBuffer::<f32>::device_array(cells)?;
    let (kernel, entry, twin, symbol) = if narrow {
        (
            "softmax_rows_vec4 (narrow, float4 runs, 128 threads)",
            "softmax_rows_vec4__1d",
            "softmax, one block per row (narrow, float4)",
            "softmax_rows_vec4<128, 2>",
        )
    } else {
        (
            "softmax_rows_strided (wide, fused, 256 threads)",
            "softmax_rows_strided__1d",
            "softmax, one block per row (wide, fused, registers)",
            "softmax_rows_strided<256, 17>",
        )
    };
    let baselines = Baselines {
        family: FAMILY,
        twin,
        twin_symbol: symbol,
        libraries: TORCH,
    };
    ctx.run(
        kernel,
        entry,
        format!("{rows} x {cols}"),
        baselines,
        &mut y,
        |y| y.fill(POISON_F32, stream),
        |y| {
            let view = y.view_2d_mut(rows, cols)?;
            if narrow {
                launch!(softmax_rows_vec4[rows, 128, stream](&dx, view))
            } else {
                launch!(softmax_rows_strided[rows, 256, stream](&dx, view))
            }
        },
        |y, pass| {
            let got = y.copy_to_host_sync(stream)?;
            let mut bad = crate::harness::Mismatches::new(kernel, pass);
            let mut max_error = 0.0f64;
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let err = (g as f64 - w).abs() / w;
                if err.is_nan() || err > 1e-5 {
                    bad.report(|| {
                        format!("y[{}][{}] = {g:e}, reference {w:e}", i / cols, i % cols)
                    });
                }
                if err > max_error || err.is_nan() {
                    max_error = err;
                }
            }
            Ok((bad.ok(cells), max_error))
        },
    )
}
