//! Issue #22's `mma.sync` GEMM, the Rust port of
//! `benches/cuda/gemm_tc/mma_sync_gemm.cuh` (`gemm_bf16_mma_sync`): `C =
//! A Bᵀ`, bf16 in, f32 accumulation, bf16 out, with the same design and no
//! `unsafe`; and its f16 twin, `gemm_f16_mma_sync` (the same body, for
//! [`GemmElement`] `f16`):
//!
//! - a block tile of 128 × 256 × 64, 256 threads as 2 × 4 warps of 64 × 64
//!   (4 × 8 accumulators of 16 × 8 a lane), one block per tile on a 1-D
//!   grid in the grouped order (16 tile rows a group): [`GemmTiles`];
//! - a [`CpAsyncRing`] of 4 stages, each A's 128 rows then B's 256 rows of
//!   128 bytes (64 bf16 of K), XOR-swizzled; chunk `t + 256 q` of a stage
//!   is thread `t`'s: 4 chunks of A, 8 of B, each cut to the elements left
//!   in K and zero past M or N;
//! - one wait (and barrier) a k-block: wait for stage `kb`, fill stage `kb
//!   + 3`, then 4 steps of K = 16 over stage `kb`: 4 `ldmatrix.x4` of A, 4
//!   of B (two n-tiles each), 32 `mma.sync.m16n8k16`, with one convergence
//!   check for the four steps ([`mma_stage_steps`]).
//!
//! A is `m × k` with rows `lda` apart, B is `n × k` with rows `ldb` apart
//! (both multiples of 8 elements, so that every 16-byte chunk is aligned,
//! and at least `k`; checked once, before any copy, by
//! [`CpAsyncSource::matrix`]: a panic otherwise), C is `m × n`. Each copy
//! then checks only which of its elements are inside A or B (its source
//! size, 0 to 16 bytes, the rest zero-filled by `cp.async`), and C is
//! stored in `bf16` pairs where aligned. Launch
//! [`GEMM_TC_THREADS`] threads a block, [`gemm_tc_blocks`] blocks and
//! [`GEMM_TC_SHARED_BYTES`] bytes of dynamic shared memory.

use gpu_device::cp_async::{CpAsyncMatrix, CpAsyncRing, CpAsyncSource, OwnChunks, StageFill};
use gpu_device::half::{bf16, bf16x2, f16, f16x2};
use gpu_device::mma::{
    mma_stage_steps, Accumulator, Bf16, SixteenBit, WarpTileItems, WarpTiles, F16,
};
use gpu_device::prelude::*;
use gpu_device::shared::SharedElement;

/// The 16-bit types the tensor-core GEMMs multiply, `bf16` and `f16`: each
/// with its `mma` (and `wgmma`) operand type and its rounding of an f32
/// result. Sealed.
pub trait GemmElement: SharedElement + Copy + private::Sealed {
    /// The operand type of these elements ([`Bf16`], [`F16`]).
    type Operand: SixteenBit<Element = Self>;
    /// `lo` and `hi` rounded to the nearest elements, by one instruction
    /// for both (an epilogue's adjacent pair: `cvt.rn.bf16x2.f32`).
    fn round_pair(lo: f32, hi: f32) -> [Self; 2];
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
}

impl GemmElement for bf16 {
    type Operand = Bf16;
    #[inline(always)]
    fn round_pair(lo: f32, hi: f32) -> [bf16; 2] {
        bf16x2::from_f32s(lo, hi).to_array()
    }
}

impl GemmElement for f16 {
    type Operand = F16;
    #[inline(always)]
    fn round_pair(lo: f32, hi: f32) -> [f16; 2] {
        f16x2::from_f32s(lo, hi).to_array()
    }
}

/// The output map: 2 × 4 warps of 4 × 8 accumulators (128 × 256 a block),
/// 16 tile rows a group (the twin's `group_for` on a 132-SM H100 or H200).
pub type GemmTiles = WarpTiles<2, 4, 4, 8, 16>;
/// Rows of A in a block's tile.
pub const GEMM_TC_BM: usize = 128;
/// Rows of B (columns of C) in a block's tile.
pub const GEMM_TC_BN: usize = 256;
/// K of a k-block: one 128-byte row of bf16.
pub const GEMM_TC_BK: usize = 64;
/// The ring's stages.
pub const GEMM_TC_STAGES: usize = 4;
/// Threads a block.
pub const GEMM_TC_THREADS: u32 = 256;
/// Rows of a stage: A's, then B's (public, as the next two items, for the
/// test crate's `wgmma` GEMM, which shares these loads).
pub const STAGE_ROWS: usize = GEMM_TC_BM + GEMM_TC_BN;
/// Dynamic shared memory a launch needs: 4 stages of 384 rows of 128 bytes.
pub const GEMM_TC_SHARED_BYTES: usize = GEMM_TC_STAGES * STAGE_ROWS * 128;

/// The blocks of a launch for an `m × n` result: one per tile.
pub fn gemm_tc_blocks(m: usize, n: usize) -> u32 {
    (m.div_ceil(GEMM_TC_BM) * n.div_ceil(GEMM_TC_BN)) as u32
}

/// What the copies of a k-block need: the sources, checked once as
/// matrices, and the block's first rows of A and B.
#[derive(Clone, Copy)]
pub struct Operands<'a, E> {
    /// A, `m × k`.
    pub a: CpAsyncMatrix<'a, E>,
    /// B, `n × k`.
    pub b: CpAsyncMatrix<'a, E>,
    /// The block's first row of A.
    pub row_a0: usize,
    /// The block's first row of B.
    pub row_b0: usize,
    /// The k-blocks of K (`k.div_ceil(GEMM_TC_BK)`).
    pub k_blocks: usize,
}

