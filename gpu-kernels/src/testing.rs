//! Kernels that exercise one device feature each, for the test suite.

use gpu_device::prelude::*;
use gpu_device::shared::dynamic as dynamic_shared;
use gpu_device::warp::{
    lane_id, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync, FULL_MASK,
};
use gpu_device::AtomicElement;

/// Writes each thread's coordinates: `out[4 * t] = thread_index`, then the
/// grid position x, y, z from `grid_3d`.
#[kernel]
pub fn coordinates(mut out: DisjointSlice<[u32; 4]>) {
    let i = thread_index();
    let (x, y, z) = grid_3d();
    out.set(i, [i.get() as u32, x as u32, y as u32, z as u32]);
}

/// Writes `gridsize_1d()`, `block_dim().x`, `grid_dim().x` and `thread_idx().x`.
#[kernel]
pub fn launch_shape(mut out: DisjointSlice<[u32; 4]>) {
    let i = thread_index();
    out.set(
        i,
        [
            gridsize_1d() as u32,
            block_dim().x,
            grid_dim().x,
            thread_idx().x,
        ],
    );
}

/// Sums `input` per block through static shared memory and a tree of
/// `sync_threads` barriers; `sums[block]` receives the block's sum.
/// Needs blocks of exactly 256 threads.
#[kernel]
pub fn block_sum_static(input: &[f32], mut sums: DisjointSlice<f32>) {
    let tile = shared_array!(f32; 256);
    let t = thread_idx().x as usize;
    let value = input.get(grid_1d()).copied().unwrap_or(0.0);
    // SAFETY: each thread writes its own slot; the barrier below orders the reads.
    unsafe { tile.write(t, value) };
    sync_threads();
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            // SAFETY: slots t and t + stride are written only by thread t in this
            // step, and read by no other thread before the next barrier.
            unsafe {
                let sum = tile.read(t).unwrap_or(0.0) + tile.read(t + stride).unwrap_or(0.0);
                tile.write(t, sum);
            }
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        // SAFETY: after the last barrier no thread writes slot 0.
        let sum = unsafe { tile.read(0) }.unwrap_or(0.0);
        let block = block_idx().x as usize;
        if block < sums.len() {
            // SAFETY: in bounds, and only thread 0 of each block writes `sums[block]`.
            unsafe { *sums.get_unchecked_mut(block) = sum };
        }
    }
}

/// Reverses each block's chunk of `input` through dynamic shared memory: the
/// launch gives `block_dim().x * 4` bytes.
#[kernel]
pub fn reverse_in_blocks(input: &[u32], mut out: DisjointSlice<u32>) {
    let tile = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let n = block_dim().x as usize;
    let base = block_idx().x as usize * n;
    // SAFETY: each thread writes its own slot, then the barrier orders the reads.
    unsafe { tile.write(t, input.get(base + t).copied().unwrap_or(0)) };
    sync_threads();
    // SAFETY: no thread writes shared memory after the barrier.
    let value = unsafe { tile.read(n - 1 - t) }.unwrap_or(u32::MAX);
    out.set(thread_index(), value);
}

/// Per warp: `out[i] = [sum over the warp by shfl_xor, value from lane+1 by
/// shfl_down, value from lane-1 by shfl_up, lane 0's value by shfl]`.
#[kernel]
pub fn warp_shuffles(input: &[i64], mut out: DisjointSlice<[i64; 4]>) {
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(0);
    let mut sum = v;
    let mut m = 16;
    while m > 0 {
        sum += shfl_xor_sync(FULL_MASK, sum, m);
        m /= 2;
    }
    let down = shfl_down_sync(FULL_MASK, v, 1);
    let up = shfl_up_sync(FULL_MASK, v, 1);
    let first = shfl_sync(FULL_MASK, v, 0);
    let _ = lane_id();
    out.set(i, [sum, down, up, first]);
}

