//! `sum`: the total of a device array, as NumPy and CuPy compute it: signed
//! integers accumulate into `i64`, unsigned into `u64` (exactly, wrapping on
//! overflow as NumPy does), floats in their own type.
//!
//! Two passes, so the result is the same on every run: each block of the
//! first pass sums a grid-stride share of the input (16-byte loads, four
//! independent accumulators per thread, then the block reduction) into its
//! own partial, written by its leader; one block sums the partials. No
//! `unsafe`: the vectors come from `gpu_device::vector`, the reduction from
//! `gpu_device::shared::block_sum`, the one writer per partial from the
//! per-block map `ByBlock`.

use gpu_device::collective::Arithmetic;
use gpu_device::ownership::{ByBlock, GridStride, Items};
use gpu_device::prelude::*;
use gpu_device::shared::{block_sum, ReduceElement};
use gpu_device::vector::{read_run, VectorElement};
use gpu_device::warp::Shuffle;

/// `N` elements of `T`: one 16-byte vector.
pub type Lanes<T, const N: usize> = [T; N];

/// Element types `sum` accepts, with the type their sum accumulates in.
pub trait SumElement: DeviceCopy + VectorElement {
    /// `i64` for signed integers, `u64` for unsigned ones, the type itself for floats.
    type Acc: SumElement<Acc = Self::Acc> + Shuffle + ReduceElement + Arithmetic;
    /// 16 bytes of elements.
    type Vector: Copy;
    /// Zero of the element.
    const ZERO_ELEMENT: Self;
    /// Zero of the accumulator.
    const ZERO: Self::Acc;
    /// The element as an accumulator value.
    fn widen(self) -> Self::Acc;
    /// `a + b` in the accumulator (wrapping for integers).
    fn accumulate(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Vector `v` of `input` (elements `v * N ..`), where it is whole.
    fn vector(input: &[Self], v: usize) -> Option<Self::Vector>;
    /// The sum of one vector's elements.
    fn sum_vector(v: Self::Vector) -> Self::Acc;
    /// The number of elements of a vector.
    const LANES: usize;
}

macro_rules! sum_element {
    ($($t:ty => $acc:ty, $lanes:literal, $zero:expr, $add:expr);* $(;)?) => {$(
        impl SumElement for $t {
            type Acc = $acc;
            type Vector = Lanes<$t, $lanes>;
            const ZERO_ELEMENT: $t = 0 as $t;
            const ZERO: $acc = $zero;
            const LANES: usize = $lanes;
            #[inline(always)]
            fn widen(self) -> $acc {
                self as $acc
            }
            #[inline(always)]
            fn accumulate(a: $acc, b: $acc) -> $acc {
                $add(a, b)
            }
            #[inline(always)]
            fn vector(input: &[$t], v: usize) -> Option<Self::Vector> {
                read_run::<$t, $lanes>(input, v.checked_mul($lanes)?)
            }
            #[inline(always)]
            fn sum_vector(v: Self::Vector) -> $acc {
                // An index loop of constant trip count unrolls into registers;
                // the array's by-value iterator kept the vector in local memory.
                let mut total = $zero;
                let mut i = 0;
                while i < $lanes {
                    total = $add(total, v[i] as $acc);
                    i += 1;
                }
                total
            }
        }
    )*};
}

sum_element! {
    i8 => i64, 16, 0, i64::wrapping_add;
    i16 => i64, 8, 0, i64::wrapping_add;
    i32 => i64, 4, 0, i64::wrapping_add;
    i64 => i64, 2, 0, i64::wrapping_add;
    u8 => u64, 16, 0, u64::wrapping_add;
    u16 => u64, 8, 0, u64::wrapping_add;
    u32 => u64, 4, 0, u64::wrapping_add;
    u64 => u64, 2, 0, u64::wrapping_add;
    f32 => f32, 4, 0.0, |a: f32, b: f32| a + b;
    f64 => f64, 2, 0.0, |a: f64, b: f64| a + b;
}

/// First and second pass of [`sum`]: writes the sum of this block's share of
/// `input` to `partials[block]` (the block's linear index). Any launch shape
/// sums all of `input` into the partials of its blocks: thread `g` of `G`
/// (its linear index in the launch) sums vectors `g, g + G, ...` and the
/// leftover elements past the last whole vector.
#[kernel(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64)]
pub fn sum_partials<T: SumElement>(
    input: &[T],
    mut partials: DisjointSlice<<T as SumElement>::Acc, ByBlock>,
    block: Block,
) {
    let items = Items::<GridStride>::mine();
    let (first, stride) = (items.first(), items.step());
    let vectors = input.len() / T::LANES;
    let add = T::accumulate;
    let mut acc = [T::ZERO; 4];
    let mut k = first;
    // Four independent loads in flight per iteration.
    while let Some(last) = stride
        .checked_mul(3)
        .and_then(|s| k.checked_add(s))
        .filter(|&last| last < vectors)
    {
        // All four below `vectors` (`k < k + stride < k + 2 stride < last`):
        // each is whole.
        let v = [k, k + stride, k + 2 * stride, last].map(|v| T::vector(input, v));
        for (a, v) in acc.iter_mut().zip(v) {
            if let Some(v) = v {
                *a = add(*a, T::sum_vector(v));
            }
        }
        k = last + stride;
    }
    while k < vectors {
        if let Some(v) = T::vector(input, k) {
            acc[0] = add(acc[0], T::sum_vector(v));
        }
        k += stride;
    }
    // The elements past the last whole vector: fewer than a vector's.
    if let Some(&x) = vectors
        .checked_mul(T::LANES)
        .and_then(|tail| first.checked_add(tail))
        .and_then(|i| input.get(i))
    {
        acc[1] = add(acc[1], x.widen());
    }
    let total = add(add(acc[0], acc[1]), add(acc[2], acc[3]));
    let (_r, block_total) = block_sum(block, total);
    if let Some(leader) = block_leader() {
        let block = leader.block();
        if !partials.set(leader, block_total) {
            too_few_partials(block, partials.len());
        }
    }
}

#[cold]
#[inline(never)]
fn too_few_partials(block: usize, len: usize) -> ! {
    panic!("sum_partials: block {block} has no partial to write (the launch has more blocks than `partials` has {len} partials); its sum would be lost")
}

/// The host side of `sum`.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{sum_partials, SumElement};
    use crate::DeviceScalar;
    use gpu_runtime::{launch, Device, DeviceBuffer, Result, Stream};

