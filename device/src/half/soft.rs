//! Half-precision arithmetic in software, rounding to nearest-even as the
//! GPU's instructions do: the simulator's implementation, and the device's
//! where an architecture has no instruction (bf16 below sm_80).
//!
//! Conversions round once, from `f64` (`f32` widens to `f64` exactly
//! first). Addition, subtraction, multiplication and division go through
//! `f32` and round once more: for these operations on `p`-bit operands a
//! `2p + 2`-bit intermediate rounds the same as the exact result (24 bits
//! against 11 for f16 and 8 for bf16). A fused multiply-add goes through
//! `f64` instead: the product of two halves is exact there, and the sum is
//! rounded to odd (nudged one unit toward the exact value when inexact),
//! which then rounds to the half format as the exact value would.

/// The bit layout of a binary floating-point format of 16 bits.
#[derive(Clone, Copy)]
pub(crate) struct Format {
    /// Bits of the stored mantissa (10 for f16, 7 for bf16).
    pub(crate) mantissa: u32,
    /// Bits of the exponent (5 for f16, 8 for bf16).
    pub(crate) exponent: u32,
}

/// IEEE binary16.
pub(crate) const F16: Format = Format {
    mantissa: 10,
    exponent: 5,
};

/// bfloat16: `f32`'s exponent, 7 bits of mantissa.
pub(crate) const BF16: Format = Format {
    mantissa: 7,
    exponent: 8,
};

/// `x` rounded to nearest-even in `format` (overflow to infinity, NaN kept
/// a quiet NaN with the top bits of its payload).
#[inline]
pub(crate) const fn round_f64(x: f64, format: Format) -> u16 {
    let m = format.mantissa as i32;
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << (format.mantissa + format.exponent);
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let man = bits & ((1u64 << 52) - 1);
    let max_field = (1i32 << format.exponent) - 1;
    let infinity = sign | ((max_field as u16) << format.mantissa);
    if exp == 0x7ff {
        if man == 0 {
            return infinity;
        }
        let payload = (man >> (52 - m)) as u16;
        return infinity | payload | (1 << (m - 1));
    }
    if exp == 0 {
        // Zero, or an f64 subnormal: far below half the smallest half.
        return sign;
    }
    let bias = (1i32 << (format.exponent - 1)) - 1;
    let emin = 1 - bias;
    let e = exp - 1023;
    let significand = (1u64 << 52) | man;
    // The result's unit in the last place is 2^q.
    let mut q = if e > emin { e } else { emin } - m;
    let shift = q - e + 52;
    if shift > 54 {
        // Below half the smallest subnormal.
        return sign;
    }
    let kept = significand >> shift;
    let rest = significand & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let mut r = kept;
    if rest > half || (rest == half && kept & 1 == 1) {
        r += 1;
    }
    if r == 1u64 << (m + 1) {
        r >>= 1;
        q += 1;
    }
    if r >= 1u64 << m {
        let field = q + m + bias;
        if field >= max_field {
            return infinity;
        }
        sign | ((field as u16) << format.mantissa) | ((r - (1u64 << m)) as u16)
    } else {
        sign | r as u16
    }
}

/// The `f32` value of f16 bits (exact).
#[inline]
pub(crate) const fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // A subnormal, `man * 2^-24`: shifted so its top bit is bit 10
            // (the implicit 1), it is `1.f * 2^(-14 - shift)`.
            let shift = man.leading_zeros() - 21;
            let man = (man << shift) & 0x3ff;
            sign | ((113 - shift) << 23) | (man << 13)
        }
        31 => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// The `f32` value of bf16 bits (exact: bf16 is `f32`'s top half).
