//! Warp and block collectives: reductions and scans for every element type
//! and built-in operation, for closures whose order matters, at block sizes
//! with a partial last warp, with up to 8 warps (each thread combines the
//! warps' totals) and more (a warp scans them); against the same computed
//! on the host. On the simulator where there is no GPU, on the GPU otherwise.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::collectives as k;

/// Block sizes: whole warps, a partial last warp, one thread, up to 8
/// warps and more (9 warps and a partial one, 32 warps).
const BLOCKS: [usize; 8] = [32, 64, 48, 1, 256, 300, 1024, 97];

/// Values of `T` from a seed: small, so that float sums are exact.
trait Sample: Copy + PartialEq + std::fmt::Debug {
    fn sample(i: usize) -> Self;
    fn zero() -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
}

macro_rules! sample_int {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(i: usize) -> Self {
                // Large values, so sums wrap.
                (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) as $t
            }
            fn zero() -> Self { 0 }
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn min(a: Self, b: Self) -> Self { a.min(b) }
            fn max(a: Self, b: Self) -> Self { a.max(b) }
        }
    )*};
}
sample_int!(u32, i32, u64, i64);

macro_rules! sample_float {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(i: usize) -> Self { ((i * 7919) % 41) as $t - 20.0 }
            fn zero() -> Self { 0.0 }
            fn add(a: Self, b: Self) -> Self { a + b }
            fn min(a: Self, b: Self) -> Self { a.min(b) }
            fn max(a: Self, b: Self) -> Self { a.max(b) }
        }
    )*};
}
sample_float!(f32, f64);

/// The groups (warps or blocks) of the launch of `n.div_ceil(threads)`
/// blocks of `threads`: `(start, end)` index ranges.
fn groups(n: usize, threads: usize, warps: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for block in (0..n).step_by(threads) {
        let end = block + threads;
        if warps {
            for w in (block..end).step_by(32) {
                out.push((w, (w + 32).min(end)));
            }
        } else {
            out.push((block, end));
        }
    }
    out
}

/// `values` and the value of each thread past them, `fill`, up to a whole
/// number of blocks of `threads`.
fn launch_values<T: Copy>(values: &[T], threads: usize, fill: T) -> Vec<T> {
    let mut all = values.to_vec();
    all.resize(values.len().div_ceil(threads) * threads, fill);
    all
}

/// Per thread of each group: `[reduce sum, min, max, inclusive sum,
/// exclusive sum, total, exclusive max from 0, first value]`. Threads past
/// `values` contribute zero, as in the kernels.
fn reference<T: Sample>(values: &[T], threads: usize, groups: &[(usize, usize)]) -> Vec<[T; 8]> {
    let values = launch_values(values, threads, T::zero());
    let mut out = vec![[T::zero(); 8]; values.len()];
    for &(start, end) in groups {
        let group = &values[start..end];
        let sum = group.iter().copied().fold(T::zero(), T::add);
        let min = group.iter().copied().reduce(T::min).unwrap();
        let max = group.iter().copied().reduce(T::max).unwrap();
        let (mut inclusive, mut running_max) = (T::zero(), T::zero());
        for (j, &v) in group.iter().enumerate() {
            let exclusive = inclusive;
            inclusive = T::add(inclusive, v);
            out[start + j] = [
                sum,
                min,
                max,
                inclusive,
                exclusive,
                sum,
                running_max,
                group[0],
            ];
            running_max = T::max(running_max, v);
        }
    }
    out
}

