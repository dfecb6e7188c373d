//! Numba's `test_blackscholes`, as `#[vectorize]` functions: the call and
//! the put price of a European option (the `numba_black_scholes` example).

use gpu_device::math::{libm, Float};
use gpu_device::vectorize;

/// The risk-free rate of Numba's test.
pub const RISK_FREE: f64 = 0.02;
/// The volatility of Numba's test.
pub const VOLATILITY: f64 = 0.30;

const A1: f64 = 0.31938153;
const A2: f64 = -0.356563782;
const A3: f64 = 1.781477937;
const A4: f64 = -1.821255978;
const A5: f64 = 1.330274429;
const RSQRT2PI: f64 = 0.398_942_280_401_432_7;

/// The cumulative normal distribution (the polynomial approximation of
/// Numba's `cnd_cuda`).
#[inline(always)]
pub fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.2316419 * Float::abs(d));
    let value =
        RSQRT2PI * libm::exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    if d > 0.0 {
        1.0 - value
    } else {
        value
    }
}

/// `d1` and `d2` of the Black-Scholes formula.
#[inline(always)]
fn d1_d2(s: f64, x: f64, t: f64) -> (f64, f64) {
    let sqrt_t = Float::sqrt(t);
    let d1 = (libm::log(s / x) + (RISK_FREE + 0.5 * VOLATILITY * VOLATILITY) * t)
        / (VOLATILITY * sqrt_t);
    (d1, d1 - VOLATILITY * sqrt_t)
}

/// The call price for stock price `s`, strike `x` and `t` years.
#[vectorize]
pub fn black_scholes_call(s: f64, x: f64, t: f64) -> f64 {
    let (d1, d2) = d1_d2(s, x, t);
    let exp_rt = libm::exp(-RISK_FREE * t);
    s * cnd(d1) - x * exp_rt * cnd(d2)
}

/// The put price for stock price `s`, strike `x` and `t` years.
#[vectorize]
pub fn black_scholes_put(s: f64, x: f64, t: f64) -> f64 {
    let (d1, d2) = d1_d2(s, x, t);
    let exp_rt = libm::exp(-RISK_FREE * t);
    x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))
}
