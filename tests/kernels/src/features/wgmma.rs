//! Hopper's warpgroup MMA (`gpu_device::wgmma`, sm_90a): one warpgroup's
//! 64 × N product from swizzled shared tiles per launch, for each shape,
//! swizzle and operand type, and the misuses the API refuses at run time.
//! Each thread writes its `N / 2` accumulator elements as `(row, col,
//! value)` triples (an array of [`WGMMA_TRIPLES`] floats, the rest `-1`).

use gpu_device::cp_async::CpAsyncRing;
use gpu_device::half::{bf16, f16};
use gpu_device::mma::{Bf16, F16};
use gpu_device::prelude::*;
use gpu_device::shared::DynamicShared;
use gpu_device::wgmma::{
    self, Accumulator, BOperand, Carried, InFlight, KMajorTile, MnMajorTile, Operand16, Shape,
    Swizzle, Swizzle128B, Swizzle32B, Swizzle64B, Warpgroup, M64N,
};

/// Floats per thread in the kernels' output: 128 triples, N = 256's.
pub const WGMMA_TRIPLES: usize = 3 * 128;

/// `repeats` times `A Bᵀ` (A: 64 × K, B: N × K, row-major, K the swizzle's
/// row), from tiles at slot `offset` (A) and right after it (B) of the
/// dynamic shared memory, B K-major (`MN` false) or MN-major (true: the
/// same B stored transposed), issued as one product and `repeats - 1`
/// more groups (`InFlight::then`) before one wait.
fn product<T: Operand16, S: Swizzle, const N: usize, const MN: bool>(
    a: &[T::Element],
    b: &[T::Element],
    offset: usize,
    repeats: usize,
    smem: &DynamicShared<T::Element>,
    block: Block,
) -> [f32; WGMMA_TRIPLES]
where
    M64N<N>: Shape,
    T::Element: Default,
{
    type Tile<'r, T, S, const R: usize> = KMajorTile<'r, T, S, R>;
    type Mn<'r, T, S, const R: usize> = MnMajorTile<'r, T, S, R>;
    let (a_len, k) = (Tile::<T, S, 64>::ELEMENTS, Tile::<T, S, 64>::K);
    let b_len = Tile::<T, S, N>::ELEMENTS;
    let mut w = block;
    smem.fill(&mut w, |s| {
        if (offset..offset + a_len).contains(&s) {
            let (row, kk) = Tile::<T, S, 64>::coordinates(s - offset);
            a[row * k + kk]
        } else if (offset + a_len..offset + a_len + b_len).contains(&s) {
            let (row, kk) = if MN {
                let (kk, col) = Mn::<T, S, N>::coordinates(s - offset - a_len);
                (col, kk)
            } else {
                Tile::<T, S, N>::coordinates(s - offset - a_len)
            };
            b[row * k + kk]
        } else {
            T::Element::default()
        }
    });
    let phase = wgmma::sync_for_async(w);
    let wg = Warpgroup::of_this_thread();
    let d = if MN {
        // B first: its misuses are the ones reported.
        let tb = Mn::<T, S, N>::new(smem, &phase, offset + a_len);
        let ta = Tile::<T, S, 64>::new(smem, &phase, offset);
        products(&wg, &ta, &tb, repeats).wait(&wg)
    } else {
        let ta = Tile::<T, S, 64>::new(smem, &phase, offset);
        let tb = Tile::<T, S, N>::new(smem, &phase, offset + a_len);
        products(&wg, &ta, &tb, repeats).wait(&wg)
    };
    let mut out = [-1.0; WGMMA_TRIPLES];
    for (i, (row, col, v)) in d.elements().enumerate() {
        out[3 * i] = row as f32;
        out[3 * i + 1] = col as f32;
        out[3 * i + 2] = v;
    }
    out
}

/// `repeats` products of `a` and `b` into one accumulator, in flight.
fn products<'t, T: Operand16, S: Swizzle, B: BOperand<T, S, N>, const N: usize>(
    wg: &Warpgroup,
    a: &'t KMajorTile<'_, T, S, 64>,
    b: &'t B,
    repeats: usize,
) -> InFlight<'t, N>
where
    M64N<N>: Shape,
{
    let mut flight = wg.mma_async(Accumulator::<N>::zero(wg), a, b);
    for _ in 1..repeats {
        flight = flight.then(wg, a, b);
    }
    flight
}

