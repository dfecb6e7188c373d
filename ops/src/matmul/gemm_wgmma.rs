//! Issue #22's Hopper GEMM in Rust: `C = A Bᵀ`, bf16 in, f32 accumulation
//! in `wgmma`, bf16 out, with no `unsafe` (and `gemm_f16_wgmma`, the same
//! body for f16). The operands are fed as in
//! [`gemm_tc`](super::gemm_tc) (its loads, shared): a block tile of
//! 128 × 256 × 64 and a [`CpAsyncRing`] of 4 stages, each A's 128 rows
//! then B's 256 rows of 128 bytes, swizzled as the 128-byte swizzle of
//! `wgmma` is. The block's 256 threads are two warpgroups, each computing
//! 64 × 256 of the tile with one `wgmma.m64n256k16` per K = 16 (4 a
//! k-block) straight from the landed stage (no `ldmatrix`): wait for stage
//! `kb` ([`wgmma::wait_stage`], fenced for the async proxy), fill stage
//! `kb + 2`, issue the k-block's products and wait for k-block `kb - 1`'s
//! ([`Carried::then`]: `wgmma.wait_group 1`), so that the tensor cores run
//! k-block `kb - 1` while stage `kb` is waited for and `kb + 2` queued. The
//! ring is made by [`CpAsyncRing::with_async_reads`]: a stage is refilled
//! only once every thread's products reading it are done.
//!
//! The CUDA C twin (`benches/cuda/gemm_tc`'s wgmma kernel) loads with TMA
//! from a producer warpgroup, its consumers waiting per stage on
//! `mbarrier`s; here every thread issues its own `cp.async` copies and the
//! block meets at one barrier a k-block. A and
//! B as in [`gemm_tc`](super::gemm_tc); launch [`GEMM_WGMMA_THREADS`]
//! threads a block, [`gemm_tc_blocks`](super::gemm_tc::gemm_tc_blocks)
//! blocks and [`GEMM_TC_SHARED_BYTES`] bytes of dynamic shared memory.

use super::gemm_tc::{
    load_k_block, GemmElement, Operands, GEMM_TC_BM, GEMM_TC_SHARED_BYTES, GEMM_TC_STAGES,
    STAGE_ROWS,
};
use gpu_device::cp_async::CpAsyncRing;
use gpu_device::half::{bf16, f16};
use gpu_device::mma::{WarpTileItems, WarpTiles};
use gpu_device::prelude::*;
use gpu_device::wgmma::{
    self, Accumulator, Carried, KMajorTile, Operand16, Swizzle128B, Warpgroup,
};

/// The output map: 8 warps of 16 × 256 (a warpgroup's four warps its
/// 64 rows), 16 tile rows a group, as [`gemm_tc`](super::gemm_tc)'s tiles.
pub type GemmWgmmaTiles = WarpTiles<8, 1, 1, 32, 16>;
/// Threads a block: two warpgroups.
pub const GEMM_WGMMA_THREADS: u32 = 256;
/// Dynamic shared memory a launch needs (as the `mma.sync` GEMM's).
pub const GEMM_WGMMA_SHARED_BYTES: usize = GEMM_TC_SHARED_BYTES;

/// `C = A Bᵀ` (see the [module](self)).
#[kernel(arch = "sm_90a", block = 256, launch_bounds = (256, 1))]
pub fn gemm_bf16_wgmma(
    a: &[bf16],
    b: &[bf16],
    k: usize,
    lda: usize,
    ldb: usize,
    mut c: DisjointMatrix<bf16, GemmWgmmaTiles>,
    smem: DynamicShared<bf16>,
) {
    wgmma_gemm(a, b, k, [lda, ldb], &mut c, smem);
}

/// `C = A Bᵀ` of f16 (see the [module](self)).
#[kernel(arch = "sm_90a", block = 256, launch_bounds = (256, 1))]
pub fn gemm_f16_wgmma(
    a: &[f16],
    b: &[f16],
    k: usize,
    lda: usize,
    ldb: usize,
    mut c: DisjointMatrix<f16, GemmWgmmaTiles>,
    smem: DynamicShared<f16>,
) {
    wgmma_gemm(a, b, k, [lda, ldb], &mut c, smem);
}

/// The kernels' body, for either element type.
#[inline(always)]
fn wgmma_gemm<E: GemmElement>(
    a: &[E],
    b: &[E],
    k: usize,
    [lda, ldb]: [usize; 2],
    c: &mut DisjointMatrix<'_, E, GemmWgmmaTiles>,
    smem: DynamicShared<E>,
) where
    E::Operand: Operand16,
{
    let items = WarpTileItems::mine(c);
    let dims = [c.rows(), c.cols()];
    let o = Operands::new([a, b], k, [lda, ldb], dims, items.block_origin());
    // Two stages ahead: the third is read by the products in flight.
    let mut ring = CpAsyncRing::<E, GEMM_TC_STAGES>::with_async_reads(smem, STAGE_ROWS);
    ring.fill(|stage| load_k_block(stage, 0, &o));
    ring.fill(|stage| load_k_block(stage, 1, &o));

    let wg = Warpgroup::of_this_thread();
    let mut acc = Carried::new(Accumulator::<256>::zero(&wg));
    for kb in 0..o.k_blocks {
        let mut stage = wgmma::wait_stage(&mut ring);
        stage.fill(|next| load_k_block(next, kb + GEMM_TC_STAGES - 2, &o));
        let ta = KMajorTile::<E::Operand, Swizzle128B, 64>::from_stage(&stage, 64 * wg.index());
        let tb = KMajorTile::<E::Operand, Swizzle128B, 256>::from_stage(&stage, GEMM_TC_BM);
        acc = acc.then(&wg, &stage, &ta, &tb).carry(&stage);
    }
    let acc = acc.wait(&wg, &ring);
    ring.finish();
    // Written out: a tile index known at compile time keeps the
    // accumulator in registers.
    macro_rules! store {
        ($($j:literal)*) => { $( c.set_accumulator(&items, 0, $j, &acc.tile($j), E::round_pair); )* };
    }
    store!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}
