//! Numba's `test_blackscholes`, with `#[vectorize]`: the call and put prices
//! of 400 European options on a stream, twice, checked against the CPU (the
//! same formula in `f64`, std's `exp`/`ln`/`sqrt`) as Numba's test checks
//! them against NumPy: relative L1 error and largest error below `1e-13`.
//!
//! | Numba | here |
//! |---|---|
//! | `@cuda.jit(device=True) def cnd_cuda(d)` | `fn cnd(d: f64) -> f64` |
//! | `@vectorize(['float64(float64, float64, float64)'], target='cuda')` | `#[vectorize] fn black_scholes_call(s: f64, x: f64, t: f64) -> f64` |
//! | `black_scholes(S, X, T, out=d_call, stream=stream)` | `black_scholes_call::launch(&s, &x, &t, &mut call, &stream)?` |
//!
//! The kernels: `gpu_kernels::black_scholes`.

use gpu_device::random::Xoroshiro128p;
use gpu_kernels::black_scholes::{black_scholes_call, black_scholes_put, RISK_FREE, VOLATILITY};
use gpu_runtime::{DeviceBuffer, Stream};
use std::error::Error;
use std::process::ExitCode;

const OPT_N: usize = 400;
const ITERATIONS: usize = 2;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("numba_black_scholes: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `(1 - r) * low + r * high` for a uniform `r` (Numba's `randfloat`).
fn randfloat(rng: &mut Xoroshiro128p, low: f64, high: f64) -> Vec<f64> {
    (0..OPT_N)
        .map(|_| {
            let r = rng.uniform_f64();
            (1.0 - r) * low + r * high
        })
        .collect()
}

/// The CPU's cumulative normal distribution, as NumPy's `cnd` of the test.
fn cnd(d: f64) -> f64 {
    const A: [f64; 5] = [
        0.31938153,
        -0.356563782,
        1.781477937,
        -1.821255978,
        1.330274429,
    ];
    let k = 1.0 / (1.0 + 0.2316419 * d.abs());
    let poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))));
    let value = 0.398_942_280_401_432_7 * (-0.5 * d * d).exp() * poly;
    if d > 0.0 {
        1.0 - value
    } else {
        value
    }
}

/// The CPU's call and put prices.
fn cpu(s: f64, x: f64, t: f64) -> (f64, f64) {
    let (r, v) = (RISK_FREE, VOLATILITY);
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
    let d2 = d1 - v * sqrt_t;
    let exp_rt = (-r * t).exp();
    let call = s * cnd(d1) - x * exp_rt * cnd(d2);
    let put = x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1));
    (call, put)
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut rng = Xoroshiro128p::from_seed(2024);
    let stock = randfloat(&mut rng, 5.0, 30.0);
    let strike = randfloat(&mut rng, 1.0, 100.0);
    let years = randfloat(&mut rng, 0.25, 10.0);

    let stream = Stream::new()?;
    let s = DeviceBuffer::to_device(&stock, &stream)?;
    let x = DeviceBuffer::to_device(&strike, &stream)?;
    let t = DeviceBuffer::to_device(&years, &stream)?;
    let mut call = DeviceBuffer::<f64>::zeroed_on(OPT_N, &stream)?;
    let mut put = DeviceBuffer::<f64>::zeroed_on(OPT_N, &stream)?;
    for _ in 0..ITERATIONS {
        black_scholes_call::launch(&s, &x, &t, &mut call, &stream)?;
        black_scholes_put::launch(&s, &x, &t, &mut put, &stream)?;
    }
    let call = call.copy_to_host_sync(&stream)?;
    let put = put.copy_to_host_sync(&stream)?;

    let (mut delta_sum, mut reference_sum, mut max_error) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..OPT_N {
        let (c, p) = cpu(stock[i], strike[i], years[i]);
        for (device, host) in [(call[i], c), (put[i], p)] {
            let delta = (device - host).abs();
            delta_sum += delta;
            reference_sum += host.abs();
            max_error = max_error.max(delta);
        }
    }
    let l1 = delta_sum / reference_sum;
    println!("black-scholes: {OPT_N} options, {ITERATIONS} iterations: relative L1 error {l1:.3e}, largest error {max_error:.3e}");
    if !(l1 < 1e-13 && max_error < 1e-13) {
        return Err(format!(
            "the device's prices differ from the CPU's: L1 {l1:e}, largest {max_error:e}"
        )
        .into());
    }
    println!("black-scholes: matches the CPU");
    Ok(())
}
