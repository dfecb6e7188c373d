//! `sum`: the total of a device array, as NumPy and CuPy compute it: signed
//! integers accumulate into `i64`, unsigned into `u64` (exactly, wrapping on
//! overflow as NumPy does), floats in their own type.
//!
//! Two passes, so the result is the same on every run: each block of the
//! first pass sums a strided share of the input (16-byte loads, four
//! independent accumulators per thread, then warp shuffles and one shared
//! slot per warp) into its own partial; one block sums the partials.

use gpu_device::prelude::*;
use gpu_device::shared;
use gpu_device::warp::{shfl_xor_sync, Shuffle, FULL_MASK};

/// `N` elements of `T` aligned to 16 bytes: one vector load.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub struct Lanes<T, const N: usize>(pub [T; N]);

/// Element types `sum` accepts, with the type their sum accumulates in.
pub trait SumElement: DeviceCopy {
    /// `i64` for signed integers, `u64` for unsigned ones, the type itself for floats.
    type Acc: SumElement<Acc = Self::Acc> + Shuffle;
    /// 16 bytes of elements.
    type Vector: Copy;
    /// Zero of the accumulator.
    const ZERO: Self::Acc;
    /// The element as an accumulator value.
    fn widen(self) -> Self::Acc;
    /// `a + b` in the accumulator (wrapping for integers).
    fn accumulate(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The sum of one vector's elements.
    fn sum_vector(v: Self::Vector) -> Self::Acc;
}

macro_rules! sum_element {
    ($($t:ty => $acc:ty, $lanes:literal, $zero:expr, $add:expr);* $(;)?) => {$(
        impl SumElement for $t {
            type Acc = $acc;
            type Vector = Lanes<$t, $lanes>;
            const ZERO: $acc = $zero;
            #[inline(always)]
            fn widen(self) -> $acc {
                self as $acc
            }
            #[inline(always)]
            fn accumulate(a: $acc, b: $acc) -> $acc {
                $add(a, b)
            }
            #[inline(always)]
            fn sum_vector(v: Self::Vector) -> $acc {
                // An index loop of constant trip count unrolls into registers;
                // the array's by-value iterator kept the vector in local memory.
                let mut total = $zero;
                let mut i = 0;
                while i < $lanes {
                    total = $add(total, v.0[i] as $acc);
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
/// `input` to `partials[block]`. Launch with a one-dimensional grid, blocks of
/// a multiple of 32 threads, and `block_dim / 32 * size_of::<Acc>()` bytes of
/// dynamic shared memory; any other launch fails (a panic: a trap on the
/// GPU, a report on the simulator), as one writer per partial, full warps
/// and a slot per warp are what make its result right.
#[kernel(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64)]
pub fn sum_partials<T: SumElement>(
    input: &[T],
    mut partials: DisjointSlice<<T as SumElement>::Acc>,
) {
    // SAFETY: `Vector` is `Lanes<T, N>`: N elements of `T` with a larger
    // alignment, so any run of aligned elements is a valid run of vectors.
    let (head, body, tail) = unsafe { input.align_to::<T::Vector>() };
    // The witness of one-dimensional launches (free there; in any other
    // launch it fails): blocks (x, 0) and (x, 1) would both write
    // `partials[x]`.
    let first = thread_index().get();
    let stride = gridsize_1d();
    let per_warp = shared::dynamic::<T::Acc>();
    let threads = block_dim().x;
    if !threads.is_multiple_of(32) {
        not_whole_warps(threads);
    }
    if per_warp.len() < (threads / 32) as usize {
        too_little_shared_memory(threads / 32, core::mem::size_of::<T::Acc>());
    }
    let add = T::accumulate;
    let mut acc = [T::ZERO; 4];
    let mut k = first;
    // Four independent loads in flight per iteration.
    while let Some(last) = k.checked_add(3 * stride).filter(|&last| last < body.len()) {
        // SAFETY: `k < k + stride < k + 2 * stride < last < body.len()`, with no
        // overflow (`last` was computed with a checked add and `stride > 0`).
        unsafe {
            acc[0] = add(acc[0], T::sum_vector(*body.get_unchecked(k)));
            acc[1] = add(acc[1], T::sum_vector(*body.get_unchecked(k + stride)));
            acc[2] = add(acc[2], T::sum_vector(*body.get_unchecked(k + 2 * stride)));
            acc[3] = add(acc[3], T::sum_vector(*body.get_unchecked(last)));
        }
        k = last + stride;
    }
    while k < body.len() {
        acc[0] = add(acc[0], T::sum_vector(body[k]));
        k += stride;
    }
    if let Some(&x) = head.get(first) {
        acc[1] = add(acc[1], x.widen());
    }
    if let Some(&x) = tail.get(first) {
        acc[2] = add(acc[2], x.widen());
    }
    let mut total = add(add(acc[0], acc[1]), add(acc[2], acc[3]));

    let mut lanes = 16;
    while lanes > 0 {
        total = add(total, shfl_xor_sync(FULL_MASK, total, lanes));
        lanes /= 2;
    }
    let (lane, warp) = (thread_idx().x % 32, thread_idx().x / 32);
    if lane == 0 && (warp as usize) < per_warp.len() {
        // SAFETY: in bounds; lane 0 of each warp writes its own slot; the
        // barrier below orders these writes before the reads.
        unsafe { per_warp.write(warp as usize, total) };
    }
    sync_threads();
    if warp == 0 {
        let warps = block_dim().x.div_ceil(32);
        // Nothing writes shared memory after the barrier.
        let mut block_total = if lane < warps && (lane as usize) < per_warp.len() {
            // SAFETY: in bounds, written as `T::Acc` before the barrier.
            unsafe { per_warp.read(lane as usize) }
        } else {
            T::ZERO
        };
        let mut lanes = 16;
        while lanes > 0 {
            block_total = add(block_total, shfl_xor_sync(FULL_MASK, block_total, lanes));
            lanes /= 2;
        }
        let block = block_idx().x as usize;
        if lane == 0 && block < partials.len() {
            // SAFETY: in bounds, and only thread 0 of block `block` writes
            // element `block`.
            unsafe { *partials.get_unchecked_mut(block) = block_total };
        }
    }
}

#[cold]
#[inline(never)]
fn not_whole_warps(threads: u32) -> ! {
    panic!("sum_partials needs blocks of a multiple of 32 threads (its warp sums shuffle over whole warps); this launch has blocks of {threads}")
}

#[cold]
#[inline(never)]
fn too_little_shared_memory(warps: u32, bytes: usize) -> ! {
    panic!(
        "sum_partials needs {} bytes of dynamic shared memory ({warps} warps of {bytes}-byte sums); the launch gave fewer",
        warps as usize * bytes
    )
}

/// The host side of `sum`.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{sum_partials, SumElement};
    use crate::ops::DeviceScalar;
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
        let lanes = std::mem::size_of::<T::Vector>() / std::mem::size_of::<T>();
        let sms = Device::get(stream.device())?.limits().multiprocessor_count as usize;
        let blocks = input
            .len()
            .div_ceil(lanes * THREADS)
            .clamp(1, sms * BLOCKS_PER_SM);
        // Element 0 is the result, elements 1..=blocks the partials.
        // SAFETY: the first launch writes every partial (thread 0 of block `b`
        // writes element `b`, for each of the `blocks` blocks) and the second
        // writes the result, before anything reads them: both are queued on
        // `stream` in that order and nothing else sees `storage` until then.
        let mut storage = unsafe { DeviceBuffer::<T::Acc>::uninitialized(1 + blocks, stream)? };
        let (mut result, mut partials) = storage.view_mut().split_at(1).expect("1 <= 1 + blocks");
        let acc = std::mem::size_of::<T::Acc>();
        launch!(sum_partials[blocks, THREADS, stream, THREADS / 32 * acc](input, partials.reborrow()))?;
        launch!(sum_partials[1, FINAL_THREADS, stream, FINAL_THREADS / 32 * acc](partials.as_view(), result.reborrow()))?;
        Ok(DeviceScalar::from_buffer(storage).expect("storage holds 1 + blocks elements"))
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{sum, sum_on};
