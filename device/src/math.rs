//! Float math on the device, as methods: `use gpu_device::math::{Float, FastMath};`.
//!
//! [`Float`] (for `f32` and `f64`) holds the operations that compile to exact,
//! IEEE-rounded PTX instructions: `sqrt`, `floor`, `ceil`, `round`, `trunc`,
//! `abs`, `mul_add`, `min`, `max`, `copysign`.
//!
//! [`FastMath`] (for `f32`) holds the transcendental functions, built on PTX's
//! approximate instructions (`ex2.approx`, `lg2.approx`, `sin.approx`,
//! `cos.approx`), as CUDA's fast intrinsics `__expf`, `__logf`, `__sinf` are:
//! a few ulp near zero, and for `sin`/`cos` an absolute error that grows with
//! `|x|` outside `[-π, π]`.
//!
//! Accurate transcendental functions, for `f32` and `f64` (within an ulp, as
//! CUDA's libdevice, which Numba calls), are the `libm` crate's, re-exported
//! as [`libm`]: `libm::exp(x)`, `libm::logf(x)`. The same Rust code runs on
//! the device and on the simulator (IEEE operations, no contraction).

use crate::arch::math::*;

pub use libm;

/// Exactly rounded float operations (`f32` and `f64`).
pub trait Float: Copy {
    /// The square root, correctly rounded.
    fn sqrt(self) -> Self;
    /// The largest integer not greater than `self`.
    fn floor(self) -> Self;
    /// The smallest integer not less than `self`.
    fn ceil(self) -> Self;
    /// The nearest integer, halfway cases away from zero.
    fn round(self) -> Self;
    /// The integer part.
    fn trunc(self) -> Self;
    /// The absolute value.
    fn abs(self) -> Self;
    /// `self * a + b` with one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The smaller of the two; a `NaN` operand yields the other.
    fn min(self, other: Self) -> Self;
    /// The larger of the two; a `NaN` operand yields the other.
    fn max(self, other: Self) -> Self;
    /// `self`'s magnitude with `sign`'s sign.
    fn copysign(self, sign: Self) -> Self;
}

macro_rules! float_impl {
    ($t:ty, $sqrt:ident, $floor:ident, $ceil:ident, $round:ident, $trunc:ident, $abs:ident,
     $fma:ident, $min:ident, $max:ident, $copysign:ident) => {
        impl Float for $t {
            #[inline(always)]
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                $round(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $trunc(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $abs(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $fma(self, a, b)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                $min(self, other)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                $max(self, other)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                $copysign(self, sign)
            }
        }
    };
}
float_impl!(
    f32,
    sqrt_f32,
    floor_f32,
    ceil_f32,
    round_f32,
    trunc_f32,
    abs_f32,
    fma_f32,
    min_f32,
    max_f32,
    copysign_f32
);
float_impl!(
    f64,
    sqrt_f64,
    floor_f64,
    ceil_f64,
    round_f64,
    trunc_f64,
    abs_f64,
    fma_f64,
    min_f64,
    max_f64,
    copysign_f64
);

/// Fast `f32` transcendental functions on PTX's approximate instructions.
pub trait FastMath: Copy {
    /// `e^self`.
    fn exp(self) -> Self;
    /// `2^self`.
    fn exp2(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// The base-2 logarithm.
    fn log2(self) -> Self;
    /// The base-10 logarithm.
    fn log10(self) -> Self;
    /// The sine (radians).
    fn sin(self) -> Self;
    /// The cosine (radians).
    fn cos(self) -> Self;
    /// The tangent (radians).
    fn tan(self) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `self^y` for `self > 0` (`NaN` for negative `self`).
    fn powf(self, y: Self) -> Self;
    /// `1 / sqrt(self)`.
    fn rsqrt(self) -> Self;
}

impl FastMath for f32 {
    #[inline(always)]
    fn exp(self) -> f32 {
        exp2_approx(self * core::f32::consts::LOG2_E)
    }
    #[inline(always)]
    fn exp2(self) -> f32 {
        exp2_approx(self)
    }
    #[inline(always)]
    fn ln(self) -> f32 {
        log2_approx(self) * core::f32::consts::LN_2
    }
    #[inline(always)]
    fn log2(self) -> f32 {
        log2_approx(self)
    }
    #[inline(always)]
    fn log10(self) -> f32 {
        log2_approx(self) * core::f32::consts::LOG10_2
    }
    #[inline(always)]
    fn sin(self) -> f32 {
        sin_approx(self)
    }
    #[inline(always)]
    fn cos(self) -> f32 {
        cos_approx(self)
    }
    #[inline(always)]
    fn tan(self) -> f32 {
        sin_approx(self) / cos_approx(self)
    }
    #[inline(always)]
    fn tanh(self) -> f32 {
        let a = Float::abs(self);
        if a < 0.125 {
            // Taylor series: 1 - t over 1 + t would cancel here.
            let x2 = self * self;
            self * (1.0 - x2 * (1.0 / 3.0 - x2 * (2.0 / 15.0 - x2 * (17.0 / 315.0))))
        } else {
            let t = exp2_approx(-2.0 * core::f32::consts::LOG2_E * a);
            Float::copysign((1.0 - t) / (1.0 + t), self)
        }
    }
    #[inline(always)]
    fn powf(self, y: f32) -> f32 {
        exp2_approx(y * log2_approx(self))
    }
    #[inline(always)]
    fn rsqrt(self) -> f32 {
        rsqrt_approx(self)
    }
}
