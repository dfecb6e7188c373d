//! `sum` and element-wise arithmetic against the CPU, at sizes from 0 to 2^28.

use gpu_ops::{self as ops, array, DeviceScalar, SumElement};
use gpu_runtime::{DeviceBuffer, Error, Stream};

/// A small deterministic generator (no external crates): xorshift64*.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

const SIZES: &[usize] = &[
    0,
    1,
    2,
    3,
    15,
    16,
    17,
    31,
    255,
    256,
    257,
    1000,
    4095,
    4096,
    4097,
    65_537,
    1 << 20,
    (1 << 20) + 13,
];

macro_rules! check_integer_sum {
    ($t:ty, $acc:ty, $stream:expr) => {{
        let mut numbers = Numbers(0x9e37_79b9_7f4a_7c15 ^ std::mem::size_of::<$t>() as u64);
        for &n in SIZES {
            let host: Vec<$t> = (0..n).map(|_| numbers.next() as $t).collect();
            let device = DeviceBuffer::to_device_sync(&host, $stream).unwrap();
            let got: $acc = ops::sum_on(&device, $stream)
                .unwrap()
                .copy_to_host_sync($stream)
                .unwrap();
            let want = host
                .iter()
                .fold(0 as $acc, |a, &x| a.wrapping_add(x as $acc));
            assert_eq!(got, want, "sum of {n} {}", stringify!($t));
        }
    }};
}

#[test]
fn integer_sums_are_exact_and_accumulate_as_numpy_does() {
    let stream = Stream::new().unwrap();
    check_integer_sum!(i8, i64, &stream);
    check_integer_sum!(i16, i64, &stream);
    check_integer_sum!(i32, i64, &stream);
    check_integer_sum!(i64, i64, &stream);
    check_integer_sum!(u8, u64, &stream);
    check_integer_sum!(u16, u64, &stream);
    check_integer_sum!(u32, u64, &stream);
    check_integer_sum!(u64, u64, &stream);
    // i32::MAX twice overflows i32 but not the i64 accumulator.
    let big = DeviceBuffer::to_device_sync(&[i32::MAX, i32::MAX], &stream).unwrap();
    assert_eq!(
        ops::sum_on(&big, &stream)
            .unwrap()
            .copy_to_host_sync(&stream)
            .unwrap(),
        2 * i32::MAX as i64
    );
}

fn check_float_sum<T>(host: &[T], stream: &Stream, relative: f64)
where
    T: SumElement<Acc = T> + ops::sum_partials::Instance + Into<f64> + Copy,
{
    let device = DeviceBuffer::to_device_sync(host, stream).unwrap();
    let got: f64 = ops::sum_on(&device, stream)
        .unwrap()
        .copy_to_host_sync(stream)
        .unwrap()
        .into();
    let want: f64 = host.iter().map(|&x| x.into()).sum();
    let scale: f64 = host.iter().map(|&x| x.into().abs()).sum::<f64>().max(1.0);
    assert!(
        (got - want).abs() <= relative * scale,
        "sum of {}: {got} on the GPU, {want} exactly",
        host.len()
    );
}

#[test]
fn float_sums_match_the_cpu() {
    let stream = Stream::new().unwrap();
    let mut numbers = Numbers(42);
    for &n in SIZES {
        let f: Vec<f32> = (0..n)
            .map(|_| (numbers.next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        check_float_sum(&f, &stream, 1e-6);
        let d: Vec<f64> = f.iter().map(|&x| x as f64 * 1.5).collect();
        check_float_sum(&d, &stream, 1e-12);
    }
}

#[test]
fn sums_of_two_to_the_28_elements() {
    let stream = Stream::new().unwrap();
    let n = 1usize << 28;
    let ints: Vec<i32> = (0..n).map(|i| (i % 1999) as i32 - 999).collect();
    let device = DeviceBuffer::to_device_sync(&ints, &stream).unwrap();
    let want: i64 = ints.iter().map(|&x| x as i64).sum();
    assert_eq!(
        ops::sum_on(&device, &stream)
            .unwrap()
            .copy_to_host_sync(&stream)
            .unwrap(),
        want
    );
    drop((device, ints));
    let floats: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    check_float_sum(&floats, &stream, 1e-6);
    // Not a multiple of the block size or of the vector width.
    let odd = &floats[..n - 77];
    check_float_sum(odd, &stream, 1e-6);
}

#[test]
fn elementwise_expressions_match_the_cpu() {
    let stream = Stream::new().unwrap();
    let _with = stream.enter().unwrap();
    for n in [1usize, 10, 255, 257, 100_003] {
        let a: Vec<i64> = (0..n as i64).map(|i| i * 3 - 7).collect();
        let c: Vec<i64> = (0..n as i64).map(|i| 1000 - i).collect();
        let da = DeviceBuffer::from_host_sync(&a).unwrap();
        let dc = DeviceBuffer::from_host_sync(&c).unwrap();
        let b: DeviceScalar<i64> = ops::sum(&da).unwrap();
        let bv: i64 = a.iter().sum();
        // The tutorial's b * a + 8: one fused kernel.
        let got = (&b * &da + 8).eval().unwrap().to_host_sync().unwrap();
        assert_eq!(got, a.iter().map(|x| bv * x + 8).collect::<Vec<_>>());
        // Array with array, subtraction, and a nested expression with a temporary.
        let got = (array(&da) * &dc - &b)
            .eval()
            .unwrap()
            .to_host_sync()
            .unwrap();
        assert_eq!(got, (0..n).map(|i| a[i] * c[i] - bv).collect::<Vec<_>>());
        let got = ((array(&da) - &dc) * (array(&dc) + 2))
            .eval()
            .unwrap()
            .to_host_sync()
            .unwrap();
        assert_eq!(
            got,
            (0..n)
                .map(|i| (a[i] - c[i]) * (c[i] + 2))
                .collect::<Vec<_>>()
        );
    }
    // Floats, unsigned (wrapping as NumPy), and a scalar-only expression.
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
    let dx = DeviceBuffer::from_host_sync(&x).unwrap();
    let got = (array(&dx) * 2.0 + 0.5)
        .eval()
        .unwrap()
        .to_host_sync()
        .unwrap();
    assert_eq!(got, x.iter().map(|v| v * 2.0 + 0.5).collect::<Vec<_>>());
    let u = DeviceBuffer::from_host_sync(&[0u32, 1, 2]).unwrap();
    assert_eq!(
        (array(&u) - 1u32).eval().unwrap().to_host_sync().unwrap(),
        vec![u32::MAX, 0, 1]
    );
    let s = DeviceScalar::from_value(6.0f64, &stream).unwrap();
    assert_eq!(
        (&s * 7.0).eval().unwrap().to_host_sync().unwrap(),
        vec![42.0]
    );
    // Arrays of different lengths are an error naming both lengths.
    let short = DeviceBuffer::from_host_sync(&[1.0f32; 3]).unwrap();
    let err = (array(&dx) + &short).eval().err().unwrap();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "element-wise arithmetic",
            destination: 1000,
            source: 3
        }
    );
}