impl<'a, E: Copy> Operands<'a, E> {
    /// A (`m × k`, rows `lda` apart) and B (`n × k`, rows `ldb` apart) of
    /// an `m × n` result, checked once, for the block tile at `origin`.
    #[inline(always)]
    #[track_caller]
    pub fn new(
        [a, b]: [&'a [E]; 2],
        k: usize,
        [lda, ldb]: [usize; 2],
        [m, n]: [usize; 2],
        (row_a0, row_b0): (usize, usize),
    ) -> Self {
        Operands {
            a: CpAsyncSource::new(a).matrix(m, k, lda),
            b: CpAsyncSource::new(b).matrix(n, k, ldb),
            row_a0,
            row_b0,
            k_blocks: k.div_ceil(GEMM_TC_BK),
        }
    }
}

/// Queues this thread's chunk `q` of k-block `kb`: `q < 4` in A's rows,
/// the rest in B's; cut to the elements left in K, zero past M or N.
#[inline(always)]
fn load_chunk<E: SharedElement + Copy>(
    chunks: &mut StageChunks<'_, '_, E>,
    q: usize,
    kb: usize,
    o: &Operands<'_, E>,
) {
    let (row, chunk) = chunks.position(q);
    let col_chunk = kb * (GEMM_TC_BK / 8) + chunk;
    if q < 4 {
        chunks.copy(q, &o.a, o.row_a0 + row, col_chunk);
    } else {
        chunks.copy(q, &o.b, o.row_b0 + row - GEMM_TC_BM, col_chunk);
    }
}

/// A thread's 12 chunks of a stage: 4 of A's 128 rows, 8 of B's 256.
type StageChunks<'f, 's, E> = OwnChunks<'f, 's, E, { GEMM_TC_THREADS as usize }, 12>;

/// Queues this thread's 12 chunks of k-block `kb` (none past the last).
/// Written out (a macro, not `unroll!`'s closure) so that nothing of the
/// pipeline is left to the inliner's judgement.
#[inline(always)]
pub fn load_k_block<E: SharedElement + Copy>(
    stage: &mut StageFill<'_, E>,
    kb: usize,
    o: &Operands<'_, E>,
) {
    if kb < o.k_blocks {
        let mut chunks: StageChunks<'_, '_, E> = stage.chunks();
        macro_rules! chunks {
            ($($q:literal)*) => { $( load_chunk(&mut chunks, $q, kb, o); )* };
        }
        chunks!(0 1 2 3 4 5 6 7 8 9 10 11);
    }
}

/// `C = A Bᵀ` (see the [module](self)).
#[kernel(arch = "sm_80", block = 256, launch_bounds = (256, 1))]
pub fn gemm_bf16_mma_sync(
    a: &[bf16],
    b: &[bf16],
    k: usize,
    lda: usize,
    ldb: usize,
    mut c: DisjointMatrix<bf16, GemmTiles>,
    smem: DynamicShared<bf16>,
) {
    mma_sync_gemm(a, b, k, [lda, ldb], &mut c, smem);
}

/// `C = A Bᵀ` of f16 (see the [module](self)).
#[kernel(arch = "sm_80", block = 256, launch_bounds = (256, 1))]
pub fn gemm_f16_mma_sync(
    a: &[f16],
    b: &[f16],
    k: usize,
    lda: usize,
    ldb: usize,
    mut c: DisjointMatrix<f16, GemmTiles>,
    smem: DynamicShared<f16>,
) {
    mma_sync_gemm(a, b, k, [lda, ldb], &mut c, smem);
}

/// The kernels' body, for either element type.
#[inline(always)]
fn mma_sync_gemm<E: GemmElement>(
    a: &[E],
    b: &[E],
    k: usize,
    [lda, ldb]: [usize; 2],
    c: &mut DisjointMatrix<'_, E, GemmTiles>,
    smem: DynamicShared<E>,
) {
    let items = WarpTileItems::mine(c);
    let (warp_row, warp_col) = items.warp_origin();
    let dims = [c.rows(), c.cols()];
    let o = Operands::new([a, b], k, [lda, ldb], dims, items.block_origin());
    let mut ring = CpAsyncRing::<E, GEMM_TC_STAGES>::new(smem, STAGE_ROWS);
    // The prologue: k-blocks 0 to 2 (a group each, empty past K).
    ring.fill(|stage| load_k_block(stage, 0, &o));
    ring.fill(|stage| load_k_block(stage, 1, &o));
    ring.fill(|stage| load_k_block(stage, 2, &o));

    let mut acc = [[Accumulator::zero(); 8]; 4];
    for kb in 0..o.k_blocks {
        // Stage kb landed (for every thread); stage kb + 3 is free.
        let mut stage = ring.wait();
        stage.fill(|next| load_k_block(next, kb + GEMM_TC_STAGES - 1, &o));
        // 4 steps of K = 16: per step 4 `ldmatrix.x4` of A, 4 of B (two
        // n-tiles each), 32 `mma.sync`; one convergence check for all.
        mma_stage_steps::<E::Operand, 4, GEMM_TC_STAGES, 4, 8>(
            &stage,
            warp_row,
            GEMM_TC_BM + warp_col,
            0,
            &mut acc,
        );
    }
    ring.finish();

    macro_rules! store {
        ($($i:literal)*; $js:tt) => { $( store!(@row $i $js); )* };
        (@row $i:literal ($($j:literal)*)) => {
            $( c.set_accumulator(&items, $i, $j, &acc[$i][$j], E::round_pair); )*
        };
    }
    store!(0 1 2 3; (0 1 2 3 4 5 6 7));
}
