//! Kernels that exercise one device feature each: indices and witnesses,
//! shared memory, warp shuffles, atomics, parameters passed by value, float
//! math, alignment; and the benchmarks' baselines (`add_unchecked`, `empty`).

use gpu_device::prelude::*;
use gpu_device::warp::{
    lane_id, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync, FULL_MASK,
};
use gpu_device::AtomicElement;

pub mod alignment;
pub mod architectures;
// sm_90's: in the PTX of sm_90a only (the kernels declare it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod cluster;
pub mod collectives;
// sm_80's: in the PTX of sm_80 and sm_90a only (the kernels declare it too).
pub mod constants;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod cp_async;
pub mod grid_sync;
pub mod halves;
// sm_90's: in the PTX of sm_90a only (the kernels declare it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod mbarrier;
// sm_80's: in the PTX of sm_80 and sm_90a only (the kernels declare it too).
pub mod output;
mod scan;
mod shapes;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod tensor_cores;
// sm_90's (the 128-byte swizzle's kernels sm_90a's, with `wgmma`'s swizzle
// types): in the PTX of sm_90a only (the kernels declare it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma;
// As `tma` (its swizzled kernel is sm_90a's).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma_nd;
// As `tma`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma_multicast;
// As `tma`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma_store;
pub mod vector;
pub mod votes;
// sm_90a's: in the PTX of sm_90a only (the kernels declare it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;
pub use scan::{block_scan, SCAN_BLOCK};
pub use shapes::{matrix_read, shaped_fill, transposed_row_sums};

/// Writes each thread's coordinates at its `thread_index_3d()`: the witness's
/// x, y, z, then `grid_3d`'s.
#[kernel]
pub fn coordinates(mut out: DisjointSlice3d<[u32; 6]>) {
    let i = thread_index_3d();
    let (x, y, z) = grid_3d();
    out.set(
        i,
        [
            i.x() as u32,
            i.y() as u32,
            i.z() as u32,
            x as u32,
            y as u32,
            z as u32,
        ],
    );
}

/// Writes `[x, y]` of each thread's `thread_index_2d()` at its element of a
/// `rows x cols` matrix.
#[kernel]
pub fn coordinates_2d(mut out: DisjointSlice2d<[u32; 2]>) {
    let i = thread_index_2d();
    out.set(i, [i.col() as u32, i.row() as u32]);
}

/// Calls `thread_index()` (the one-dimensional witness): in a launch of any
/// other shape this fails, naming `thread_index_2d`.
#[kernel]
pub fn one_dimensional_witness(mut out: DisjointSlice<u32>) {
    let i = thread_index();
    out.set(i, i.get() as u32);
}

