//! Half precision in kernels: `f16`, `bf16` and their pairs give the values
//! the GPU's instructions give, rounded to nearest-even once per operation,
//! on the GPU and on the simulator; host data in the `half` crate's types
//! travels without a copy. The reference ([`nearest`]) searches the format's
//! values (decoded by the `half` crate) for the one nearest the exact
//! result, computed in `f64`: exact for these sums, products and fused
//! multiply-adds (the operands' exponents are kept close enough), and a
//! quotient rounded twice, to 53 then 11 or 8 bits, rounds as once. (The
//! `half` crate's own `from_f64` is no reference: it rounds 1 + 2^-11 + a
//! little, above a tie, down.) On the simulator where there is no GPU, on
//! the GPU otherwise.

use gpu_device::{bf16, bf16x2, f16, f16x2};
use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::halves::{bf16_arithmetic, f16_arithmetic, half_conversions, half_pairs};

/// The value of a 16-bit format nearest `x`, ties to even bits: a search
/// over the format's positive values, ordered by their bits (`value`
/// decodes them), up to the largest finite one, `max`; beyond it and its
/// half unit, infinity.
fn nearest(x: f64, value: impl Fn(u16) -> f64, max: u16, infinity: u16, nan: u16) -> u16 {
    if x.is_nan() {
        return nan;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    let top = value(max);
    if a >= top {
        // The next value would be `top` plus its unit; `max`'s bits are odd,
        // so a tie goes to infinity.
        let limit = top + (top - value(max - 1)) / 2.0;
        return sign | if a < limit { max } else { infinity };
    }
    let (mut lo, mut hi) = (0u16, max);
    while lo < hi {
        let m = lo + (hi - lo).div_ceil(2);
        if value(m) <= a {
            lo = m;
        } else {
            hi = m - 1;
        }
    }
    let middle = (value(lo) + value(lo + 1)) / 2.0;
    sign | if a < middle || (a == middle && lo & 1 == 0) {
        lo
    } else {
        lo + 1
    }
}

fn nearest_f16(x: f64) -> f16 {
    f16::from_bits(nearest(
        x,
        |h| half::f16::from_bits(h).to_f64(),
        0x7bff,
        0x7c00,
        0x7e00,
    ))
}

fn nearest_bf16(x: f64) -> bf16 {
    bf16::from_bits(nearest(
        x,
        |b| half::bf16::from_bits(b).to_f64(),
        0x7f7f,
        0x7f80,
        0x7fc0,
    ))
}

/// Values of every kind: zeros, subnormals, normals, the largest, near
/// overflow, and ties that rounding must break to even. The random ones
/// have exponents in -10..=10, so that every exact result fits an `f64`.
fn f16_operands() -> Vec<(f16, f16, f16)> {
    let mut state = 0x1234_5678u32;
    let mut next = || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let bits = (state >> 16) as u16;
        let exponent = 5 + (bits >> 10 & 0x1f) % 21;
        f16::from_bits(bits & 0x83ff | exponent << 10)
    };
    let mut operands: Vec<(f16, f16, f16)> = (0..2000).map(|_| (next(), next(), next())).collect();
    let v = |x: f64| f16::from_f64(x);
    let tiny = f16::from_bits(0x0001);
    operands.extend([
        (f16::ZERO, -f16::ZERO, f16::ZERO),
        (tiny, tiny, tiny),
        (f16::MAX, f16::MAX, f16::MAX),
        (f16::MAX, f16::ONE, f16::MAX),
        (v(1.0 + 1.0 / 1024.0), v(1.5), tiny),
        (v(1.0 + 1.0 / 1024.0), v(1.5), -tiny),
        (v(1.0 + 1.0 / 1024.0), v(1.5), f16::ZERO),
        (v(2048.0), v(1.0), v(1.0)),
        (v(2048.0), v(3.0), v(1.0)),
        (f16::MIN_POSITIVE, v(0.5), tiny),
        (v(-3.25), v(0.0), v(-0.0)),
    ]);
    operands
}

