//! The GEMM twins' kernels in this process (issue #22), interleaved with
//! the Rust kernels: two runs of the `gemm_tc` program a minute apart met
//! different clocks (NOTES.md: the TMA `wgmma` ratio at 8192³ swung
//! 0.88-1.05), so the twin's `mma.sync` and TMA `wgmma` (cluster 1) kernels
//! are also loaded from `gemm_tc.cubin` (`benches/cuda/gemm_tc_cubin.cu`:
//! the same headers and instantiations as the program, the same code) into
//! the runtime's primary context, and launched on the bench's stream beside
//! the Rust kernel of the same design, on the same A, B and C.
//!
//! Per pair and size: the twin's result is checked first (the bench's own
//! reference entries), then [`WARMUP`] launches of each, then [`ROUNDS`]
//! rounds of [`PER_ROUND`] launches of one kernel and as many of the other
//! (which goes first alternates from round to round), each launch between
//! its own pair of events, the stream synchronised only between rounds;
//! then both results are checked again. The figures: each kernel's median
//! launch time over all rounds, the twin/Rust ratio of the medians (a speed
//! ratio: above 1 the Rust kernel is faster) and the least and greatest of
//! the per-round ratios (the twin's median of the round over the Rust
//! kernel's).

use crate::common::{median, Res, BARE_CUST_NOT_BUILT};
use crate::cubin::{
    encode_tensor_map_2d, CubinKernel, CubinModule, TensorMapBytes, DATA_TYPE_BFLOAT16,
    L2_PROMOTION_256B, SWIZZLE_128B,
};
use gpu_device::half::bf16;
use gpu_runtime::{DeviceBuffer, Event, Stream};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::Path;

/// The cubin's file name in the `--helpers` directory.
pub const CUBIN: &str = "gemm_tc.cubin";
/// Rounds of interleaved launches.
pub const ROUNDS: usize = 15;
/// Launches of each kernel a round.
pub const PER_ROUND: usize = 8;
/// Untimed launches of each kernel first.
pub const WARMUP: usize = 3;

/// The twin's figures (`gemm_tc/*.cuh`): tiles of 128 × 256 × 64, four
/// stages of 48 KiB; the `wgmma` kernel (`WgmmaConfig<2, 256>`) has 384
/// threads and 1 KiB more, to align its ring to 1024 bytes.
const BM: usize = 128;
const BN: usize = 256;
const MMA_THREADS: u32 = 256;
const MMA_SHARED: u32 = 4 * (BM as u32 + BN as u32) * 128;
const WGMMA_THREADS: u32 = 384;
const WGMMA_SHARED: u32 = MMA_SHARED + 1024;
/// The kernels' symbols up to their parameter types: `gemm_bf16_mma_sync`
/// and `gemm_bf16_wgmma<2, 256, 1>`.
const MMA_SYMBOL: &str = "_Z18gemm_bf16_mma_sync";
const WGMMA_SYMBOL: &str = "_Z15gemm_bf16_wgmmaILi2ELi256ELi1EE";

/// Loads `DIR/gemm_tc.cubin`, or says why not (a sentence for the table).
pub fn load(dir: Option<&Path>, on_gpu: bool) -> Result<CubinModule, String> {
    if !cfg!(feature = "bare-cust") {
        return Err(format!("not run: {BARE_CUST_NOT_BUILT}"));
    }
    if !on_gpu {
        return Err("not run: the CPU simulator runs no cubin".into());
    }
    let dir = dir.ok_or("not run: no --helpers DIR (where gemm_tc.cubin is)")?;
    let path = dir.join(CUBIN);
    if !path.is_file() {
        return Err(format!(
            "not run: no {} (nvcc -cubin -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o {CUBIN} benches/cuda/gemm_tc_cubin.cu)",
            path.display()
        ));
    }
    CubinModule::load(&path).map_err(|e| format!("not run: {e}"))
}

/// A problem's shape: A `m × k` and B `n × k` with rows of `ld` elements,
/// C dense `m × n`.
#[derive(Clone, Copy)]
pub struct Dims {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub ld: usize,
}

