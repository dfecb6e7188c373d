//! Half precision (`f16`, `bf16` and their pairs) in kernels.

use gpu_device::prelude::*;
use gpu_device::{bf16, bf16x2, f16, f16x2};

/// `out[i] = [x + y, x - y, x * y, x / y, x * y + z, -x, max, min]` in f16.
#[kernel]
pub fn f16_arithmetic(x: &[f16], y: &[f16], z: &[f16], mut out: DisjointSlice<[f16; 8]>) {
    let i = thread_index();
    let k = i.get();
    if let (Some(&a), Some(&b), Some(&c)) = (x.get(k), y.get(k), z.get(k)) {
        out.set(
            i,
            [
                a + b,
                a - b,
                a * b,
                a / b,
                a.mul_add(b, c),
                -a,
                a.max(b),
                a.min(b),
            ],
        );
    }
}

/// As [`f16_arithmetic`], in bf16.
#[kernel]
pub fn bf16_arithmetic(x: &[bf16], y: &[bf16], z: &[bf16], mut out: DisjointSlice<[bf16; 8]>) {
    let i = thread_index();
    let k = i.get();
    if let (Some(&a), Some(&b), Some(&c)) = (x.get(k), y.get(k), z.get(k)) {
        out.set(
            i,
            [
                a + b,
                a - b,
                a * b,
                a / b,
                a.mul_add(b, c),
                -a,
                a.max(b),
                a.min(b),
            ],
        );
    }
}

/// `out[i] = [x + y, x * y, x * y + z]` of f16 and of bf16 pairs.
#[kernel]
pub fn half_pairs(
    x: &[f16x2],
    y: &[f16x2],
    z: &[f16x2],
    bx: &[bf16x2],
    by: &[bf16x2],
    bz: &[bf16x2],
    mut out: DisjointSlice<[f16x2; 3]>,
    mut bout: DisjointSlice<[bf16x2; 3]>,
) {
    let i = thread_index();
    let k = i.get();
    if let (Some(&a), Some(&b), Some(&c)) = (x.get(k), y.get(k), z.get(k)) {
        out.set(i, [a + b, a * b, a.mul_add(b, c)]);
    }
    if let (Some(&a), Some(&b), Some(&c)) = (bx.get(k), by.get(k), bz.get(k)) {
        bout.set(i, [a + b, a * b, a.mul_add(b, c)]);
    }
}

/// `out[i] = [f16 of x, f16 of d, bf16 of x, bf16 of d, the lanes of
/// f16x2::from_f32s(x, y), those of bf16x2::from_f32s(x, y)]` (bits; `y`
/// the next `x`, 0 past the end), and `back[i]` the f16's and bf16's values
/// as `f32`, and whether `f16 of x` is below, equal to or above `f16 of d`
/// (-1, 0, 1; 2 unordered).
#[kernel]
pub fn half_conversions(
    xs: &[f32],
    d: &[f64],
    mut out: DisjointSlice<[u16; 8]>,
    mut back: DisjointSlice<[f32; 3]>,
) {
    let i = thread_index();
    let k = i.get();
    if let (Some(&x), Some(&d)) = (xs.get(k), d.get(k)) {
        let y = xs.get(k + 1).copied().unwrap_or(0.0);
        let (hx, hd) = (f16::from_f32(x), f16::from_f64(d));
        let (bx, bd) = (bf16::from_f32(x), bf16::from_f64(d));
        let [hp0, hp1] = f16x2::from_f32s(x, y).to_array();
        let [bp0, bp1] = bf16x2::from_f32s(x, y).to_array();
        out.set(
            i,
            [
                hx.to_bits(),
                hd.to_bits(),
                bx.to_bits(),
                bd.to_bits(),
                hp0.to_bits(),
                hp1.to_bits(),
                bp0.to_bits(),
                bp1.to_bits(),
            ],
        );
        let order = match hx.partial_cmp(&hd) {
            Some(core::cmp::Ordering::Less) => -1.0,
            Some(core::cmp::Ordering::Equal) => 0.0,
            Some(core::cmp::Ordering::Greater) => 1.0,
            None => 2.0,
        };
        back.set(i, [hx.to_f32(), f32::from(bx), order]);
    }
}