fn bf16_operands() -> Vec<(bf16, bf16, bf16)> {
    let mut state = 0x9e37_79b9u32;
    let mut next = || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let bits = (state >> 16) as u16;
        // Exponents in -14..=14: every exact result fits an `f64`.
        let exponent = 113 + (bits >> 7 & 0x7f) % 29;
        bf16::from_bits(bits & 0x807f | exponent << 7)
    };
    let mut operands: Vec<(bf16, bf16, bf16)> =
        (0..2000).map(|_| (next(), next(), next())).collect();
    let v = |x: f64| bf16::from_f64(x);
    let x = v(1.0 + 1.0 / 16.0); // x * x = 1 + 2^-3 + 2^-8: a tie
    operands.extend([
        (x, x, bf16::ZERO),
        (x, x, v(2f64.powi(-20))),
        (x, x, v(-(2f64.powi(-20)))),
        (bf16::MAX, v(2.0), bf16::ZERO),
        (bf16::ZERO, -bf16::ZERO, -bf16::ZERO),
    ]);
    operands
}

/// Equal bits, or both NaN (a NaN's payload may differ).
fn same<T: Copy + std::fmt::Debug>(
    got: T,
    want: T,
    bits: impl Fn(T) -> u16,
    nan: impl Fn(T) -> bool,
) -> bool {
    bits(got) == bits(want) || (nan(got) && nan(want))
}

