//! The six Rust kernels of `gpu_test_kernels::classic`, each run as `kernels.cu`
//! runs its CUDA C counterpart: the same sizes, inputs, launch shapes and
//! checks (see `benches/cuda/KERNELS.md`).

use super::harness::{
    gamma, median_launch_ms, random_f32, within, Mismatches, SplitMix64, POISON_F32,
};
use crate::common::{Res, Results};
use gpu_runtime::{launch, DeviceBuffer, DeviceCopy, Stream};
use gpu_test_kernels::classic::{self, StencilWeights};

/// The problem sizes.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// `(m, n, k)`: `C (m x n) = A (m x k) * B (k x n)`.
    pub matmul: (usize, usize, usize),
    /// `(h, w)` of the Jacobi grid.
    pub jacobi: (usize, usize),
    /// Values in the histogram's input.
    pub histogram: usize,
    /// `(h, w)` of the transposes' input.
    pub transpose: (usize, usize),
    /// Elements of the stencil's input.
    pub stencil: usize,
}

impl Sizes {
    /// `kernels.cu`'s sizes: none a multiple of its tile or block.
    pub const FULL: Sizes = Sizes {
        matmul: (2049, 2049, 2049),
        jacobi: (8191, 8193),
        histogram: (1 << 28) + 17,
        transpose: (8191, 8193),
        stencil: (1 << 26) + 7,
    };

    /// Small sizes for `--check` (one launch each, on the simulator too):
    /// partial tiles and blocks in every direction, and a histogram long
    /// enough for the four-load loop and the tail loop.
    pub const CHECK: Sizes = Sizes {
        matmul: (37, 35, 41),
        jacobi: (45, 70),
        histogram: 5003,
        transpose: (45, 70),
        stencil: 1017,
    };
}

/// One run of the kernels: where they run, whether they are timed, and
/// what they found.
pub struct Run<'a> {
    /// The non-blocking stream every launch goes to.
    pub stream: &'a Stream,
    /// Time the kernels (`false`: `--check`, one checked launch each).
    pub timed: bool,
    /// `RESULT` figures, `rust_<kernel>_ms` and the rate.
    pub results: &'a mut Results,
    /// Checks that failed (printed as `FAILED` lines).
    pub failures: usize,
}

