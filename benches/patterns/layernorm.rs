//! Layer norm (issue #20): the Rust kernels `layer_norm_rows_256x17` and
//! `layer_norm_rows_128x8` (one block per row, two passes over registers)
//! beside the twins `layer_norm_rows<256, 17>` and `<128, 8>` and
//! `torch.nn.functional.layer_norm`. Same inputs (splitmix64 seeds 14, 15,
//! 16; eps 1e-5) and check (every element, `|error| <= 1e-5 (1 +
//! |reference|)`).

use crate::common::Res;
use crate::harness::{random_f32, POISON_F32};
use crate::table::{Baselines, Ctx};
use gpu_runtime::{launch, DeviceBuffer};
use gpu_test_kernels::patterns::layernorm::{layer_norm_rows_128x8, layer_norm_rows_256x17};

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let sizes: &[(usize, usize)] = if ctx.quick {
        &[(3, 4099), (65_537, 1000), (2, 1)]
    } else {
        &[(16_411, 4099), (100_003, 1000)]
    };
    for &(rows, cols) in sizes {
        if rows > 65_535 && !ctx.on_gpu {
            println!("layer norm {rows} x {cols}: left out on the simulator (too slow there)");
            continue;
        }
        case(ctx, rows, cols)?;
    }
    Ok(())
}

fn case(ctx: &mut Ctx, rows: usize, cols: usize) -> Res<()> {
    let small = cols <= 128 * 8;
    let cells = rows * cols;
    let (x, gamma, beta) = (
        random_f32(cells, 14),
        random_f32(cols, 15),
        random_f32(cols, 16),
    );
    let eps = 1e-5f32;
    let mut want = vec![0.0f64; cells];
    for (row, out) in x.chunks(cols).zip(want.chunks_mut(cols)) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
        let rstd = 1.0 / (var + eps as f64).sqrt();
        for (c, (o, &v)) in out.iter_mut().zip(row).enumerate() {
            *o = (v as f64 - mean) * rstd * gamma[c] as f64 + beta[c] as f64;
        }
    }
    let stream = ctx.stream;
    let (dx, dg, db) = (
        DeviceBuffer::to_device_sync(&x, stream)?,
        DeviceBuffer::to_device_sync(&gamma, stream)?,
        DeviceBuffer::to_device_sync(&beta, stream)?,
    );
    let mut y = DeviceBuffer::<f32>::device_array(cells)?;
    let (kernel, entry, twin, symbol) = if small {
        (
            "layer_norm_rows_128x8 (one block of 128 per row)",
            "layer_norm_rows_128x8__1d",
            "layer norm, one block (128) per row, two passes in registers",
            "layer_norm_rows<128, 8>",
        )
    } else {
        (
            "layer_norm_rows_256x17 (one block of 256 per row)",
            "layer_norm_rows_256x17__1d",
            "layer norm, one block (256) per row, two passes in registers",
            "layer_norm_rows<256, 17>",
        )
    };
    let baselines = Baselines {
        family: crate::conv::FAMILY,
        twin,
        twin_symbol: symbol,
        libraries: &[("torch.nn.functional.layer_norm", 0.0)],
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
            if small {
                launch!(layer_norm_rows_128x8[rows, 128, stream](&dx, &dg, &db, eps, view))
            } else {
                launch!(layer_norm_rows_256x17[rows, 256, stream](&dx, &dg, &db, eps, view))
            }
        },
        |y, pass| {
            let got = y.copy_to_host_sync(stream)?;
            let mut bad = crate::harness::Mismatches::new(kernel, pass);
            let mut max_error = 0.0f64;
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let err = (g as f64 - w).abs();
                if err.is_nan() || err > 1e-5 * (1.0 + w.abs()) {
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
