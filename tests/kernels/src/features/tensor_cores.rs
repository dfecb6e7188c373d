//! Warp-level MMA (`gpu_device::mma`, sm_80): one warp's tile product per
//! launch, a tiled `A Bᵀ` of one warp per 16 × 8 tile of the result, and
//! the misuses the API refuses at run time. Each thread writes its four
//! accumulator elements as `(row, col, value)` triples.

use gpu_device::cp_async::CpAsyncRing;
use gpu_device::half::{bf16, f16};
use gpu_device::mma::{
    mma, mma_stage_steps, Accumulator, Bf16, FragmentA, FragmentB, Operand, Tf32, F16,
};
use gpu_device::prelude::*;

/// This lane's elements of `d`, as `[row, col, value]` three times four.
fn triples(d: &Accumulator) -> [f32; 12] {
    let mut out = [0.0; 12];
    for (i, (row, col, v)) in d.elements().into_iter().enumerate() {
        out[3 * i] = row as f32;
        out[3 * i + 1] = col as f32;
        out[3 * i + 2] = v;
    }
    out
}

/// `A Bᵀ + C` for one warp: A 16 × K, B 8 × K, C 16 × 8, all row-major.
fn tile<T: Operand>(a: &[T::Element], b: &[T::Element], c: &[f32]) -> [f32; 12] {
    let fa = FragmentA::<T>::load(a, T::K);
    let fb = FragmentB::<T>::load(b, T::K);
    triples(&mma(&fa, &fb, Accumulator::load(c, 8)))
}

/// One m16n8k16 bf16 tile product (launch one warp).
#[kernel(arch = "sm_80")]
pub fn mma_tile_bf16(a: &[bf16], b: &[bf16], c: &[f32], mut out: DisjointSlice<[f32; 12]>) {
    out.set(thread_index(), tile::<Bf16>(a, b, c));
}

/// One m16n8k16 f16 tile product (launch one warp).
#[kernel(arch = "sm_80")]
pub fn mma_tile_f16(a: &[f16], b: &[f16], c: &[f32], mut out: DisjointSlice<[f32; 12]>) {
    out.set(thread_index(), tile::<F16>(a, b, c));
}

/// One m16n8k8 tf32 tile product (launch one warp).
#[kernel(arch = "sm_80")]
pub fn mma_tile_tf32(a: &[f32], b: &[f32], c: &[f32], mut out: DisjointSlice<[f32; 12]>) {
    out.set(thread_index(), tile::<Tf32>(a, b, c));
}

/// `A Bᵀ` (A: m × k, B: n × k, row-major, bf16; m a multiple of 16, n of
/// 8, k of 16): block `i` (one warp) computes the `i`-th 16 × 8 tile of the
/// result, row-major over the tiles, accumulating over k in f32.
#[kernel(arch = "sm_80")]
pub fn mma_tiled_bf16(
    a: &[bf16],
    b: &[bf16],
    n: usize,
    k: usize,
    mut out: DisjointSlice<[f32; 12]>,
) {
    let tiles_across = n / 8;
    let tile = block_idx().x as usize;
    let (tile_row, tile_col) = (tile / tiles_across, tile % tiles_across);
    let mut acc = Accumulator::zero();
    let mut kk = 0;
    while kk < k {
        let fa = FragmentA::<Bf16>::load(&a[tile_row * 16 * k + kk..], k);
        let fb = FragmentB::<Bf16>::load(&b[tile_col * 8 * k + kk..], k);
        acc = mma(&fa, &fb, acc);
        kk += 16;
    }
    let mut t = triples(&acc);
    for e in 0..4 {
        t[3 * e] += (tile_row * 16) as f32;
        t[3 * e + 1] += (tile_col * 8) as f32;
    }
    out.set(thread_index(), t);
}

/// One m16n8k16 bf16 tile product with its operands loaded from dynamic
/// shared memory by `ldmatrix` (launch one warp with `(offset + 384) * 2`
/// bytes): A (16 × 16) at slot `offset`, B (8 × 16) at `offset + 256`.
#[kernel(arch = "sm_80")]
pub fn mma_shared_bf16(
    a: &[bf16],
    b: &[bf16],
    offset: usize,
    mut out: DisjointSlice<[f32; 12]>,
    tile: DynamicShared<bf16>,
    block: Block,
) {
    let mut w = block;
    tile.fill(&mut w, |s| {
        if (offset..offset + 256).contains(&s) {
            a[s - offset]
        } else if (offset + 256..offset + 384).contains(&s) {
            b[s - offset - 256]
        } else {
            bf16::from_f32(0.0)
        }
    });
    let r = w.sync();
    let fa = FragmentA::<Bf16>::load_shared(&tile, &r, offset, 16);
    let fb = FragmentB::<Bf16>::load_shared(&tile, &r, offset + 256, 16);
    out.set(thread_index(), triples(&mma(&fa, &fb, Accumulator::zero())));
}

