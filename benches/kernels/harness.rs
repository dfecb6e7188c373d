//! The parts of `kernels_cuda`'s method that every kernel shares: the
//! splitmix64 inputs, the per-launch event timing, and the mismatch count of
//! a check (see `benches/cuda/KERNELS.md`, "Common to all kernels").

use crate::common::{median, Res};
use gpu_runtime::{Event, Stream};

/// Warm-up launches before timing.
pub const WARMUP: usize = 5;

/// Timed launches, each between its own pair of events.
pub const TIMED: usize = 50;

/// The unit roundoff of `f32`, `2^-24`.
pub const U32: f64 = 1.0 / (1u64 << 24) as f64;

/// `gamma_n = n u / (1 - n u)`: the relative forward error bound of an
/// `n`-term `f32` dot product, fused or not.
pub fn gamma(n: usize) -> f64 {
    n as f64 * U32 / (1.0 - n as f64 * U32)
}

/// Whether `got` is within `bound` (times 1.01, plus 1e-30) of `exact`, as
/// `kernels.cu` compares; false for NaN, so an unwritten element fails.
pub fn within(got: f32, exact: f64, bound: f64) -> bool {
    (got as f64 - exact).abs() <= bound * 1.01 + 1e-30
}

/// The splitmix64 generator of `kernels.cu`, so both sides get the same inputs.
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator with seed `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value uniform in `[-1, 1)`, a multiple of `2^-23`:
    /// `(float)(next() >> 40) * 2^-23 - 1.0f`.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 23) as f32) - 1.0
    }
}

/// `n` values of `next_f32()` from seed `seed`, in index order.
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.next_f32()).collect()
}

/// `f32` with all bits set (a NaN): the poison `kernels.cu` writes with
/// `cudaMemset(0xFF)` before a checked launch.
pub const POISON_F32: f32 = f32::from_bits(u32::MAX);

/// The median per-launch time in ms of [`TIMED`] launches, each between its
/// own pair of events on `stream` (`record start; launch; record stop;
/// synchronize stop`), after [`WARMUP`] launches and a stream
/// synchronization. `before` is queued before every launch, outside the
/// timed interval; both get `state` (the kernel's output). Prints min,
/// median and max.
pub fn median_launch_ms<S>(
    stream: &Stream,
    state: &mut S,
    mut before: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
    mut launch: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
) -> Res<f64> {
    let (start, stop) = (Event::new()?, Event::new()?);
    for _ in 0..WARMUP {
        before(state)?;
        launch(state)?;
    }
    stream.synchronize()?;
    let mut times = Vec::with_capacity(TIMED);
    for _ in 0..TIMED {
        before(state)?;
        start.record_on(stream)?;
        launch(state)?;
        stop.record_on(stream)?;
        stop.synchronize()?;
        times.push(Event::elapsed_ms(&start, &stop)? as f64);
    }
    let (min, max) = times.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
        (lo.min(t), hi.max(t))
    });
    let ms = median(times);
    println!("  per-launch ms: min {min:.4}, median {ms:.4}, max {max:.4} ({TIMED} launches)");
    Ok(ms)
}

/// The mismatches of one check: prints the first five and a `FAILED` line,
/// as `kernels.cu` does (or nothing, when quiet).
pub struct Mismatches<'a> {
    kernel: &'a str,
    pass: &'a str,
    quiet: bool,
    count: usize,
}

impl<'a> Mismatches<'a> {
    /// An empty count for `kernel`'s check `pass` ("before timing", ...).
    pub fn new(kernel: &'a str, pass: &'a str) -> Self {
        Mismatches {
            kernel,
            pass,
            quiet: false,
            count: 0,
        }
    }

    /// An empty count that prints nothing.
    pub fn quiet(kernel: &'a str) -> Self {
        Mismatches {
            quiet: true,
            ..Mismatches::new(kernel, "")
        }
    }

    /// Counts one wrong value; `describe` is called for the first five.
    pub fn report(&mut self, describe: impl FnOnce() -> String) {
        self.count += 1;
        if self.count <= 5 && !self.quiet {
            println!(
                "  mismatch ({}, {}): {}",
                self.kernel,
                self.pass,
                describe()
            );
        }
    }

    /// The number of wrong values so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// `true` if nothing mismatched; otherwise prints `FAILED <kernel>
    /// (<pass>): <k> of <checked> checked values wrong`.
    pub fn ok(self, checked: usize) -> bool {
        if self.count == 0 {
            return true;
        }
        if !self.quiet {
            println!(
                "FAILED {} ({}): {} of {} checked values wrong",
                self.kernel, self.pass, self.count, checked
            );
        }
        false
    }
}

/// Checks the generator against values printed by `kernels.cu`'s own
/// `SplitMix64` (compiled alone with g++): seed 1234567's first two values,
/// and the first three `next_f32()` of seed 1 (matmul's A), bit for bit.
pub fn check_generator() -> Res<()> {
    let mut rng = SplitMix64::new(1_234_567);
    let firsts = [rng.next_u64(), rng.next_u64()];
    let f32_bits: Vec<u32> = random_f32(3, 1).iter().map(|x| x.to_bits()).collect();
    if firsts != [6_457_827_717_110_365_317, 3_203_168_211_198_807_973]
        || f32_bits != [0x3e08_5168, 0x3efb_ae34, 0x3f71_2744]
    {
        return Err(format!(
            "splitmix64 differs from kernels.cu's: {firsts:?}, f32 bits {f32_bits:x?}"
        )
        .into());
    }
    Ok(())
}