/// Every thread adds, mins, maxes, exchanges and compare-and-swaps
/// `values[i]` into `cells`: `cells[0] += v`, `cells[1] = min`, `cells[2] = max`,
/// `cells[3]` takes some thread's value by exchange, `cells[4]` counts the
/// successful compare-and-swaps of `cells[5]` from 0 to 1 (exactly one).
#[kernel(i32, u32, u64, f32, f64)]
pub fn atomics<T: AtomicElement>(values: &[T], cells: &[DeviceAtomic<T>]) {
    let i = thread_index().get();
    let Some(&v) = values.get(i) else { return };
    if cells.len() < 6 {
        return;
    }
    cells[0].fetch_add(v);
    cells[1].fetch_min(v);
    cells[2].fetch_max(v);
    cells[3].swap(v);
    if cells[5].compare_exchange(T::ZERO, T::ONE).is_ok() {
        cells[4].fetch_add(T::ONE);
    }
}

/// Parameters passed by value as a `#[repr(C)]` struct.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Affine {
    /// Multiplies the input.
    pub scale: f32,
    /// Added after scaling.
    pub offset: f32,
    /// Whether to negate the result.
    pub negate: bool,
}

/// `out[i] = ±(p.scale * x[i] + p.offset)`.
#[kernel]
pub fn affine(p: Affine, x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        let y = p.scale * v + p.offset;
        out.set(i, if p.negate { -y } else { y });
    }
}

/// `out[i] = if pick_first { a[i] } else { b[i] }`, then `+ offset` (a `u8`).
#[kernel]
pub fn select(pick_first: bool, offset: u8, a: &[i64], b: &[i64], mut out: DisjointSlice<i64>) {
    let i = thread_index();
    let source = if pick_first { a } else { b };
    if let Some(&v) = source.get(i.get()) {
        out.set(i, v + offset as i64);
    }
}

/// Float math on each `x[i]`: `[sqrt, exp, ln, sin, cos, tanh, floor, powf(x, 1.5)]`.
#[kernel]
pub fn math_f32(x: &[f32], mut out: DisjointSlice<[f32; 8]>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        out.set(
            i,
            [
                Float::sqrt(v),
                FastMath::exp(v),
                FastMath::ln(v),
                FastMath::sin(v),
                FastMath::cos(v),
                FastMath::tanh(v),
                Float::floor(v),
                FastMath::powf(v, 1.5),
            ],
        );
    }
}

/// `f64` math on each `x[i]`: `[sqrt, floor, ceil, mul_add(x, x, 1)]`.
#[kernel]
pub fn math_f64(x: &[f64], mut out: DisjointSlice<[f64; 4]>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        out.set(
            i,
            [
                Float::sqrt(v),
                Float::floor(v),
                Float::ceil(v),
                Float::mul_add(v, v, 1.0),
            ],
        );
    }
}

/// Panics in every thread when `trigger` is 1; otherwise writes `out[i] = i`.
#[kernel]
pub fn panic_if(trigger: u32, mut out: DisjointSlice<u32>) {
    if trigger == 1 {
        panic!("panic_if was asked to panic");
    }
    let i = thread_index();
    out.set(i, i.get() as u32);
}

/// Reads `x[index]` with a bounds check: an index past the end panics.
#[kernel]
pub fn read_at(x: &[u32], index: usize, mut out: DisjointSlice<u32>) {
    out.set(thread_index(), x[index]);
}

/// `add_kernel` without bounds checks or the witness, written as CUDA C
/// would be: the benchmark's measure of what the safe version costs.
#[kernel]
pub fn add_unchecked(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = grid_1d();
    if i < c.len() {
        // SAFETY: `i < c.len()`, the three buffers have the same length in the
        // benchmark, and each thread writes only element `grid_1d()`, its own.
        unsafe { *c.get_unchecked_mut(i) = *a.get_unchecked(i) + *b.get_unchecked(i) };
    }
}

/// Does nothing: for launch-overhead measurements and error tests.
#[kernel]
pub fn empty() {}

/// Threads below `exit_below` return before the block's barrier: on a GPU
/// the block hangs; the simulator reports it. Never launched on a GPU.
#[kernel]
pub fn divergent_barrier(exit_below: u32, mut out: DisjointSlice<u32>) {
    if thread_idx().x < exit_below {
        return;
    }
    sync_threads();
    out.set(thread_index(), 1);
}