#[inline]
pub(crate) const fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// `a * b + c` of values of `format` (given as `f64`, exactly), rounded once.
#[inline]
pub(crate) fn fma(a: f64, b: f64, c: f64, format: Format) -> u16 {
    // Exact: two halves' product has at most 22 significant bits, and its
    // exponent stays in f64's normal range.
    let p = a * b;
    let s = p + c;
    let s = if s.is_finite() {
        // The error of the sum, exactly (Knuth's TwoSum).
        let b_virtual = s - p;
        let error = (p - (s - b_virtual)) + (c - b_virtual);
        if error != 0.0 && s.to_bits() & 1 == 0 {
            // Round to odd: one unit toward the exact value (s is not 0:
            // a sum that rounds to 0 is exact).
            let bits = s.to_bits();
            f64::from_bits(if (error > 0.0) == (s > 0.0) {
                bits + 1
            } else {
                bits - 1
            })
        } else {
            s
        }
    } else {
        s
    };
    round_f64(s, format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversions_round_to_nearest_even() {
        for (x, bits) in [
            (0.0f64, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (65504.0, 0x7bff),
            (65519.99, 0x7bff),
            (65520.0, 0x7c00),
            (f64::INFINITY, 0x7c00),
            (2f64.powi(-24), 0x0001),
            (2f64.powi(-25), 0x0000), // exactly half the smallest: to even (0)
            (2f64.powi(-25) * 1.5, 0x0001),
            (1.0 + 1.0 / 2048.0, 0x3c00),   // a tie: to even
            (1.0 + 3.0 / 2048.0, 0x3c02),   // a tie: to even (up)
            (6.103515625e-5, 0x0400),       // smallest normal
            (6.097555160522461e-5, 0x03ff), // largest subnormal
            (-2.5, 0xc100),
        ] {
            assert_eq!(round_f64(x, F16), bits, "{x}");
        }
        assert!(f16_to_f32(round_f64(f64::NAN, F16)).is_nan());
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(round_f64(f64::from(f), F16)).is_nan());
            } else {
                assert_eq!(round_f64(f64::from(f), F16), h, "{h:#06x} = {f}");
            }
        }
    }

    #[test]
    fn bf16_conversions_round_to_nearest_even() {
        for b in 0..=u16::MAX {
            let f = bf16_to_f32(b);
            if !f.is_nan() {
                assert_eq!(round_f64(f64::from(f), BF16), b, "{b:#06x}");
            }
        }
        assert_eq!(round_f64(1.0 + 1.0 / 256.0, BF16), 0x3f80); // tie: to even
        assert_eq!(round_f64(1.0 + 3.0 / 256.0, BF16), 0x3f82);
        assert_eq!(round_f64(3.4e38 * 1.01, BF16), 0x7f80);
    }

    #[test]
    fn fused_multiply_add_rounds_once() {
        // f16: (1 + 2^-10) * 1.5 = 1.5 + 2^-10 + 2^-11, a tie (to even:
        // 1.5 + 2^-9); the smallest addend breaks it either way.
        let tiny = f64::from(f16_to_f32(0x0001)); // 2^-24
        let a = 1.0 + 1.0 / 1024.0;
        assert_eq!(fma(a, 1.5, 0.0, F16), round_f64(1.5 + 1.0 / 512.0, F16));
        assert_eq!(fma(a, 1.5, tiny, F16), round_f64(1.5 + 1.0 / 512.0, F16));
        assert_eq!(fma(a, 1.5, -tiny, F16), round_f64(1.5 + 1.0 / 1024.0, F16));
        // bf16: (1 + 2^-7) * (1 + 2^-7) = 1 + 2^-6 + 2^-14, plus 0: rounds
        // to 1 + 2^-6 (the 2^-14 is below half an ulp).
        let b = 1.0 + 1.0 / 128.0;
        assert_eq!(fma(b, b, 0.0, BF16), round_f64(1.0 + 1.0 / 64.0, BF16));
        // A product exactly at a tie, broken by an addend so small that the
        // sum is inexact even in f64 (round to odd keeps the direction; an
        // f32 or plain f64 sum would land on the tie and round to even).
        let x = 1.0 + 1.0 / 16.0; // (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8: a bf16 tie
        let x2 = x * x;
        assert_eq!(
            round_f64(x2, BF16),
            round_f64(1.0 + 1.0 / 8.0, BF16),
            "tie to even"
        );
        let smallest = f64::from(bf16_to_f32(0x0001));
        assert_eq!(
            fma(x, x, smallest, BF16),
            round_f64(1.0 + 1.0 / 8.0 + 1.0 / 128.0, BF16)
        );
        assert_eq!(fma(x, x, -smallest, BF16), round_f64(1.0 + 1.0 / 8.0, BF16));
    }
}

/// Every half operation in software, by the names of the `arch` seam's
/// `half` module: the simulator's implementation, and the device's bf16
/// where an architecture has no instruction for it.
#[allow(dead_code)]
pub(crate) mod ops {
    use super::{bf16_to_f32, f16_to_f32, fma, round_f64, BF16, F16};

    /// The two 16-bit lanes of `x`, low first.
    #[inline]
    fn lanes(x: u32) -> [u16; 2] {
        [x as u16, (x >> 16) as u16]
    }