impl Dims {
    /// Checks what the twin's kernels assume (they index with `int` and
    /// read 16-byte chunks of rows) against the buffers (C's length and
    /// device) and the stream: all on device 0, the cubin's context.
    fn check(
        &self,
        stream: &Stream,
        a: &DeviceBuffer<bf16>,
        b: &DeviceBuffer<bf16>,
        (c_len, c_device): (usize, usize),
    ) -> Res<()> {
        let Dims { m, n, k, ld } = *self;
        let int = i32::MAX as usize;
        if m == 0 || n == 0 || k == 0 || ld < k || ld % 8 != 0 {
            return Err(format!("twin: bad shape {m} x {n} x {k} (ld {ld})").into());
        }
        let spans = [
            (m.saturating_mul(ld), a.len(), "A"),
            (n.saturating_mul(ld), b.len(), "B"),
            (m.saturating_mul(n), c_len, "C"),
        ];
        for (need, len, name) in spans {
            if need > len || need > int {
                return Err(
                    format!("twin: {name} needs {need} elements (<= 2^31 - 1), has {len}").into(),
                );
            }
        }
        if [a.device(), b.device(), c_device, stream.device()] != [0; 4] {
            return Err("twin: the cubin runs on device 0 only (A, B, C and the stream)".into());
        }
        Ok(())
    }

    /// The twin's `group_for`: `round(sqrt(sms BN / BM))` tile rows a group,
    /// at least 1 and at most the tile rows.
    fn group(&self, sms: u32) -> i32 {
        let g = (sms as f64 * BN as f64 / BM as f64).sqrt().round() as usize;
        g.clamp(1, self.m.div_ceil(BM)) as i32
    }

    fn tiles(&self) -> usize {
        self.m.div_ceil(BM) * self.n.div_ceil(BN)
    }
}

/// The twin's two kernels, from the loaded cubin.
pub struct TwinKernels<'m> {
    mma: CubinKernel<'m>,
    wgmma: CubinKernel<'m>,
    sms: u32,
}