/// Calls the unshadowed `gpu_device::thread_index()` from a helper function,
/// which tests the launch's shape on the device.
#[kernel]
pub fn witness_from_helper(mut out: DisjointSlice<u32>) {
    #[inline(never)]
    fn index() -> ThreadIndex {
        gpu_device::thread_index()
    }
    let i = index();
    out.set(i, i.get() as u32 + 1);
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

/// Sums `input` per block through a static shared double buffer, a tree
/// with one barrier a step (as CUDA's `if (t < s) a[t] += a[t + s];
/// __syncthreads();`) and no `unsafe`; `sums[block]` receives the block's
/// sum, written by the block's leader. Any one-dimensional block size up to
/// 256 works: `fill` writes all 256 slots whatever the block's size (zeros
/// past the block's inputs), and the tree starts at half the block size
/// rounded up to a power of two, so each step's sums are over slots that
/// the block's threads wrote.
#[kernel]
pub fn block_sum_static(
    input: &[f32],
    mut sums: DisjointSlice<f32, gpu_device::ownership::ByBlock>,
    block: Block,
) {
    // The inputs are indexed along x: a one-dimensional launch (the witness
    // fails in any other, and costs nothing in the entry point of
    // one-dimensional launches).
    let _one_dimensional = thread_index();
    // Each step reads one array and writes the other: one barrier a step.
    let tile = shared_array!(f32; 256, buffers = 2);
    let mut step = block.alternate();
    let base = block_idx().x as usize * block_dim().x as usize;
    let threads = block_dim().x as usize;
    tile.fill(&mut step, |s| {
        if s < threads {
            input.get(base + s).copied().unwrap_or(0.0)
        } else {
            0.0
        }
    });
    step.sync();
    let t = step.thread_rank();
    let mut stride = threads.next_power_of_two() / 2;
    while stride > 0 {
        if t < stride {
            let sum = tile.get(&step, t) + tile.get(&step, t + stride);
            tile.set_own(&mut step, 0, sum);
        }
        step.sync();
        stride /= 2;
    }
    if let Some(leader) = block_leader() {
        sums.set(leader, tile.get(&step, 0));
    }
}

/// The per-block sums of [`block_sum_static`] by the warp-shuffle block
/// reduction: `sums[block]` receives the sum of the block's inputs.
#[kernel]
pub fn block_sum_shuffles(
    input: &[f32],
    mut sums: DisjointSlice<f32, gpu_device::ownership::ByBlock>,
    block: Block,
) {
    let i = thread_index();
    let value = input.get(i.get()).copied().unwrap_or(0.0);
    let (_r, total) = gpu_device::shared::reduce::block_sum(block, value);
    if let Some(leader) = block_leader() {
        sums.set(leader, total);
    }
}

/// Reverses each block's chunk of `input` through dynamic shared memory: the
/// launch gives `block_dim().x * 4` bytes (or more).
#[kernel]
pub fn reverse_in_blocks(
    input: &[u32],
    mut out: DisjointSlice<u32>,
    tile: DynamicShared<u32>,
    block: Block,
) {
    let mut w = block;
    let n = block_dim().x as usize;
    let base = block_idx().x as usize * n;
    tile.fill(&mut w, |s| input.get(base + s).copied().unwrap_or(0));
    let r = w.sync();
    let t = r.thread_rank();
    out.set(thread_index(), tile.get(&r, n - 1 - t));
}

/// A generic kernel with a shared array of its type parameter: `out[i]` gets
/// the value of the thread `t ^ 1` of its block (`input` reversed in pairs).
#[kernel(f32, u64)]
pub fn swap_pairs<T: DeviceCopy + gpu_device::shared::SharedElement>(
    input: &[T],
    mut out: DisjointSlice<T>,
    block: Block,
) {
    let tile = shared_array!(T; 256);
    let mut w = block;
    let i = thread_index();
    if let Some(&v) = input.get(i.get()) {
        tile.set_own(&mut w, 0, v);
    }
    let r = w.sync();
    let partner = r.thread_rank() ^ 1;
    if i.get() < input.len() && partner < r.size() && (i.get() ^ 1) < input.len() {
        out.set(i, tile.get(&r, partner));
    }
}

/// A const-generic kernel: each block of `TILE` threads writes its block's
/// `input` reversed, through a `shared_array!(u32; TILE)`.
#[kernel(16, 32)]
pub fn reverse_tiles<const TILE: usize>(input: &[u32], mut out: DisjointSlice<u32>, block: Block) {
    let tile = shared_array!(u32; TILE);
    let mut w = block;
    let i = thread_index();
    let base = block_idx().x as usize * TILE;
    tile.fill(&mut w, |s| input.get(base + s).copied().unwrap_or(0));
    let r = w.sync();
    let t = r.thread_rank();
    if t < TILE {
        out.set(i, tile.get(&r, TILE - 1 - t));
    }
}

/// Counts `values` (taken modulo 64) into a shared array of 64 atomic
/// counters, then adds them to `bins`: shared atomics without `unsafe`.
#[kernel]
pub fn shared_counters(values: &[u32], bins: &[DeviceAtomic<u32>], block: Block) {
    let counters = shared_array!(DeviceAtomic<u32>; 64);
    let mut w = block;
    counters.fill(&mut w, |_| DeviceAtomic::new(0));
    let r = w.sync();
    if let Some(&v) = values.get(grid_1d()) {
        counters.get_ref(&r, (v % 64) as usize).fetch_add(1);
    }
    let w = r.sync();
    let mut k = 0;
    while let Some(slot) = w.own_slot(k, 64) {
        let count = counters.own(&w, k).load();
        if count > 0 && slot < bins.len() {
            bins[slot].fetch_add(count);
        }
        k += 1;
    }
}

/// Writes `tile[row][col]` of a 2-D shared array (padded rows) as
/// `row * 100 + col`, then each thread reads the transposed slot: exercises
/// `Shared2d` with any 2-D block shape (`fill` covers every slot).
#[kernel]
pub fn shared_2d_transpose(mut out: DisjointSlice2d<u32>, block: Block) {
    let tile = shared_array!(u32; 8, 8, padding = 1);
    let mut w = block;
    tile.fill(&mut w, |row, col| (row * 100 + col) as u32);
    let r = w.sync();
    let i = thread_index_2d();
    let (row, col) = (i.row() % 8, i.col() % 8);
    // Through `get` and through `row`: the same slot.
    let (a, b) = (tile.get(&r, col, row), tile.row(&r, col)[row]);
    out.set(i, if a == b { a } else { u32::MAX - 1 });
}

/// Reads shared slot `index` of a 64-slot array: out of range, it panics
/// (the simulator reports the kernel, block and thread).
#[kernel]
pub fn shared_read_at(index: usize, mut out: DisjointSlice<u32>, block: Block) {
    let tile = shared_array!(u32; 64);
    let mut w = block;
    tile.fill(&mut w, |s| s as u32);
    let r = w.sync();
    out.set(thread_index(), tile.get(&r, index));
}

/// Threads below `exit_below` return before the phase barrier; the others
/// `sync`: on a GPU the block hangs, the simulator reports it. Threads at
/// `sync_threads` and at a phase barrier never pair.
#[kernel]
pub fn phase_and_threads_barriers(mixed: bool, mut out: DisjointSlice<u32>, block: Block) {
    if mixed && thread_idx().x.is_multiple_of(2) {
        sync_threads();
        out.set(thread_index(), 1);
        return;
    }
    let _r = block.sync();
    out.set(thread_index(), 2);
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

/// `add_kernel` without bounds checks or the witness, written as CUDA C
/// would be: the benchmark's measure of what the safe version costs.
#[kernel]
pub fn add_unchecked(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    // `grid_1d()` as the witness gives it: unique only in one-dimensional
    // launches, where it costs nothing (in other launches it fails).
    let i = thread_index().get();
    if i < c.len() {
        // SAFETY: `i < c.len()`, the three buffers have the same length in the
        // benchmark, and each thread writes only element `i`, its own (the
        // witness's value).
        unsafe { *c.get_unchecked_mut(i) = *a.get_unchecked(i) + *b.get_unchecked(i) };
    }
}

/// Does nothing: for launch-overhead measurements and error tests.
#[kernel]
pub fn empty() {}

/// A `float4`-like value: `#[repr(C, align(16))]`.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C, align(16))]
pub struct Float4 {
    /// x
    pub x: f32,
    /// y
    pub y: f32,
    /// z
    pub z: f32,
    /// w
    pub w: f32,
}

/// `out[i] = v` scaled by `i`: a 16-aligned struct by value and as elements.
#[kernel]
pub fn scale_float4(v: Float4, mut out: DisjointSlice<Float4>) {
    let i = thread_index();
    let s = i.get() as f32;
    out.set(
        i,
        Float4 {
            x: v.x * s,
            y: v.y * s,
            z: v.z * s,
            w: v.w * s,
        },
    );
}

/// Counts the elements of zero-sized `input` and writes them as `()`-like
/// zero-sized values: `count[i] = input.len()`.
#[kernel]
pub fn zero_sized(
    input: &[[u8; 0]],
    mut out: DisjointSlice<[u8; 0]>,
    mut count: DisjointSlice<u32>,
) {
    let i = thread_index();
    out.set(i, []);
    count.set(i, input.len() as u32 + out.len() as u32 * 1000);
}

/// 32 bytes aligned to 32: a shared element with an alignment above 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C, align(32))]
pub struct Aligned32(pub [u32; 8]);

// SAFETY: eight `u32`s with no padding (the alignment equals the size):
// every bit pattern is valid and all-zero is valid.
unsafe impl bytemuck::Zeroable for Aligned32 {}
// SAFETY: as above.
unsafe impl bytemuck::AnyBitPattern for Aligned32 {}

/// Each thread writes the misalignment (address modulo 32) of its slot in
/// the dynamic shared array of `Aligned32`, and of the raw escape hatch's
/// view, and the number of slots: `out[i] = [safe, raw, len]`.
#[kernel]
pub fn dynamic_alignment(
    mut out: DisjointSlice<[u32; 3]>,
    smem: DynamicShared<Aligned32>,
    block: Block,
) {
    let mut w = block;
    let i = thread_index();
    let raw = gpu_device::shared::dynamic::<Aligned32>();
    let len = smem.len() as u32;
    let safe = match w.own_slot(0, smem.len()) {
        Some(_) => {
            let slot: *const Aligned32 = smem.own_mut(&mut w, 0);
            (slot as usize % 32) as u32
        }
        None => 99,
    };
    out.set(i, [safe, (raw.as_mut_ptr() as usize % 32) as u32, len]);
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