    #[inline]
    fn join([lo, hi]: [u16; 2]) -> u32 {
        u32::from(lo) | u32::from(hi) << 16
    }

    #[inline]
    pub(crate) fn f16_from_f32(x: f32) -> u16 {
        round_f64(f64::from(x), F16)
    }
    #[inline]
    pub(crate) fn f16_from_f64(x: f64) -> u16 {
        round_f64(x, F16)
    }
    #[inline]
    pub(crate) fn f16_to_f32_bits(h: u16) -> f32 {
        f16_to_f32(h)
    }
    #[inline]
    pub(crate) fn f16_add(a: u16, b: u16) -> u16 {
        f16_from_f32(f16_to_f32(a) + f16_to_f32(b))
    }
    #[inline]
    pub(crate) fn f16_sub(a: u16, b: u16) -> u16 {
        f16_from_f32(f16_to_f32(a) - f16_to_f32(b))
    }
    #[inline]
    pub(crate) fn f16_mul(a: u16, b: u16) -> u16 {
        f16_from_f32(f16_to_f32(a) * f16_to_f32(b))
    }
    #[inline]
    pub(crate) fn f16_fma(a: u16, b: u16, c: u16) -> u16 {
        let f = |h| f64::from(f16_to_f32(h));
        fma(f(a), f(b), f(c), F16)
    }
    #[inline]
    pub(crate) fn f16x2_add(a: u32, b: u32) -> u32 {
        let ([a0, a1], [b0, b1]) = (lanes(a), lanes(b));
        join([f16_add(a0, b0), f16_add(a1, b1)])
    }
    #[inline]
    pub(crate) fn f16x2_mul(a: u32, b: u32) -> u32 {
        let ([a0, a1], [b0, b1]) = (lanes(a), lanes(b));
        join([f16_mul(a0, b0), f16_mul(a1, b1)])
    }
    #[inline]
    pub(crate) fn f16x2_fma(a: u32, b: u32, c: u32) -> u32 {
        let ([a0, a1], [b0, b1], [c0, c1]) = (lanes(a), lanes(b), lanes(c));
        join([f16_fma(a0, b0, c0), f16_fma(a1, b1, c1)])
    }

    #[inline]
    pub(crate) fn bf16_from_f32(x: f32) -> u16 {
        round_f64(f64::from(x), BF16)
    }
    #[inline]
    pub(crate) fn bf16_from_f64(x: f64) -> u16 {
        round_f64(x, BF16)
    }
    #[inline]
    pub(crate) fn bf16_add(a: u16, b: u16) -> u16 {
        bf16_from_f32(bf16_to_f32(a) + bf16_to_f32(b))
    }
    #[inline]
    pub(crate) fn bf16_sub(a: u16, b: u16) -> u16 {
        bf16_from_f32(bf16_to_f32(a) - bf16_to_f32(b))
    }
    #[inline]
    pub(crate) fn bf16_mul(a: u16, b: u16) -> u16 {
        bf16_from_f32(bf16_to_f32(a) * bf16_to_f32(b))
    }
    #[inline]
    pub(crate) fn bf16_fma(a: u16, b: u16, c: u16) -> u16 {
        let f = |b| f64::from(bf16_to_f32(b));
        fma(f(a), f(b), f(c), BF16)
    }
    #[inline]
    pub(crate) fn bf16x2_add(a: u32, b: u32) -> u32 {
        let ([a0, a1], [b0, b1]) = (lanes(a), lanes(b));
        join([bf16_add(a0, b0), bf16_add(a1, b1)])
    }
    #[inline]
    pub(crate) fn bf16x2_mul(a: u32, b: u32) -> u32 {
        let ([a0, a1], [b0, b1]) = (lanes(a), lanes(b));
        join([bf16_mul(a0, b0), bf16_mul(a1, b1)])
    }
    #[inline]
    pub(crate) fn bf16x2_fma(a: u32, b: u32, c: u32) -> u32 {
        let ([a0, a1], [b0, b1], [c0, c1]) = (lanes(a), lanes(b), lanes(c));
        join([bf16_fma(a0, b0, c0), bf16_fma(a1, b1, c1)])
    }
    #[inline]
    pub(crate) fn f16x2_from_f32s(lo: f32, hi: f32) -> u32 {
        join([f16_from_f32(lo), f16_from_f32(hi)])
    }
    #[inline]
    pub(crate) fn bf16x2_from_f32s(lo: f32, hi: f32) -> u32 {
        join([bf16_from_f32(lo), bf16_from_f32(hi)])
    }
}