macro_rules! product_kernels {
    ($($(#[$doc:meta])* $name:ident: $elem:ident, $operand:ident, $swizzle:ident, $n:literal, $mn:literal;)*) => {$(
        $(#[$doc])*
        #[kernel(arch = "sm_90a")]
        pub fn $name(
            a: &[$elem],
            b: &[$elem],
            offset: usize,
            repeats: usize,
            mut out: DisjointSlice<[f32; WGMMA_TRIPLES]>,
            smem: DynamicShared<$elem>,
            block: Block,
        ) {
            let i = thread_index();
            out.set(i, product::<$operand, $swizzle, $n, $mn>(a, b, offset, repeats, &smem, block));
        }
    )*};
}

product_kernels! {
    /// m64n64k16 bf16, 128-byte swizzle (K = 64).
    wgmma_bf16_128b_n64: bf16, Bf16, Swizzle128B, 64, false;
    /// m64n128k16 bf16, 128-byte swizzle (K = 64).
    wgmma_bf16_128b_n128: bf16, Bf16, Swizzle128B, 128, false;
    /// m64n256k16 bf16, 128-byte swizzle (K = 64).
    wgmma_bf16_128b_n256: bf16, Bf16, Swizzle128B, 256, false;
    /// m64n128k16 bf16, 64-byte swizzle (K = 32).
    wgmma_bf16_64b_n128: bf16, Bf16, Swizzle64B, 128, false;
    /// m64n64k16 bf16, 32-byte swizzle (K = 16).
    wgmma_bf16_32b_n64: bf16, Bf16, Swizzle32B, 64, false;
    /// m64n128k16 f16, 128-byte swizzle (K = 64).
    wgmma_f16_128b_n128: f16, F16, Swizzle128B, 128, false;
    /// m64n64k16 bf16, B MN-major, 128-byte swizzle (K = 64).
    wgmma_bf16_128b_n64_mn: bf16, Bf16, Swizzle128B, 64, true;
    /// m64n256k16 bf16, B MN-major (four chunks), 128-byte swizzle.
    wgmma_bf16_128b_n256_mn: bf16, Bf16, Swizzle128B, 256, true;
    /// m64n128k16 bf16, B MN-major, 64-byte swizzle (K = 32).
    wgmma_bf16_64b_n128_mn: bf16, Bf16, Swizzle64B, 128, true;
    /// m64n64k16 bf16, B MN-major, 32-byte swizzle (K = 16).
    wgmma_bf16_32b_n64_mn: bf16, Bf16, Swizzle32B, 64, true;
    /// m64n128k16 f16, B MN-major, 128-byte swizzle (K = 64).
    wgmma_f16_128b_n128_mn: f16, F16, Swizzle128B, 128, true;
}

/// A 64 × 64 bf16 product (zeros) with only lanes 0 to 15 of each warp
/// issuing it: refused (a divergent warp). 16 KiB of dynamic shared memory.
#[kernel(arch = "sm_90a")]
pub fn wgmma_in_a_divergent_branch(
    mut out: DisjointSlice<[f32; WGMMA_TRIPLES]>,
    smem: DynamicShared<bf16>,
    block: Block,
) {
    let i = thread_index();
    let mut w = block;
    smem.fill(&mut w, |_| bf16::default());
    let phase = wgmma::sync_for_async(w);
    let wg = Warpgroup::of_this_thread();
    let ta = KMajorTile::<Bf16, Swizzle128B, 64>::new(&smem, &phase, 0);
    let tb = KMajorTile::<Bf16, Swizzle128B, 64>::new(&smem, &phase, 4096);
    let mut t = [0.0; WGMMA_TRIPLES];
    if gpu_device::warp::lane_id() < 16 {
        let d = wg
            .mma_async(Accumulator::<64>::zero(&wg), &ta, &tb)
            .wait(&wg);
        t[0] = d.elements().count() as f32;
    }
    out.set(i, t);
}

/// A 64 × 64 bf16 product (zeros) whose warp 1 passes another B tile (at
/// slot 8192) than the warpgroup's other warps (slot 4096): refused, the
/// warps of a warpgroup issue one `wgmma` together. 24 KiB of dynamic
/// shared memory.
#[kernel(arch = "sm_90a")]
pub fn wgmma_warps_disagree(
    mut out: DisjointSlice<[f32; WGMMA_TRIPLES]>,
    smem: DynamicShared<bf16>,
    block: Block,
) {
    let i = thread_index();
    let mut w = block;
    smem.fill(&mut w, |_| bf16::default());
    let phase = wgmma::sync_for_async(w);
    let wg = Warpgroup::of_this_thread();
    let ta = KMajorTile::<Bf16, Swizzle128B, 64>::new(&smem, &phase, 0);
    let b_slot = if thread_rank() / 32 == 1 { 8192 } else { 4096 };
    let tb = KMajorTile::<Bf16, Swizzle128B, 64>::new(&smem, &phase, b_slot);
    let d = wg
        .mma_async(Accumulator::<64>::zero(&wg), &ta, &tb)
        .wait(&wg);
    let mut t = [0.0; WGMMA_TRIPLES];
    t[0] = d.elements().count() as f32;
    out.set(i, t);
}

/// Each thread's warpgroup index and rank, after a producer's
/// `setmaxnreg.dec` (warpgroup 0) or a consumer's `setmaxnreg.inc` (the
/// others).
#[kernel(arch = "sm_90a")]
pub fn wgmma_roles(mut out: DisjointSlice<[u32; 2]>) {
    let wg = Warpgroup::of_this_thread();
    if wg.index() == 0 {
        wg.lower_register_limit::<40>();
    } else {
        wg.raise_register_limit::<232>();
    }
    out.set(thread_index(), [wg.index() as u32, wg.rank() as u32]);
}

/// Products carried past a ring's wait (`InFlight::carry`), over three
/// k-blocks of a 4-stage ring of 128 rows a stage (64 KiB of dynamic shared
/// memory, 128 threads; the stages' copies copy nothing). `case` 4 is the
/// correct loop (`Carried::then`, `carry`, `Carried::wait`: each thread
/// writes its element count, 32); the others are misuses the ring refuses:
/// 0, a carry on a ring made by `CpAsyncRing::new`; 1, a carried product
/// never retired, then a second wait after its stage; 2, a fill three
/// stages ahead on a ring read asynchronously; 3, a second stage carried
/// while the first still is.
#[kernel(arch = "sm_90a")]
pub fn wgmma_carried_across_waits(
    case: u32,
    mut out: DisjointSlice<f32>,
    smem: DynamicShared<bf16>,
) {
    type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;
    let wg = Warpgroup::of_this_thread();
    let mut ring = if case == 0 {
        CpAsyncRing::<bf16, 4>::new(smem, 128)
    } else {
        CpAsyncRing::<bf16, 4>::with_async_reads(smem, 128)
    };
    ring.fill(|_| {});
    ring.fill(|_| {});
    if case == 2 {
        ring.fill(|_| {});
    }
    let mut carried = Carried::new(Accumulator::<64>::zero(&wg));
    for kb in 0..3 {
        let mut stage = wgmma::wait_stage(&mut ring);
        stage.fill(|_| {});
        let (a, b) = (Tile::from_stage(&stage, 0), Tile::from_stage(&stage, 64));
        if case == 4 {
            carried = carried.then(&wg, &stage, &a, &b).carry(&stage);
        } else {
            let flight = wg.mma_async(Accumulator::<64>::zero(&wg), &a, &b);
            if kb == 0 || case == 3 {
                let _lost = flight.carry(&stage);
            } else {
                let _ = flight.wait(&wg);
            }
        }
    }
    let d = carried.wait(&wg, &ring);
    ring.finish();
    out.set(thread_index(), d.elements().count() as f32);
}

/// A 64-row `KMajorTile` (128-byte swizzle) of the second stage of a
/// 2-stage ring of `stage_rows` rows, from row `first_row`; each thread
/// writes 1 once the tile is made. A stage of 76 rows starts 512 bytes
/// past a multiple of 1024, so its row 4 has an aligned address but the
/// ring's swizzle phase (row 4 of 8) is not the GPU's (row 0): refused,
/// as every `first_row` that is not a multiple of 8 is.
#[kernel(arch = "sm_90a")]
pub fn wgmma_tile_of_a_stage(
    stage_rows: usize,
    first_row: usize,
    mut out: DisjointSlice<f32>,
    smem: DynamicShared<bf16>,
) {
    type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;
    let mut ring = CpAsyncRing::<bf16, 2>::new(smem, stage_rows);
    ring.fill(|_| {});
    wgmma::wait_stage(&mut ring).fill(|_| {});
    {
        let second = wgmma::wait_stage(&mut ring);
        let _tile = Tile::from_stage(&second, first_row);
    }
    ring.finish();
    out.set(thread_index(), 1.0);
}