macro_rules! typed_tests {
    ($($t:ident),*) => {$(
        mod $t {
            use super::*;

            #[test]
            fn warp_collectives_match_the_host_at_every_block_size() {
                let stream = Stream::new().unwrap();
                for threads in BLOCKS {
                    let n = threads * 3 + 5;
                    let values: Vec<$t> = (0..n).map(<$t>::sample).collect();
                    let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
                    let mut out = DeviceBuffer::<[$t; 6]>::zeroed_on(n, &stream).unwrap();
                    launch!(k::warp_collectives::<$t>[n.div_ceil(threads), threads, stream](&input, &mut out)).unwrap();
                    let got = out.copy_to_host_sync(&stream).unwrap();
                    let want = reference(&values, threads, &groups(n, threads, true));
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        let w6 = [w[0], w[1], w[2], w[3], w[4], w[6]];
                        assert_eq!(*g, w6, "{} threads a block, thread {i}", threads);
                    }
                }
            }

            #[test]
            fn block_collectives_match_the_host_at_every_block_size() {
                let stream = Stream::new().unwrap();
                for threads in BLOCKS {
                    let n = threads * 3 + 5;
                    let values: Vec<$t> = (0..n).map(<$t>::sample).collect();
                    let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
                    let mut out = DeviceBuffer::<[$t; 8]>::zeroed_on(n, &stream).unwrap();
                    launch!(k::block_collectives::<$t>[n.div_ceil(threads), threads, stream](&input, &mut out)).unwrap();
                    let got = out.copy_to_host_sync(&stream).unwrap();
                    let want = reference(&values, threads, &groups(n, threads, false));
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(g, w, "{} threads a block, thread {i}", threads);
                    }
                }
            }
        }
    )*};
}
typed_tests!(u32, i32, f32, u64, i64, f64);

#[test]
fn warp_collectives_combine_in_lane_order_with_closures() {
    let stream = Stream::new().unwrap();
    for threads in BLOCKS {
        let n = threads * 2 + 3;
        let values: Vec<u32> = (0..n).map(u32::sample).collect();
        let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
        let mut out = DeviceBuffer::<[u32; 6]>::zeroed_on(n, &stream).unwrap();
        launch!(k::warp_order[n.div_ceil(threads), threads, stream](&input, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        let all = launch_values(&values, threads, 0);
        for (start, end) in groups(n, threads, true) {
            let warp = &all[start..end];
            let or = warp.iter().fold(0, |a, b| a | b);
            let xor = warp.iter().fold(0, |a, b| a ^ b);
            for j in 0..warp.len().min(n.saturating_sub(start)) {
                let previous = if j == 0 { u32::MAX } else { warp[j - 1] };
                let want = [warp[0], warp[warp.len() - 1], warp[j], previous, or, xor];
                assert_eq!(
                    got[start + j],
                    want,
                    "{threads} threads a block, thread {}",
                    start + j
                );
            }
        }
    }
}

/// `x -> a x + b` after `x -> a' x + b'`, as the kernel composes them.
fn compose(first: u64, then: u64) -> u64 {
    let (a1, b1) = ((first >> 32) as u32, first as u32);
    let (a2, b2) = ((then >> 32) as u32, then as u32);
    let a = a2.wrapping_mul(a1);
    let b = a2.wrapping_mul(b1).wrapping_add(b2);
    (a as u64) << 32 | b as u64
}

#[test]
fn warp_and_block_collectives_need_only_associativity() {
    const IDENTITY: u64 = 1 << 32;
    let stream = Stream::new().unwrap();
    for threads in BLOCKS {
        let n = threads * 2 + 3;
        let values: Vec<u64> = (0..n)
            .map(|i| (u64::sample(i) | 1 << 32) & 0x0000_0fff_ffff_ffff)
            .collect();
        let input = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
        let mut out = DeviceBuffer::<[u64; 6]>::zeroed_on(n, &stream).unwrap();
        launch!(k::affine_compositions[n.div_ceil(threads), threads, stream](&input, &mut out))
            .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        let all = launch_values(&values, threads, IDENTITY);
        let mut want = vec![[0u64; 6]; all.len()];
        for (offset, warps) in [(0, true), (3, false)] {
            for (start, end) in groups(n, threads, warps) {
                let group = &all[start..end];
                let total = group.iter().copied().fold(IDENTITY, compose);
                let mut running = IDENTITY;
                for (j, &v) in group.iter().enumerate() {
                    let exclusive = running;
                    running = compose(running, v);
                    want[start + j][offset..offset + 3]
                        .copy_from_slice(&[total, running, exclusive]);
                }
            }
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{threads} threads a block, thread {i}: [warp reduce, inclusive, exclusive, block reduce, inclusive, exclusive]");
        }
    }
}