impl<'m> TwinKernels<'m> {
    /// Finds both kernels (an error when a launch bound differs from the
    /// figures here) on a GPU of `sms` multiprocessors.
    pub fn new(module: &'m CubinModule, sms: u32) -> Result<TwinKernels<'m>, String> {
        let mma = module.kernel(MMA_SYMBOL, MMA_SHARED)?;
        let wgmma = module.kernel(WGMMA_SYMBOL, WGMMA_SHARED)?;
        for (kernel, threads) in [(&mma, MMA_THREADS), (&wgmma, WGMMA_THREADS)] {
            let bound = kernel.max_threads()?;
            if bound != threads {
                return Err(format!(
                    "{}: at most {bound} threads a block, not the {threads} of its launch bound",
                    kernel.name()
                ));
            }
        }
        println!(
            "twin in this process: {} and {} from {CUBIN}",
            mma.name(),
            wgmma.name()
        );
        Ok(TwinKernels { mma, wgmma, sms })
    }

    /// Queues the twin's `mma.sync` kernel: `C = A Bᵀ` on `stream`.
    pub fn launch_mma(
        &self,
        stream: &Stream,
        a: &DeviceBuffer<bf16>,
        b: &DeviceBuffer<bf16>,
        c: &mut DeviceBuffer<bf16>,
        dims: Dims,
    ) -> Res<()> {
        dims.check(stream, a, b, (c.len(), c.device()))?;
        let (mut pa, mut pb, mut pc) = (a.as_raw(), b.as_raw(), c.as_raw());
        let Dims { m, n, k, ld } = dims;
        // m, n, k, lda, ldb, ldc, group_m: checked to fit an int above.
        let mut ints = [
            m as i32,
            n as i32,
            k as i32,
            ld as i32,
            ld as i32,
            n as i32,
            dims.group(self.sms),
        ];
        let mut params: Vec<*mut c_void> = vec![
            (&mut pa as *mut u64).cast(),
            (&mut pb as *mut u64).cast(),
            (&mut pc as *mut u64).cast(),
        ];
        params.extend(ints.iter_mut().map(|v| (v as *mut i32).cast::<c_void>()));
        // SAFETY: `gemm_bf16_mma_sync(const bf16*, const bf16*, bf16*, int
        // m, n, k, lda, ldb, ldc, group_m)`: three 8-byte device addresses
        // and seven ints, in order. One block per 128 × 256 tile of C
        // (tiles_m × tiles_n of them, as the kernel derives from m and n),
        // 256 threads, 192 KiB of dynamic shared memory (its ring, the limit
        // set at load). It reads rows < m of A and < n of B, each its first
        // k elements (in `m ld` and `n ld` elements: checked), and writes
        // C[row][col] at `row n + col` for row < m, col < n (`m n`:
        // checked); the buffers are borrowed for the call and any later
        // reuse or free of them is ordered after the launch on `stream`
        // (the runtime's frees are stream-ordered; the bench synchronises).
        unsafe {
            self.mma.launch(
                dims.tiles() as u32,
                MMA_THREADS,
                MMA_SHARED,
                stream,
                &mut params,
            )?
        };
        Ok(())
    }

    /// The twin's tensor maps of A (boxes 64 × 128) and B (64 × 256),
    /// encoded as `gemm_tc.cu`'s `encode_tensor_map`: bf16, dims (k, rows),
    /// `2 ld` bytes a row, 128-byte swizzle, L2 promotion 256 B, zeros out
    /// of bounds. They borrow A and B.
    pub fn maps<'a>(
        &self,
        stream: &Stream,
        a: &'a DeviceBuffer<bf16>,
        b: &'a DeviceBuffer<bf16>,
        dims: Dims,
    ) -> Res<TwinMaps<'a>> {
        // C is checked at each launch (its length and device).
        dims.check(stream, a, b, (dims.m.saturating_mul(dims.n), 0))?;
        let map = |buffer: &DeviceBuffer<bf16>, rows: usize, box_rows: u32| {
            encode_tensor_map_2d(
                DATA_TYPE_BFLOAT16,
                buffer.as_raw(),
                (dims.k as u64, rows as u64, 2 * dims.ld as u64),
                (64, box_rows),
                SWIZZLE_128B,
                L2_PROMOTION_256B,
            )
        };
        Ok(TwinMaps {
            a: map(a, dims.m, BM as u32)?,
            b: map(b, dims.n, BN as u32)?,
            dims,
            _buffers: PhantomData,
        })
    }

    /// Queues the twin's TMA `wgmma` kernel (cluster 1) on the operands of
    /// `maps`, writing C.
    pub fn launch_wgmma(
        &self,
        stream: &Stream,
        maps: &TwinMaps<'_>,
        c: &mut DeviceBuffer<bf16>,
    ) -> Res<()> {
        let Dims { m, n, k, .. } = maps.dims;
        if c.len() < m * n || c.device() != 0 || stream.device() != 0 {
            return Err(format!(
                "twin: C needs {} elements on device 0 (has {} on device {}), the stream device 0 (has {})",
                m * n,
                c.len(),
                c.device(),
                stream.device()
            )
            .into());
        }
        let (mut map_a, mut map_b, mut pc) = (maps.a, maps.b, c.as_raw());
        let grid = maps.dims.tiles().min(self.sms.max(1) as usize) as u32;
        let mut ints = [
            m as i32,
            n as i32,
            k as i32,
            n as i32,
            maps.dims.group(self.sms),
        ];
        let mut params: Vec<*mut c_void> = vec![
            (&mut map_a as *mut TensorMapBytes).cast(),
            (&mut map_b as *mut TensorMapBytes).cast(),
            (&mut pc as *mut u64).cast(),
        ];
        params.extend(ints.iter_mut().map(|v| (v as *mut i32).cast::<c_void>()));
        // SAFETY: `gemm_bf16_wgmma<2, 256, 1>(const __grid_constant__
        // CUtensorMap, same, bf16*, int m, n, k, ldc, group_m)`: two 128-byte
        // maps (64-byte aligned values, copied by the driver), an 8-byte
        // device address and five ints, in order. A persistent grid of
        // min(SMs, tiles) blocks of 384 threads and 193 KiB of dynamic shared
        // memory (the limit set at load). The maps describe A and B within
        // their buffers (checked in `maps`; TMA reads only inside the dims
        // and zero-fills the rest), which `maps` borrows for as long as it
        // lives; the kernel writes C[row][col] at `row n + col` for row < m,
        // col < n (`m n` elements: checked); later reuse or frees are ordered
        // after the launch on `stream`.
        unsafe {
            self.wgmma
                .launch(grid, WGMMA_THREADS, WGMMA_SHARED, stream, &mut params)?
        };
        Ok(())
    }
}