/// [`mma_shared_bf16`] with the operands stored the other way, loaded by
/// `ldmatrix.trans`: `Aᵀ` (16 × 16, A column-major) at slot `offset`, B
/// (16 × 8, row-major, rows `b_stride` apart) at `offset + 256`; launch
/// one warp with `(offset + 256 + 16 b_stride) * 2` bytes.
#[kernel(arch = "sm_80")]
pub fn mma_shared_trans_bf16(
    a_cols: &[bf16],
    b_rows: &[bf16],
    offset: usize,
    b_stride: usize,
    mut out: DisjointSlice<[f32; 12]>,
    tile: DynamicShared<bf16>,
    block: Block,
) {
    let mut w = block;
    let b_start = offset + 256;
    tile.fill(&mut w, |s| {
        if (offset..b_start).contains(&s) {
            a_cols[s - offset]
        } else if s >= b_start
            && (s - b_start) % b_stride.max(1) < 8
            && (s - b_start) / b_stride.max(1) < 16
        {
            b_rows[(s - b_start) / b_stride.max(1) * 8 + (s - b_start) % b_stride.max(1)]
        } else {
            bf16::from_f32(0.0)
        }
    });
    let r = w.sync();
    let fa = FragmentA::<Bf16>::load_shared_cols(&tile, &r, offset, 16);
    let fb = FragmentB::<Bf16>::load_shared_rows(&tile, &r, b_start, b_stride);
    out.set(thread_index(), triples(&mma(&fa, &fb, Accumulator::zero())));
}

/// Half the warp calls `mma` (lanes 0 to 15): refused.
#[kernel(arch = "sm_80")]
pub fn mma_in_a_divergent_branch(a: &[bf16], b: &[bf16], mut out: DisjointSlice<[f32; 12]>) {
    let i = thread_index();
    let mut t = [0.0; 12];
    if gpu_device::warp::lane_id() < 16 {
        t = tile::<Bf16>(a, b, &[0.0; 128]);
    }
    out.set(i, t);
}

/// Which misuse [`mma_stage_steps_misuse`] makes.
pub const STEPS_IN_A_DIVERGENT_BRANCH: u32 = 0;
/// Two steps from chunk 6: the second step's chunks 8 and 9 are past a row.
pub const STEPS_PAST_THE_ROW: u32 = 1;
/// B's second pair of fragments at rows 32 to 47 of a 32-row stage.
pub const STEPS_PAST_THE_STAGE: u32 = 2;

/// One misuse of [`mma_stage_steps`] (`which`) on a landed stage of 32
/// rows of a 2-stage ring, refused with a panic before any lane reads;
/// launch 32 threads and `2 * 32 * 128` bytes.
#[kernel(arch = "sm_80")]
pub fn mma_stage_steps_misuse(which: u32, mut out: DisjointSlice<f32>, smem: DynamicShared<bf16>) {
    let mut ring = CpAsyncRing::<bf16, 2>::new(smem, 32);
    ring.fill(|_| {});
    let stage = ring.wait();
    let mut acc = [[Accumulator::zero(); 4]; 1];
    match which {
        STEPS_IN_A_DIVERGENT_BRANCH => {
            if gpu_device::warp::lane_id() < 16 {
                let mut two = [[Accumulator::zero(); 2]; 1];
                mma_stage_steps::<Bf16, 1, 2, 1, 2>(&stage, 0, 16, 0, &mut two);
            }
        }
        STEPS_PAST_THE_ROW => {
            let mut two = [[Accumulator::zero(); 2]; 1];
            mma_stage_steps::<Bf16, 2, 2, 1, 2>(&stage, 0, 16, 6, &mut two);
        }
        _ => mma_stage_steps::<Bf16, 1, 2, 1, 4>(&stage, 0, 16, 0, &mut acc),
    }
    ring.finish();
    out.set(thread_index(), acc[0][0].elements()[0].2);
}

/// A tile loaded with a row stride shorter than its row: refused.
#[kernel(arch = "sm_80")]
pub fn mma_with_overlapping_rows(a: &[bf16], b: &[bf16], mut out: DisjointSlice<[f32; 12]>) {
    let fa = FragmentA::<Bf16>::load(a, 8);
    let fb = FragmentB::<Bf16>::load(b, 16);
    out.set(thread_index(), triples(&mma(&fa, &fb, Accumulator::zero())));
}