    const THREADS: usize = 256;
    const FINAL_THREADS: usize = 1024;
    /// Blocks per multiprocessor in the first pass: enough to fill it.
    const BLOCKS_PER_SM: usize = 16;

    /// The sum of `input` on the current stream (CuPy's `cp.sum(a)`), as a device
    /// scalar; the work is queued, not waited for.
    pub fn sum<T>(input: &DeviceBuffer<T>) -> Result<DeviceScalar<T::Acc>>
    where
        T: SumElement + sum_partials::Instance,
        T::Acc: sum_partials::Instance,
    {
        sum_on(input, &gpu_runtime::current_stream()?)
    }

    /// The sum of `input`, queued on `stream`.
    pub fn sum_on<T>(input: &DeviceBuffer<T>, stream: &Stream) -> Result<DeviceScalar<T::Acc>>
    where
        T: SumElement + sum_partials::Instance,
        T::Acc: sum_partials::Instance,
    {
        let lanes = T::LANES;
        let sms = Device::get(stream.device())?.limits().multiprocessor_count as usize;
        let blocks = input
            .len()
            .div_ceil(lanes * THREADS)
            .clamp(1, sms * BLOCKS_PER_SM);
        // Element 0 is the result, elements 1..=blocks the partials: the
        // first launch writes every partial (the leader of block `b` writes
        // element `b`), the second the result.
        let mut storage = DeviceBuffer::<T::Acc>::zeroed_on(1 + blocks, stream)?;
        let (mut result, mut partials) = storage.view_mut().split_at(1).expect("1 <= 1 + blocks");
        launch!(sum_partials[blocks, THREADS, stream](input, partials.reborrow()))?;
        launch!(sum_partials[1, FINAL_THREADS, stream](partials.as_view(), result.reborrow()))?;
        Ok(DeviceScalar::from_buffer(storage).expect("storage holds 1 + blocks elements"))
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{sum, sum_on};