/// The twin's tensor maps of one problem's A and B (borrowed while the maps
/// live, so that no launch reads freed memory).
pub struct TwinMaps<'a> {
    a: TensorMapBytes,
    b: TensorMapBytes,
    dims: Dims,
    _buffers: PhantomData<&'a DeviceBuffer<bf16>>,
}

/// One pair's figures at one size.
pub struct Row {
    pub rust: &'static str,
    pub twin: &'static str,
    pub size: String,
    pub rust_ms: Option<f64>,
    pub twin_ms: Option<f64>,
    /// The least and greatest per-round twin/Rust ratio.
    pub rounds: Option<(f64, f64)>,
    pub max_error: f64,
    /// `None` when every check passed, else what failed.
    pub failed: Option<String>,
}

impl Row {
    /// A row with no figures yet.
    fn new(rust: &'static str, twin: &'static str, size: String) -> Row {
        Row {
            rust,
            twin,
            size,
            rust_ms: None,
            twin_ms: None,
            rounds: None,
            max_error: 0.0,
            failed: None,
        }
    }

    /// A row that failed with `why`.
    pub fn failed(rust: &'static str, twin: &'static str, size: String, why: String) -> Row {
        Row {
            failed: Some(why),
            ..Row::new(rust, twin, size)
        }
    }
}

/// Checks the twin's launch (`twin`) with `check`, then (unless `quick`)
/// times it interleaved with `rust` as the module's documentation says,
/// and checks both again. `key` names the pair in the `RESULT` lines.
#[allow(clippy::too_many_arguments)]
pub fn compare<S>(
    stream: &Stream,
    quick: bool,
    (rust_name, twin_name, key): (&'static str, &'static str, &str),
    size: String,
    state: &mut S,
    mut poison: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
    mut rust: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
    mut twin: impl FnMut(&mut S) -> Res<()>,
    mut check: impl FnMut(&mut S, &str) -> Res<(bool, f64)>,
) -> Res<Row> {
    println!("{twin_name} {size} (the twin in this process)");
    let mut row = Row::new(rust_name, twin_name, size);
    let pass = "twin in this process, before timing";
    checked(
        stream,
        state,
        &mut poison,
        &mut twin,
        &mut check,
        pass,
        &mut row,
    )?;
    if quick || row.failed.is_some() {
        return Ok(row);
    }
    for _ in 0..WARMUP {
        rust(state)?;
        twin(state)?;
    }
    stream.synchronize()?;
    let events = (0..2 * PER_ROUND)
        .map(|_| Ok((Event::new()?, Event::new()?)))
        .collect::<gpu_runtime::Result<Vec<_>>>()?;
    let (mut rust_all, mut twin_all, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let twin_first = round % 2 == 1;
        for (slot, pair) in events.chunks(PER_ROUND).enumerate() {
            let twin_side = (slot == 0) == twin_first;
            for (start, stop) in pair {
                start.record_on(stream)?;
                if twin_side {
                    twin(state)?;
                } else {
                    rust(state)?;
                }
                stop.record_on(stream)?;
            }
        }
        stream.synchronize()?;
        let (mut rust_round, mut twin_round) = (Vec::new(), Vec::new());
        for (slot, pair) in events.chunks(PER_ROUND).enumerate() {
            let twin_side = (slot == 0) == twin_first;
            for (start, stop) in pair {
                let ms = Event::elapsed_ms(start, stop)? as f64;
                if twin_side {
                    twin_round.push(ms);
                } else {
                    rust_round.push(ms);
                }
            }
        }
        rust_all.extend(&rust_round);
        twin_all.extend(&twin_round);
        ratios.push(median(twin_round) / median(rust_round));
    }
    let (rust_ms, twin_ms) = (median(rust_all), median(twin_all));
    let (lo, hi) = ratios
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
    println!(
        "  interleaved: Rust {rust_ms:.4} ms, twin {twin_ms:.4} ms (medians of {} launches each); per-round twin/Rust: {}",
        ROUNDS * PER_ROUND,
        listed.join(" ")
    );
    let name = format!("inproc_{key}_{}", row.size);
    println!("RESULT {name}_rust_ms {rust_ms:.4} ms");
    println!("RESULT {name}_twin_ms {twin_ms:.4} ms");
    println!("RESULT {name}_ratio {:.3} twin/Rust", twin_ms / rust_ms);
    println!("RESULT {name}_round_min {lo:.3} twin/Rust");
    println!("RESULT {name}_round_max {hi:.3} twin/Rust");
    row.rust_ms = Some(rust_ms);
    row.twin_ms = Some(twin_ms);
    row.rounds = Some((lo, hi));
    let pass = "twin in this process, after timing";
    checked(
        stream,
        state,
        &mut poison,
        &mut twin,
        &mut check,
        pass,
        &mut row,
    )?;
    let mut rust = |state: &mut S| rust(state).map_err(Into::into);
    let pass = "Rust, after the interleaved timing";
    checked(
        stream,
        state,
        &mut poison,
        &mut rust,
        &mut check,
        pass,
        &mut row,
    )?;
    Ok(row)
}

