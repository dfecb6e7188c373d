//! Half-precision floats in kernels and in host data: [`f16`](struct@f16) (IEEE
//! binary16, CUDA's `__half`, Numba's `float16`) and [`bf16`] (bfloat16,
//! CUDA's `__nv_bfloat16`), and their packed pairs [`f16x2`] and [`bf16x2`]
//! with a fused multiply-add per lane (`fma.rn.f16x2`, `fma.rn.bf16x2`).
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::f16;
//!
//! // With `#[kernel]`: y = a * x + y in half precision, one rounding each.
//! pub fn haxpy(a: f16, x: &[f16], mut y: DisjointSlice<f16>) {
//!     let i = thread_index();
//!     if let (Some(&xi), Some(yi)) = (x.get(i.get()), y.get_mut(i)) {
//!         *yi = a.mul_add(xi, *yi);
//!     }
//! }
//! ```
//!
//! Each type is `#[repr(transparent)]` over its bits (`u16`, `u32` for a
//! pair): `DeviceCopy`, `bytemuck::Pod`, usable as slice and shared-memory
//! elements, and laid out as the `half` crate's `half::f16` and `half::bf16`,
//! the host's types for half data: on the host they convert from and to
//! them (`From`), and `f16::cast_slice` and friends view a slice of one as
//! a slice of the other, without a copy.
//!
//! Arithmetic rounds to nearest-even once per operation, as the GPU's
//! instructions do, on the GPU and on the simulator alike: `+`, `-`, `*` and
//! [`mul_add`](f16::mul_add) are PTX instructions (`add.rn.f16`,
//! `fma.rn.f16`, ...; bf16's from sm_80, in software below), `/` divides in
//! `f32` and rounds (exact for halves: `f32` holds more than twice their
//! precision), conversions from `f32` and `f64` round once. The simulator
//! computes the same values in software (`soft`): the same bits, except
//! for the payload of a NaN. Comparisons are IEEE's (`NaN != NaN`, `-0 ==
//! 0`).

pub(crate) mod soft;

use crate::arch::half as ops;
use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