/// Threads below `exit_below` return before a full-warp shuffle: undefined
/// on a GPU; the simulator reports it. Never launched on a GPU.
#[kernel]
pub fn shuffle_after_exit(exit_below: u32, mut out: DisjointSlice<u32>) {
    if thread_idx().x < exit_below {
        return;
    }
    let v = gpu_device::warp::shfl_down_sync(gpu_device::warp::FULL_MASK, thread_idx().x, 1);
    out.set(thread_index(), v);
}

/// Panics in thread `thread` of block `block` only.
#[kernel]
pub fn panic_at(block: u32, thread: u32, mut out: DisjointSlice<u32>) {
    if block_idx().x == block && thread_idx().x == thread {
        panic!("thread {thread} of block {block} gave up");
    }
    out.set(thread_index(), 7);
}

/// Thread 0 of each block spins until thread `setter` of the block sets the
/// block's flag, `flags[block]`; then every thread writes 1. With `setter` past
/// the block, nobody sets the flag: on a GPU the block hangs; the simulator
/// reports it. Finishes on GPUs with independent thread scheduling (sm_70+).
#[kernel]
pub fn spin_on_flag(setter: u32, flags: &[DeviceAtomic<u32>], mut out: DisjointSlice<u32>) {
    let Some(flag) = flags.get(block_idx().x as usize) else {
        return;
    };
    if thread_idx().x == setter {
        flag.swap(1);
    }
    if thread_idx().x == 0 {
        while flag.load() == 0 {}
    }
    out.set(thread_index(), 1);
}

/// The threads of each block take turns in reverse order of `thread_idx().x`:
/// each spins until `turns[block]` counts the threads above it, writes the
/// turn it got, then passes the turn on. Thread 0, which the simulator
/// starts first, goes last.
#[kernel]
pub fn take_turns(turns: &[DeviceAtomic<u32>], mut out: DisjointSlice<u32>) {
    let Some(turn) = turns.get(block_idx().x as usize) else {
        return;
    };
    let mine = block_dim().x - 1 - thread_idx().x;
    while turn.load() != mine {}
    out.set(thread_index(), mine);
    turn.fetch_add(1);
}

/// Counts `values` into `bins`: `bins[v % bins.len()] += 1` for each value,
/// in a grid-stride loop (one atomic per value).
#[kernel]
pub fn histogram(values: &[u32], bins: &[DeviceAtomic<u32>]) {
    if bins.is_empty() {
        return;
    }
    let mut i = grid_1d();
    while i < values.len() {
        bins[values[i] as usize % bins.len()].fetch_add(1);
        i += gridsize_1d();
    }
}

/// Thread `looping` of each block runs `rounds` steps of a linear
/// congruential generator, with no device call (`u64::MAX` rounds: about
/// for ever); then every thread writes its generator's value, seeded with its
/// `thread_idx().x`.
#[kernel]
pub fn busy_loop(looping: u32, rounds: u64, mut out: DisjointSlice<u64>) {
    let mut x = thread_idx().x as u64;
    if thread_idx().x == looping {
        let mut i = 0;
        while i < rounds {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            i += 1;
        }
    }
    out.set(thread_index(), x);
}

/// Bytes of [`large_local_array`]'s array: more than the simulator's default
/// stack of 256 KiB per thread.
pub const LARGE_LOCAL_BYTES: usize = 320 * 1024;

/// Keeps a zeroed [`LARGE_LOCAL_BYTES`] array on each thread's stack, writes
/// 7 at index `write_at % len`, then `out[i]` is the byte at `read_at % len`.
/// Never launched on a GPU.
#[kernel]
pub fn large_local_array(write_at: usize, read_at: usize, mut out: DisjointSlice<u32>) {
    let mut a = [0u8; LARGE_LOCAL_BYTES];
    let n = a.len();
    a[write_at % n] = 7;
    out.set(thread_index(), a[read_at % n] as u32);
}
