//! Issue #22's `mma.sync` GEMM, the Rust port of
//! `benches/cuda/gemm_tc/mma_sync_gemm.cuh` (`gemm_bf16_mma_sync`): `C =
//! A Bᵀ`, bf16 in, f32 accumulation, bf16 out, with the same design and no
//! `unsafe`:
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
//!   of B (two n-tiles each), 32 `mma.sync.m16n8k16`.
//!
//! A is `m × k` with rows `lda` apart, B is `n × k` with rows `ldb` apart
//! (both multiples of 8 elements, so that every 16-byte chunk is aligned; a
//! misaligned copy is a panic), C is `m × n`. Launch
//! [`GEMM_TC_THREADS`] threads a block, [`gemm_tc_blocks`] blocks and
//! [`GEMM_TC_SHARED_BYTES`] bytes of dynamic shared memory.

use gpu_device::cp_async::{CpAsyncRing, CpAsyncSource, StageFill};
use gpu_device::half::bf16;
use gpu_device::mma::{mma, Accumulator, Bf16, FragmentA, FragmentB, WarpTileItems, WarpTiles};
use gpu_device::prelude::*;

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
/// Rows of a stage: A's, then B's.
const STAGE_ROWS: usize = GEMM_TC_BM + GEMM_TC_BN;
/// Dynamic shared memory a launch needs: 4 stages of 384 rows of 128 bytes.
pub const GEMM_TC_SHARED_BYTES: usize = GEMM_TC_STAGES * STAGE_ROWS * 128;

/// The blocks of a launch for an `m × n` result: one per tile.
pub fn gemm_tc_blocks(m: usize, n: usize) -> u32 {
    (m.div_ceil(GEMM_TC_BM) * n.div_ceil(GEMM_TC_BN)) as u32
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
    let items = WarpTileItems::mine(&c);
    let (m, n) = (c.rows(), c.cols());
    let (row_a0, row_b0) = items.block_origin();
    let (warp_row, warp_col) = items.warp_origin();
    let (a, b) = (CpAsyncSource::new(a), CpAsyncSource::new(b));
    let mut ring = CpAsyncRing::<bf16, GEMM_TC_STAGES>::new(smem, STAGE_ROWS);
    let k_blocks = k.div_ceil(GEMM_TC_BK);

    // Thread t's chunks q of k-block kb: q < 4 in A's rows, the rest in B's.
    let load = |stage: &mut StageFill<'_, bf16>, kb: usize| {
        let k0 = kb * GEMM_TC_BK;
        gpu_device::unroll!(for q in 0..12 {
            if let Some((row, chunk)) = stage.own_chunk(q) {
                let gk = k0 + 8 * chunk;
                let (src, global_row, rows, ld) = if q < 4 {
                    (a, row_a0 + row, m, lda)
                } else {
                    (b, row_b0 + row - GEMM_TC_BM, n, ldb)
                };
                let valid = if global_row < rows {
                    k.saturating_sub(gk).min(8)
                } else {
                    0
                };
                let start = if valid > 0 { global_row * ld + gk } else { 0 };
                stage.copy(q, src, start, valid);
            }
        });
    };

    gpu_device::unroll!(for s in 0..3 {
        ring.fill(|stage| {
            if s < k_blocks {
                load(stage, s)
            }
        });
    });

    let mut acc = [[Accumulator::zero(); 8]; 4];
    for kb in 0..k_blocks {
        let mut stage = ring.wait();
        let next = kb + GEMM_TC_STAGES - 1;
        stage.fill(|fill| {
            if next < k_blocks {
                load(fill, next)
            }
        });
        gpu_device::unroll!(for kk in 0..4 {
            let af: [FragmentA<Bf16>; 4] =
                core::array::from_fn(|i| FragmentA::load_stage(&stage, warp_row + 16 * i, 2 * kk));
            let bf: [[FragmentB<Bf16>; 2]; 4] = core::array::from_fn(|p| {
                FragmentB::load_stage_pair(&stage, GEMM_TC_BM + warp_col + 16 * p, 2 * kk)
            });
            gpu_device::unroll!(for i in 0..4 {
                gpu_device::unroll!(for j in 0..8 {
                    acc[i][j] = mma(&af[i], &bf[j / 2][j % 2], acc[i][j]);
                });
            });
        });
    }
    ring.finish();

    gpu_device::unroll!(for i in 0..4 {
        gpu_device::unroll!(for j in 0..8 {
            c.set_accumulator(&items, i, j, &acc[i][j], bf16::from_f32);
        });
    });
}