macro_rules! half_type {
    (
        $(#[$doc:meta])*
        $name:ident, $format:ident, to_f32 = $to_f32:path,
        from_f32 = $from_f32:ident, from_f64 = $from_f64:ident,
        add = $add:ident, sub = $sub:ident, mul = $mul:ident, fma = $fma:ident,
        consts { $($const_doc:literal $const:ident = $bits:literal;)* }
    ) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Default)]
        #[repr(transparent)]
        pub struct $name(u16);

        impl $name {
            $(
                #[doc = $const_doc]
                pub const $const: $name = $name($bits);
            )*

            /// The value with these bits.
            #[inline(always)]
            pub const fn from_bits(bits: u16) -> $name {
                $name(bits)
            }

            /// The value's bits.
            #[inline(always)]
            pub const fn to_bits(self) -> u16 {
                self.0
            }

            /// `x` rounded to nearest-even (overflowing to infinity).
            #[inline(always)]
            pub fn from_f32(x: f32) -> $name {
                $name(ops::$from_f32(x))
            }

            /// `x` rounded to nearest-even, once (not through `f32`).
            #[inline(always)]
            pub fn from_f64(x: f64) -> $name {
                $name(ops::$from_f64(x))
            }

            /// The value as an `f32` (exact).
            #[inline(always)]
            pub fn to_f32(self) -> f32 {
                $to_f32(self.0)
            }

            /// The value as an `f64` (exact).
            #[inline(always)]
            pub fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }

            /// `self * a + b`, rounded once (a fused multiply-add).
            #[inline(always)]
            pub fn mul_add(self, a: $name, b: $name) -> $name {
                $name(ops::$fma(self.0, a.0, b.0))
            }

            /// The absolute value (the sign bit cleared).
            #[inline(always)]
            pub const fn abs(self) -> $name {
                $name(self.0 & 0x7fff)
            }

            /// Whether the value is a NaN.
            #[inline(always)]
            pub const fn is_nan(self) -> bool {
                self.0 & 0x7fff > $name::INFINITY.0
            }

            /// Whether the value is positive or negative infinity.
            #[inline(always)]
            pub const fn is_infinite(self) -> bool {
                self.0 & 0x7fff == $name::INFINITY.0
            }

            /// Whether the value is neither infinite nor NaN.
            #[inline(always)]
            pub const fn is_finite(self) -> bool {
                self.0 & 0x7fff < $name::INFINITY.0
            }

            /// Whether the sign bit is set (`-0.0` and negative NaNs included).
            #[inline(always)]
            pub const fn is_sign_negative(self) -> bool {
                self.0 & 0x8000 != 0
            }

            /// The larger value; the other when one is NaN (IEEE's maxNum).
            #[inline(always)]
            pub fn max(self, other: $name) -> $name {
                if self.is_nan() || (!other.is_nan() && other > self) { other } else { self }
            }

            /// The smaller value; the other when one is NaN (IEEE's minNum).
            #[inline(always)]
            pub fn min(self, other: $name) -> $name {
                if self.is_nan() || (!other.is_nan() && other < self) { other } else { self }
            }
        }

        impl From<$name> for f32 {
            #[inline(always)]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            #[inline(always)]
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }

        impl PartialEq for $name {
            #[inline(always)]
            fn eq(&self, other: &$name) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            #[inline(always)]
            fn partial_cmp(&self, other: &$name) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl Neg for $name {
            type Output = $name;
            /// The sign flipped (exact, as `neg.f16`).
            #[inline(always)]
            fn neg(self) -> $name {
                $name(self.0 ^ 0x8000)
            }
        }

        impl Add for $name {
            type Output = $name;
            #[inline(always)]
            fn add(self, other: $name) -> $name {
                $name(ops::$add(self.0, other.0))
            }
        }

        impl Sub for $name {
            type Output = $name;
            #[inline(always)]
            fn sub(self, other: $name) -> $name {
                $name(ops::$sub(self.0, other.0))
            }
        }

        impl Mul for $name {
            type Output = $name;
            #[inline(always)]
            fn mul(self, other: $name) -> $name {
                $name(ops::$mul(self.0, other.0))
            }
        }

        impl Div for $name {
            type Output = $name;
            /// Divided in `f32`, then rounded: the same as one rounding.
            #[inline(always)]
            fn div(self, other: $name) -> $name {
                $name::from_f32(self.to_f32() / other.to_f32())
            }
        }

        impl AddAssign for $name {
            #[inline(always)]
            fn add_assign(&mut self, other: $name) {
                *self = *self + other;
            }
        }

        impl SubAssign for $name {
            #[inline(always)]
            fn sub_assign(&mut self, other: $name) {
                *self = *self - other;
            }
        }

        impl MulAssign for $name {
            #[inline(always)]
            fn mul_assign(&mut self, other: $name) {
                *self = *self * other;
            }
        }

        impl DivAssign for $name {
            #[inline(always)]
            fn div_assign(&mut self, other: $name) {
                *self = *self / other;
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        // SAFETY: `#[repr(transparent)]` over a `u16`: `Copy`, no pointers,
        // one layout on host and device, all-zero is `+0.0`.
        unsafe impl crate::DeviceCopy for $name {}
        // SAFETY: as above: every bit pattern is a value, zero included.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above, with no padding.
        unsafe impl bytemuck::Pod for $name {}

        half_type!(@print $name, DISPLAY, DEBUG, LOWER_EXP, UPPER_EXP);
    };
    (@print $name:ident, $($kind:ident),*) => {$(
        impl crate::print::Print<{ crate::print::kind::$kind }> for $name {
            #[inline(always)]
            fn print<const F: usize, const A: usize>(
                &self,
                line: &mut crate::print::Printer<F, A>,
                spec: crate::print::Spec,
            ) {
                crate::print::print_float(line, spec, crate::print::kind::$kind, self.to_f64());
            }
        }
    )*};
}

#[inline(always)]
fn bf16_to_f32(bits: u16) -> f32 {
    soft::bf16_to_f32(bits)
}

half_type! {
    /// An IEEE binary16 float (CUDA's `__half`): 1 sign bit, 5 exponent
    /// bits, 10 mantissa bits; finite values up to 65504. See the
    /// [module documentation](self).
    f16, F16, to_f32 = ops::f16_to_f32_bits,
    from_f32 = f16_from_f32, from_f64 = f16_from_f64,
    add = f16_add, sub = f16_sub, mul = f16_mul, fma = f16_fma,
    consts {
        "0.0" ZERO = 0x0000;
        "1.0" ONE = 0x3c00;
        "-1.0" NEG_ONE = 0xbc00;
        "The largest finite value, 65504." MAX = 0x7bff;
        "The most negative finite value, -65504." MIN = 0xfbff;
        "The smallest positive normal value, 2^-14." MIN_POSITIVE = 0x0400;
        "The difference between 1.0 and the next larger value, 2^-10." EPSILON = 0x1400;
        "Positive infinity." INFINITY = 0x7c00;
        "Negative infinity." NEG_INFINITY = 0xfc00;
        "A quiet NaN (the one the GPU's f16 instructions return)." NAN = 0x7fff;
    }
}

half_type! {
    /// A bfloat16 float (CUDA's `__nv_bfloat16`): the top half of an `f32`,
    /// with its range and 8 bits of precision. See the
    /// [module documentation](self).
    bf16, BF16, to_f32 = bf16_to_f32,
    from_f32 = bf16_from_f32, from_f64 = bf16_from_f64,
    add = bf16_add, sub = bf16_sub, mul = bf16_mul, fma = bf16_fma,
    consts {
        "0.0" ZERO = 0x0000;
        "1.0" ONE = 0x3f80;
        "-1.0" NEG_ONE = 0xbf80;
        "The largest finite value, about 3.39e38." MAX = 0x7f7f;
        "The most negative finite value." MIN = 0xff7f;
        "The smallest positive normal value, 2^-126." MIN_POSITIVE = 0x0080;
        "The difference between 1.0 and the next larger value, 2^-7." EPSILON = 0x3c00;
        "Positive infinity." INFINITY = 0x7f80;
        "Negative infinity." NEG_INFINITY = 0xff80;
        "A quiet NaN (the one the GPU's bf16 instructions return)." NAN = 0x7fff;
    }
}

macro_rules! pair_type {
    ($(#[$doc:meta])* $name:ident of $half:ident, from_f32s = $from_f32s:ident, add = $add:ident, mul = $mul:ident, fma = $fma:ident) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Default, PartialEq)]
        #[repr(transparent)]
        pub struct $name(u32);

        impl $name {
            /// The pair `(lo, hi)`: `lo` in the low 16 bits.
            #[inline(always)]
            pub const fn new(lo: $half, hi: $half) -> $name {
                $name(lo.to_bits() as u32 | (hi.to_bits() as u32) << 16)
            }

            /// `(lo, hi)` each rounded to nearest-even, as
            #[doc = concat!("[`", stringify!($half), "::from_f32`](crate::half::", stringify!($half), "::from_f32)")]
            /// rounds, by one instruction from sm_80 (CUDA's
            /// `__floats2bfloat162_rn`, `__floats2half2_rn`): a GEMM's
            /// epilogue rounds its accumulators this way.
            #[inline(always)]
            pub fn from_f32s(lo: f32, hi: f32) -> $name {
                $name(ops::$from_f32s(lo, hi))
            }

            /// The two lanes, low first.
            #[inline(always)]
            pub const fn to_array(self) -> [$half; 2] {
                [self.lo(), self.hi()]
            }

            /// Both lanes `x`.
            #[inline(always)]
            pub const fn splat(x: $half) -> $name {
                $name::new(x, x)
            }

            /// The low lane.
            #[inline(always)]
            pub const fn lo(self) -> $half {
                $half::from_bits(self.0 as u16)
            }

            /// The high lane.
            #[inline(always)]
            pub const fn hi(self) -> $half {
                $half::from_bits((self.0 >> 16) as u16)
            }

            /// `self * a + b` in each lane, rounded once per lane.
            #[inline(always)]
            pub fn mul_add(self, a: $name, b: $name) -> $name {
                $name(ops::$fma(self.0, a.0, b.0))
            }
        }

        impl Add for $name {
            type Output = $name;
            /// Lane by lane.
            #[inline(always)]
            fn add(self, other: $name) -> $name {
                $name(ops::$add(self.0, other.0))
            }
        }

        impl Mul for $name {
            type Output = $name;
            /// Lane by lane.
            #[inline(always)]
            fn mul(self, other: $name) -> $name {
                $name(ops::$mul(self.0, other.0))
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.lo()).field(&self.hi()).finish()
            }
        }

        // SAFETY: `#[repr(transparent)]` over a `u32`: `Copy`, no pointers,
        // one layout on host and device, all-zero is two `+0.0`.
        unsafe impl crate::DeviceCopy for $name {}
        // SAFETY: as above: every bit pattern is a value, zero included.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as above, with no padding.
        unsafe impl bytemuck::Pod for $name {}
    };
}

pair_type! {
    /// Two [`f16`](struct@f16) in 32 bits (CUDA's `__half2`), computed lane by lane in
    /// one instruction (`add.rn.f16x2`, `mul.rn.f16x2`, `fma.rn.f16x2`).
    f16x2 of f16, from_f32s = f16x2_from_f32s, add = f16x2_add, mul = f16x2_mul, fma = f16x2_fma
}

pair_type! {
    /// Two [`bf16`] in 32 bits (CUDA's `__nv_bfloat162`), computed lane by
    /// lane (`fma.rn.bf16x2` from sm_80).
    bf16x2 of bf16, from_f32s = bf16x2_from_f32s, add = bf16x2_add, mul = bf16x2_mul, fma = bf16x2_fma
}

/// The `half` crate's types, the host's types for half data: conversions
/// and slice views without a copy (the layouts are the same).
#[cfg(not(target_arch = "nvptx64"))]
mod host_interop {
    use super::{bf16, f16};

    macro_rules! interop {
        ($ours:ident, $theirs:path) => {
            impl From<$theirs> for $ours {
                #[inline]
                fn from(x: $theirs) -> $ours {
                    $ours::from_bits(x.to_bits())
                }
            }

            impl From<$ours> for $theirs {
                #[inline]
                fn from(x: $ours) -> $theirs {
                    <$theirs>::from_bits(x.to_bits())
                }
            }

            impl $ours {
                #[doc = concat!("`", stringify!($theirs), "` values viewed as this type (no copy).")]
                pub fn cast_slice(values: &[$theirs]) -> &[$ours] {
                    bytemuck::cast_slice(values)
                }

                #[doc = concat!("These values viewed as `", stringify!($theirs), "` (no copy).")]
                pub fn as_half_slice(values: &[$ours]) -> &[$theirs] {
                    bytemuck::cast_slice(values)
                }
            }
        };
    }

    interop!(f16, half::f16);
    interop!(bf16, half::bf16);
}