#[test]
fn f16_arithmetic_rounds_once_to_nearest_even() {
    let stream = Stream::new().unwrap();
    let operands = f16_operands();
    let n = operands.len();
    let column = |f: fn(&(f16, f16, f16)) -> f16| {
        let values: Vec<f16> = operands.iter().map(f).collect();
        DeviceBuffer::to_device_sync(&values, &stream).unwrap()
    };
    let (x, y, z) = (column(|o| o.0), column(|o| o.1), column(|o| o.2));
    let mut out = DeviceBuffer::<[f16; 8]>::zeroed_on(n, &stream).unwrap();
    launch!(f16_arithmetic[n.div_ceil(256), 256, stream](&x, &y, &z, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let r = nearest_f16;
    for (i, ((a, b, c), row)) in operands.iter().zip(&got).enumerate() {
        let (fa, fb, fc) = (a.to_f64(), b.to_f64(), c.to_f64());
        let want = [
            r(fa + fb),
            r(fa - fb),
            r(fa * fb),
            r(fa / fb),
            r(fa.mul_add(fb, fc)),
            f16::from_bits(a.to_bits() ^ 0x8000),
            if fa >= fb || fb.is_nan() { *a } else { *b },
            if fa <= fb || fb.is_nan() { *a } else { *b },
        ];
        for (k, (g, w)) in row.iter().zip(want).enumerate() {
            assert!(
                same(*g, w, f16::to_bits, f16::is_nan),
                "operands {i} ({a:?}, {b:?}, {c:?}), result {k}: {g:?} ({:#06x}), want {w:?} ({:#06x})",
                g.to_bits(),
                w.to_bits()
            );
        }
    }
}

#[test]
fn bf16_arithmetic_rounds_once_to_nearest_even() {
    let stream = Stream::new().unwrap();
    let operands = bf16_operands();
    let n = operands.len();
    let column = |f: fn(&(bf16, bf16, bf16)) -> bf16| {
        let values: Vec<bf16> = operands.iter().map(f).collect();
        DeviceBuffer::to_device_sync(&values, &stream).unwrap()
    };
    let (x, y, z) = (column(|o| o.0), column(|o| o.1), column(|o| o.2));
    let mut out = DeviceBuffer::<[bf16; 8]>::zeroed_on(n, &stream).unwrap();
    launch!(bf16_arithmetic[n.div_ceil(256), 256, stream](&x, &y, &z, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let r = nearest_bf16;
    for (i, ((a, b, c), row)) in operands.iter().zip(&got).enumerate() {
        let (fa, fb, fc) = (a.to_f64(), b.to_f64(), c.to_f64());
        let want = [
            r(fa + fb),
            r(fa - fb),
            r(fa * fb),
            r(fa / fb),
            r(fa.mul_add(fb, fc)),
            bf16::from_bits(a.to_bits() ^ 0x8000),
            if fa >= fb || fb.is_nan() { *a } else { *b },
            if fa <= fb || fb.is_nan() { *a } else { *b },
        ];
        for (k, (g, w)) in row.iter().zip(want).enumerate() {
            assert!(
                same(*g, w, bf16::to_bits, bf16::is_nan),
                "operands {i} ({a:?}, {b:?}, {c:?}), result {k}: {g:?} ({:#06x}), want {w:?} ({:#06x})",
                g.to_bits(),
                w.to_bits()
            );
        }
    }
}

#[test]
fn pairs_compute_each_lane_as_the_single_type_does() {
    let stream = Stream::new().unwrap();
    let h = f16_operands();
    let b = bf16_operands();
    let n = h.len().min(b.len()) / 2;
    let pair_h =
        |k: usize, f: fn(&(f16, f16, f16)) -> f16| f16x2::new(f(&h[2 * k]), f(&h[2 * k + 1]));
    let pair_b =
        |k: usize, f: fn(&(bf16, bf16, bf16)) -> bf16| bf16x2::new(f(&b[2 * k]), f(&b[2 * k + 1]));
    let up = |v: Vec<f16x2>| DeviceBuffer::to_device_sync(&v, &stream).unwrap();
    let upb = |v: Vec<bf16x2>| DeviceBuffer::to_device_sync(&v, &stream).unwrap();
    let x = up((0..n).map(|k| pair_h(k, |o| o.0)).collect());
    let y = up((0..n).map(|k| pair_h(k, |o| o.1)).collect());
    let z = up((0..n).map(|k| pair_h(k, |o| o.2)).collect());
    let bx = upb((0..n).map(|k| pair_b(k, |o| o.0)).collect());
    let by = upb((0..n).map(|k| pair_b(k, |o| o.1)).collect());
    let bz = upb((0..n).map(|k| pair_b(k, |o| o.2)).collect());
    let mut out = DeviceBuffer::<[f16x2; 3]>::zeroed_on(n, &stream).unwrap();
    let mut bout = DeviceBuffer::<[bf16x2; 3]>::zeroed_on(n, &stream).unwrap();
    launch!(half_pairs[n.div_ceil(128), 128, stream](&x, &y, &z, &bx, &by, &bz, &mut out, &mut bout)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let bgot = bout.copy_to_host_sync(&stream).unwrap();
    for k in 0..n {
        for (lane, i) in [(0, 2 * k), (1, 2 * k + 1)] {
            let pick = |p: f16x2| if lane == 0 { p.lo() } else { p.hi() };
            let (a, b1, c) = h[i];
            for (g, w) in [
                (pick(got[k][0]), a + b1),
                (pick(got[k][1]), a * b1),
                (pick(got[k][2]), a.mul_add(b1, c)),
            ] {
                assert!(
                    same(g, w, f16::to_bits, f16::is_nan),
                    "f16 pair {k} lane {lane}: {g:?} want {w:?}"
                );
            }
            let pickb = |p: bf16x2| if lane == 0 { p.lo() } else { p.hi() };
            let (a, b1, c) = b[i];
            for (g, w) in [
                (pickb(bgot[k][0]), a + b1),
                (pickb(bgot[k][1]), a * b1),
                (pickb(bgot[k][2]), a.mul_add(b1, c)),
            ] {
                assert!(
                    same(g, w, bf16::to_bits, bf16::is_nan),
                    "bf16 pair {k} lane {lane}: {g:?} want {w:?}"
                );
            }
        }
    }
}

#[test]
fn conversions_round_once_and_compare_as_ieee() {
    let stream = Stream::new().unwrap();
    // Ties of f16 and bf16, values just off them, overflow, subnormals,
    // NaN and infinities; each as f32 and (slightly off) as f64.
    let mut xs: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        1.0 + 1.0 / 2048.0,
        1.0 + 3.0 / 2048.0,
        1.0 + 1.0 / 256.0,
        65504.0,
        65519.0,
        65520.0,
        1e-8,
        3e-8,
        -2.5,
        f32::INFINITY,
        f32::NAN,
        3.4e38,
    ];
    let mut state = 7u32;
    xs.extend((0..500).map(|_| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        f32::from_bits(state & 0xbfff_ffff)
    }));
    let ds: Vec<f64> = xs.iter().map(|&x| f64::from(x) * (1.0 + 1e-12)).collect();
    let dx = DeviceBuffer::to_device_sync(&xs, &stream).unwrap();
    let dd = DeviceBuffer::to_device_sync(&ds, &stream).unwrap();
    let mut out = DeviceBuffer::<[u16; 8]>::zeroed_on(xs.len(), &stream).unwrap();
    let mut back = DeviceBuffer::<[f32; 3]>::zeroed_on(xs.len(), &stream).unwrap();
    launch!(half_conversions[xs.len().div_ceil(128), 128, stream](&dx, &dd, &mut out, &mut back))
        .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let got_back = back.copy_to_host_sync(&stream).unwrap();
    for (i, (&x, &d)) in xs.iter().zip(&ds).enumerate() {
        // The pairs' high lane: the next value.
        let y = f64::from(xs.get(i + 1).copied().unwrap_or(0.0));
        let want = [
            nearest_f16(f64::from(x)).to_bits(),
            nearest_f16(d).to_bits(),
            nearest_bf16(f64::from(x)).to_bits(),
            nearest_bf16(d).to_bits(),
            nearest_f16(f64::from(x)).to_bits(),
            nearest_f16(y).to_bits(),
            nearest_bf16(f64::from(x)).to_bits(),
            nearest_bf16(y).to_bits(),
        ];
        for k in 0..8 {
            let nan = |b: u16| {
                if k < 2 || k == 4 || k == 5 {
                    f16::from_bits(b).is_nan()
                } else {
                    bf16::from_bits(b).is_nan()
                }
            };
            assert!(
                got[i][k] == want[k] || (nan(got[i][k]) && nan(want[k])),
                "value {i} ({x:e}, {d:e}), conversion {k}: {:#06x}, want {:#06x}",
                got[i][k],
                want[k]
            );
        }
        let (hx, hd) = (f16::from_bits(got[i][0]), f16::from_bits(got[i][1]));
        let order = match hx.to_f32().partial_cmp(&hd.to_f32()) {
            Some(std::cmp::Ordering::Less) => -1.0,
            Some(std::cmp::Ordering::Equal) => 0.0,
            Some(std::cmp::Ordering::Greater) => 1.0,
            None => 2.0,
        };
        let [h32, b32, o] = got_back[i];
        assert!(
            h32 == hx.to_f32() || (h32.is_nan() && hx.is_nan()),
            "value {i}"
        );
        assert!(
            b32 == bf16::from_bits(got[i][2]).to_f32() || b32.is_nan(),
            "value {i}"
        );
        assert_eq!(o, order, "value {i}");
    }
}

#[test]
fn host_data_in_the_half_crates_types_travels_without_a_copy() {
    let stream = Stream::new().unwrap();
    let data: Vec<half::f16> = (0..64)
        .map(|i| half::f16::from_f32(i as f32 * 0.5))
        .collect();
    let ours: &[f16] = f16::cast_slice(&data);
    assert_eq!(ours.as_ptr() as usize, data.as_ptr() as usize);
    let device = DeviceBuffer::to_device_sync(ours, &stream).unwrap();
    let back = device.copy_to_host_sync(&stream).unwrap();
    assert_eq!(f16::as_half_slice(&back), &data[..]);
    assert_eq!(half::bf16::from(bf16::from(half::bf16::PI)), half::bf16::PI);
    assert_eq!(f16::from(half::f16::from_f32(2.5)).to_f32(), 2.5);
}