impl Run<'_> {
    /// Poisons `out` with `poison`, queues `before` and one `launch`, and
    /// checks the result with `check` (which reports each wrong value and
    /// returns how many values it checked). With `--check`, it first makes
    /// sure the check rejects the poisoned, unwritten output. Timed runs
    /// then time `TIMED` launches (each after `before`, outside the events)
    /// and check again. Returns the median ms if timed and every check passed.
    fn checked_timing<T: DeviceCopy>(
        &mut self,
        kernel: &str,
        out: &mut DeviceBuffer<T>,
        poison: T,
        mut before: impl FnMut(&mut DeviceBuffer<T>) -> gpu_runtime::Result<()>,
        mut launch: impl FnMut(&mut DeviceBuffer<T>) -> gpu_runtime::Result<()>,
        mut check: impl FnMut(&[T], &mut Mismatches) -> usize,
    ) -> Res<Option<f64>> {
        let stream = self.stream;
        out.fill(poison, stream)?;
        if !self.timed {
            let poisoned = out.copy_to_host_sync(stream)?;
            let mut bad = Mismatches::quiet(kernel);
            let checked = check(&poisoned, &mut bad);
            if bad.count() != checked {
                return Err(format!(
                    "{kernel}: the check accepted {} of {checked} values of an unwritten output",
                    checked - bad.count()
                )
                .into());
            }
        }
        let mut passes = |pass: &str, out: &DeviceBuffer<T>| -> Res<bool> {
            let got = out.copy_to_host_sync(stream)?;
            let mut bad = Mismatches::new(kernel, pass);
            let checked = check(&got, &mut bad);
            let ok = bad.ok(checked);
            if ok {
                println!("  {kernel} ({pass}): {checked} values checked, all right");
            }
            Ok(ok)
        };
        before(out)?;
        launch(out)?;
        stream.synchronize()?;
        if !passes("before timing", out)? {
            self.failures += 1;
            return Ok(None);
        }
        if !self.timed {
            return Ok(None);
        }
        let ms = median_launch_ms(stream, out, &mut before, &mut launch)?;
        if !passes("after timing", out)? {
            self.failures += 1;
            return Ok(None);
        }
        Ok(Some(ms))
    }

    /// Records `rust_<name>_ms` and `rust_<name>_<rate_unit>` (`rate` per
    /// second, scaled by `scale`), and prints them as `RESULT` lines.
    fn record(&mut self, name: &str, ms: Option<f64>, per_launch: f64, scale: f64, unit: &str) {
        let Some(ms) = ms else { return };
        let (rate_key, unit_text) = match unit {
            "tflops" => ("tflops", "TFLOP/s"),
            _ => ("gbps", "GB/s"),
        };
        let rate = per_launch / (ms * 1e-3) / scale;
        println!("RESULT rust_{name}_ms {ms:.4} ms");
        println!("RESULT rust_{name}_{rate_key} {rate:.3} {unit_text}");
        self.results.insert(format!("rust_{name}_ms"), ms);
        self.results.insert(format!("rust_{name}_{rate_key}"), rate);
    }

    /// `matmul_tiled`: 16 x 16 tiles, block (16, 16); entries checked against
    /// a double reference within the dot product's error bound.
    pub fn matmul(&mut self, (m, n, k): (usize, usize, usize)) -> Res<()> {
        let stream = self.stream;
        let grid = (n.div_ceil(16), m.div_ceil(16));
        println!(
            "matmul_tiled: C ({m} x {n}) = A ({m} x {k}) * B ({k} x {n}), f32, block (16, 16), grid {grid:?}"
        );
        let (ha, hb) = (random_f32(m * k, 1), random_f32(k * n, 2));
        let (a, b) = (
            DeviceBuffer::to_device_sync(&ha, stream)?,
            DeviceBuffer::to_device_sync(&hb, stream)?,
        );
        let mut c = DeviceBuffer::<f32>::empty_on(m * n, stream)?;
        // The corners, 400 random entries (seed 3), the last row and the last
        // column (the partial tiles); with --check, every entry.
        let mut entries = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
        let mut pick = SplitMix64::new(3);
        for _ in 0..400 {
            let i = (pick.next_u64() % m as u64) as usize;
            entries.push((i, (pick.next_u64() % n as u64) as usize));
        }
        entries.extend((0..n).map(|j| (m - 1, j)));
        entries.extend((0..m).map(|i| (i, n - 1)));
        if !self.timed {
            entries.extend((0..m).flat_map(|i| (0..n).map(move |j| (i, j))));
        }
        let bound = gamma(k);
        let ms = self.checked_timing(
            "rust_matmul",
            &mut c,
            POISON_F32,
            |_| Ok(()),
            |c| {
                launch!(classic::matmul_tiled[grid, (16, 16), stream](
                    &a,
                    &b,
                    k,
                    c.view_2d_mut(m, n)?
                ))
            },
            |got, bad| {
                for &(i, j) in &entries {
                    let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
                    for kk in 0..k {
                        let p = ha[i * k + kk] as f64 * hb[kk * n + j] as f64;
                        exact += p;
                        magnitude += p.abs();
                    }
                    let g = got[i * n + j];
                    if !within(g, exact, bound * magnitude) {
                        bad.report(|| {
                            format!(
                                "C[{i}][{j}] = {g:.9}, reference {exact:.9} (bound {:.3e})",
                                bound * magnitude
                            )
                        });
                    }
                }
                entries.len()
            },
        )?;
        self.record("matmul", ms, 2.0 * (m * n * k) as f64, 1e12, "tflops");
        Ok(())
    }

    /// `jacobi5`: block (32, 8); every element checked exactly (same f32
    /// operations in the same order).
    pub fn jacobi(&mut self, (h, w): (usize, usize)) -> Res<()> {
        let stream = self.stream;
        let cells = h * w;
        let grid = (w.div_ceil(32), h.div_ceil(8));
        println!("jacobi5: {h} x {w} f32 grid (h x w), block (32, 8), grid {grid:?}");
        let hin = random_f32(cells, 4);
        let input = DeviceBuffer::to_device_sync(&hin, stream)?;
        let mut out = DeviceBuffer::<f32>::empty_on(cells, stream)?;
        let mut want = vec![0.0f32; cells];
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                want[i] = if x > 0 && y > 0 && x < w - 1 && y < h - 1 {
                    0.25 * ((hin[i - w] + hin[i + w]) + (hin[i - 1] + hin[i + 1]))
                } else {
                    hin[i]
                };
            }
        }
        let ms = self.checked_timing(
            "rust_jacobi",
            &mut out,
            POISON_F32,
            |_| Ok(()),
            |out| {
                launch!(classic::jacobi5[grid, (32, 8), stream](
                    &input,
                    out.view_2d_mut(h, w)?
                ))
            },
            |got, bad| {
                for (i, (&g, &r)) in got.iter().zip(&want).enumerate() {
                    if g != r {
                        bad.report(|| {
                            format!("out[{}][{}] = {g:.9}, reference {r:.9}", i / w, i % w)
                        });
                    }
                }
                cells
            },
        )?;
        self.record("jacobi", ms, 2.0 * cells as f64 * 4.0, 1e9, "gbps");
        Ok(())
    }

    /// `histogram256`: block 256, `grid` blocks (SMs x resident blocks on a
    /// GPU); the 256 bins checked exactly, zeroed before every launch.
    pub fn histogram(&mut self, n: usize, grid: usize) -> Res<()> {
        let stream = self.stream;
        println!(
            "histogram256: {n} u32 values (low 8 bits binned), 256 bins, block 256, grid {grid}"
        );
        let mut rng = SplitMix64::new(5);
        let hin: Vec<u32> = (0..n).map(|_| (rng.next_u64() >> 32) as u32).collect();
        let input = DeviceBuffer::to_device_sync(&hin, stream)?;
        let mut bins = DeviceBuffer::<u32>::empty_on(256, stream)?;
        let mut want = [0u32; 256];
        for v in &hin {
            want[(v & 0xff) as usize] += 1;
        }
        let ms = self.checked_timing(
            "rust_histogram",
            &mut bins,
            u32::MAX,
            |bins| bins.zero(stream),
            |bins| launch!(classic::histogram256[grid, 256, stream](&input, bins)),
            |got, bad| {
                for (bin, (&g, &r)) in got.iter().zip(&want).enumerate() {
                    if g != r {
                        bad.report(|| format!("bin {bin} = {g}, reference {r}"));
                    }
                }
                256
            },
        )?;
        self.record("histogram", ms, n as f64 * 4.0, 1e9, "gbps");
        Ok(())
    }

    /// `transpose_32x8` and `transpose_32x32`: the grid covers the output in
    /// 32 x 32 tiles; every element checked exactly.
    pub fn transposes(&mut self, (h, w): (usize, usize)) -> Res<()> {
        let stream = self.stream;
        let cells = h * w;
        let grid = (h.div_ceil(32), w.div_ceil(32));
        println!(
            "transpose: in {h} x {w} f32 -> out {w} x {h}, 32 x 33 shared tile, grid {grid:?} over the output"
        );
        let hin = random_f32(cells, 6);
        let input = DeviceBuffer::to_device_sync(&hin, stream)?;
        let mut out = DeviceBuffer::<f32>::empty_on(cells, stream)?;
        let check = |got: &[f32], bad: &mut Mismatches| {
            for r in 0..w {
                for c in 0..h {
                    let (g, want) = (got[r * h + c], hin[c * w + r]);
                    if g != want {
                        bad.report(|| format!("out[{r}][{c}] = {g:.9}, reference {want:.9}"));
                    }
                }
            }
            cells
        };
        println!("transpose_32x8: block (32, 8)");
        let ms = self.checked_timing(
            "rust_transpose_32x8",
            &mut out,
            POISON_F32,
            |_| Ok(()),
            |out| {
                launch!(classic::transpose_32x8[grid, (32, 8), stream](
                    &input,
                    out.view_2d_mut(w, h)?
                ))
            },
            check,
        )?;
        self.record("transpose_32x8", ms, 2.0 * cells as f64 * 4.0, 1e9, "gbps");
        println!("transpose_32x32: block (32, 32)");
        let ms = self.checked_timing(
            "rust_transpose_32x32",
            &mut out,
            POISON_F32,
            |_| Ok(()),
            |out| {
                launch!(classic::transpose_32x32[grid, (32, 32), stream](
                    &input,
                    out.view_2d_mut(w, h)?
                ))
            },
            check,
        )?;
        self.record("transpose_32x32", ms, 2.0 * cells as f64 * 4.0, 1e9, "gbps");
        Ok(())
    }

    /// `stencil1d_r4`: radius 4, weights by value, block 256; every element
    /// checked against a double reference within the 9-term bound.
    pub fn stencil(&mut self, n: usize) -> Res<()> {
        const R: usize = classic::STENCIL_RADIUS;
        let stream = self.stream;
        let grid = n.div_ceil(classic::STENCIL_BLOCK);
        println!(
            "stencil1d_r4: n = {n} f32, radius {R}, weights as a kernel argument, block 256, grid {grid}"
        );
        let hin = random_f32(n, 7);
        let mut rng = SplitMix64::new(8);
        let weights = StencilWeights {
            w: std::array::from_fn(|_| rng.next_f32()),
        };
        let input = DeviceBuffer::to_device_sync(&hin, stream)?;
        let mut out = DeviceBuffer::<f32>::empty_on(n, stream)?;
        let bound = gamma(2 * R + 1);
        let ms = self.checked_timing(
            "rust_stencil",
            &mut out,
            POISON_F32,
            |_| Ok(()),
            |out| launch!(classic::stencil1d_r4[grid, 256, stream](&input, weights, out)),
            |got, bad| {
                for (i, &g) in got.iter().enumerate() {
                    let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
                    for (kk, &wk) in weights.w.iter().enumerate() {
                        let j = (i + kk).wrapping_sub(R);
                        if j < n {
                            let p = wk as f64 * hin[j] as f64;
                            exact += p;
                            magnitude += p.abs();
                        }
                    }
                    if !within(g, exact, bound * magnitude) {
                        bad.report(|| {
                            format!(
                                "out[{i}] = {g:.9}, reference {exact:.9} (bound {:.3e})",
                                bound * magnitude
                            )
                        });
                    }
                }
                n
            },
        )?;
        self.record("stencil", ms, 2.0 * n as f64 * 4.0, 1e9, "gbps");
        Ok(())
    }
}