/// One checked launch: `poison`, `launch`, synchronise, `check` (`pass`
/// names it); a wrong result marks `row` failed.
fn checked<S>(
    stream: &Stream,
    state: &mut S,
    poison: &mut impl FnMut(&mut S) -> gpu_runtime::Result<()>,
    launch: &mut impl FnMut(&mut S) -> Res<()>,
    check: &mut impl FnMut(&mut S, &str) -> Res<(bool, f64)>,
    pass: &str,
    row: &mut Row,
) -> Res<()> {
    poison(state)?;
    launch(state)?;
    stream.synchronize()?;
    let (ok, error) = check(state, pass)?;
    row.max_error = row.max_error.max(error);
    if !ok && row.failed.is_none() {
        row.failed = Some(format!("WRONG ({pass})"));
        println!("FAILED {} {}: {pass}", row.twin, row.size);
    }
    Ok(())
}

/// The table of the pairs in this process, or why there is none.
pub fn print_table(family: &str, rows: &[Row], unavailable: Option<&str>, quick: bool) {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    println!("\n### {family}: the twin in this process, interleaved\n");
    if let Some(why) = unavailable {
        println!("{why}");
        return;
    }
    println!(
        "The twin's kernels from {CUBIN} (`benches/cuda/gemm_tc_cubin.cu`), launched on this process's stream: {ROUNDS} rounds of {PER_ROUND} launches of each kernel (the first alternating), each between its own events, after {WARMUP} of each{}.\n",
        if quick { " (--quick: checks only, no timing)" } else { "" }
    );
    println!("| Rust kernel | twin kernel | size | Rust ms (median) | TFLOP/s | twin ms (median) | TFLOP/s | twin/Rust, ratio of medians (goal >= 0.97) | per-round twin/Rust min | max | twin max error | check |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let (lo, hi) = r.rounds.map_or(("-".into(), "-".into()), |(lo, hi)| {
            (format!("{lo:.3}"), format!("{hi:.3}"))
        });
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {lo} | {hi} | {:.3e} | {} |",
            r.rust,
            r.twin,
            r.size,
            ms(r.rust_ms),
            crate::tables::tflops(&r.size, r.rust_ms),
            ms(r.twin_ms),
            crate::tables::tflops(&r.size, r.twin_ms),
            crate::tables::ratio(r.twin_ms, r.rust_ms, Some(0.97)),
            r.max_error,
            r.failed.as_deref().unwrap_or("ok"),
        );
    }
}
