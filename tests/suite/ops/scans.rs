//! Device-wide scans (`gpu_ops::scan`, one pass by decoupled look-back)
//! against the CPU: sums, minima and maxima of `u32`, `i32` and `f32`,
//! exclusive and inclusive, at sizes around the tile (3072) and across
//! more than 32 tiles (a look-back over several windows). On the simulator
//! where there is no GPU, on the GPU otherwise. (The look-back's misuses,
//! which trap, are in `tests/forced_simulator/device_attacks.rs`.)

use super::numbers;
use gpu_device::collective::{Max, Min, Sum};
use gpu_runtime::{DeviceBuffer, Error, Stream};

const SIZES: &[usize] = &[
    1,
    2,
    5,
    127,
    128,
    3071,
    3072,
    3073,
    6144,
    100_003,
    (1 << 17) + 9,
];

/// The scan of `values` with `op` from `identity`, exclusive or inclusive.
fn host_scan<T: Copy>(
    values: &[T],
    identity: T,
    inclusive: bool,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut running = identity;
    values
        .iter()
        .map(|&v| {
            let before = running;
            running = op(running, v);
            if inclusive {
                running
            } else {
                before
            }
        })
        .collect()
}

fn check<T, O>(
    values: &[T],
    op: O,
    identity: T,
    inclusive: bool,
    host_op: impl Fn(T, T) -> T,
    stream: &Stream,
) where
    T: gpu_ops::Scannable<O> + gpu_runtime::DeviceCopy + PartialEq + std::fmt::Debug,
    O: Copy,
{
    let input = DeviceBuffer::to_device_sync(values, stream).unwrap();
    let mut out = DeviceBuffer::<T>::zeroed_on(values.len(), stream).unwrap();
    gpu_ops::scan_into(&input, &mut out, op, inclusive, stream).unwrap();
    let got = out.copy_to_host_sync(stream).unwrap();
    let want = host_scan(values, identity, inclusive, host_op);
    if let Some(i) = (0..values.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{} {} scan of {} elements: element {i} is {:?}, the CPU's {:?}",
            if inclusive { "inclusive" } else { "exclusive" },
            std::any::type_name::<O>(),
            values.len(),
            got[i],
            want[i]
        );
    }
}

#[test]
fn sums_of_u32_wrap_and_match_the_cpu_at_every_size() {
    let stream = Stream::new().unwrap();
    for &n in SIZES {
        let values: Vec<u32> = numbers(n as u64, n).iter().map(|&x| x as u32).collect();
        for inclusive in [false, true] {
            check(&values, Sum, 0, inclusive, u32::wrapping_add, &stream);
        }
    }
}

#[test]
fn sums_of_i32_and_f32_match_the_cpu() {
    let stream = Stream::new().unwrap();
    for &n in SIZES {
        let values: Vec<i32> = numbers(n as u64 + 1, n).iter().map(|&x| x as i32).collect();
        // Small integers: every partial sum is exact, whatever the order.
        let floats: Vec<f32> = numbers(n as u64 + 2, n)
            .iter()
            .map(|&x| (x % 17) as f32 - 8.0)
            .collect();
        // Each kind is a kernel instance of its own (`ScanSpec::INCLUSIVE`).
        for inclusive in [false, true] {
            check(&values, Sum, 0, inclusive, i32::wrapping_add, &stream);
            check(&floats, Sum, 0.0, inclusive, |a, b| a + b, &stream);
        }
    }
}

#[test]
fn minima_and_maxima_match_the_cpu() {
    let stream = Stream::new().unwrap();
    for &n in [1usize, 3073, 100_003].iter() {
        let u: Vec<u32> = numbers(n as u64 + 3, n)
            .iter()
            .map(|&x| x as u32 >> 3)
            .collect();
        let i: Vec<i32> = numbers(n as u64 + 4, n).iter().map(|&x| x as i32).collect();
        let f: Vec<f32> = numbers(n as u64 + 5, n)
            .iter()
            .map(|&x| (x % 100_000) as f32 / 7.0 - 5000.0)
            .collect();
        // Every instance: each kind is a kernel instance of its own.
        for inclusive in [false, true] {
            check(&u, Min, u32::MAX, inclusive, u32::min, &stream);
            check(&u, Max, 0, inclusive, u32::max, &stream);
            check(&i, Min, i32::MAX, inclusive, i32::min, &stream);
            check(&i, Max, i32::MIN, inclusive, i32::max, &stream);
            check(&f, Min, f32::INFINITY, inclusive, f32::min, &stream);
            check(&f, Max, f32::NEG_INFINITY, inclusive, f32::max, &stream);
        }
    }
}

#[test]
fn the_convenience_forms_and_an_empty_input() {
    let stream = gpu_runtime::current_stream().unwrap();
    let values: Vec<u32> = (1..=10_000).collect();
    let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    let exclusive = gpu_ops::exclusive_sum(&input)
        .unwrap()
        .copy_to_host_sync(&stream)
        .unwrap();
    let inclusive = gpu_ops::inclusive_sum(&input)
        .unwrap()
        .copy_to_host_sync(&stream)
        .unwrap();
    assert_eq!(exclusive[0], 0);
    assert_eq!(exclusive[9_999], 9_999 * 10_000 / 2);
    assert_eq!(inclusive[9_999], 10_000 * 10_001 / 2);
    let empty = DeviceBuffer::<u32>::zeroed_on(0, &stream).unwrap();
    assert!(gpu_ops::exclusive_sum(&empty).unwrap().is_empty());
    let mut short = DeviceBuffer::<u32>::zeroed_on(9_999, &stream).unwrap();
    let err = gpu_ops::scan_into(&input, &mut short, Sum, false, &stream).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { .. }), "{err}");
}
