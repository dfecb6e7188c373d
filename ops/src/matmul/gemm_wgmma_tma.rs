//! Issue #22's Hopper GEMM on the twin's design, the Rust port of
//! `benches/cuda/gemm_tc/wgmma_gemm.cuh` (one CTA a tile, no cluster):
//! `C = A Bᵀ`, bf16 in, f32 accumulation in `wgmma`, bf16 out, with no
//! `unsafe` (and `gemm_f16_wgmma_tma`, the same body for f16).
//!
//! - A block tile of 128 × 256 × 64 in the grouped order (16 tile rows a
//!   group), 384 threads: two consumer warpgroups, each 64 × 256 of the
//!   tile in one `wgmma.m64n256k16` accumulator (128 f32 a thread), then a
//!   producer warpgroup.
//! - Persistent: block `b` of a grid of `G` computes tiles `b`, `b + G`, ...
//!   ([`WarpTileItems::strided`]), one ring through all of them, so the
//!   producer copies the next tile's k-blocks while the consumers store
//!   the last; launch [`gemm_wgmma_tma_blocks`] blocks (one an SM).
//! - A [`TmaRing`] of 4 stages, each A's 128 rows and B's 256 rows of 64
//!   elements (one k-block), copied by the bulk tensor copy engine with the
//!   128-byte swizzle that `wgmma` reads; the producer's first thread
//!   issues them, each once the consumers handed its stage back; the
//!   consumers multiply from each stage as it lands (4 `wgmma`s), wait for
//!   the k-block before (`wgmma.wait_group 1`) and hand its stage back. No
//!   block barrier in the k-loop.
//! - The producer lowers its register limit to 40 (`setmaxnreg`) and the
//!   consumers raise theirs to 232: 2 × 128 × 232 + 128 × 40 = 64 512 of
//!   the SM's 65 536. (The twin's 24 spilled the producer's 64-bit tile
//!   walk, 80 bytes; at 232 the consumers still spill nothing.)
//!
//! A and B come as tensor maps of `m × k` and `n × k` row-major matrices
//! (boxes of 128 × 64 and 256 × 64 elements, 128-byte swizzle): the copy
//! engine zero-fills what lies past M, N and K, so ragged shapes need no
//! special case until the stores, which [`DisjointMatrix`] bounds. Launch
//! [`GEMM_WGMMA_TMA_THREADS`] threads a block, [`gemm_wgmma_tma_blocks`]
//! blocks (any number computes every tile) and
//! [`GEMM_WGMMA_TMA_SHARED_BYTES`] bytes of dynamic shared memory.

use super::gemm_tc::{GemmElement, GEMM_TC_BK, GEMM_TC_BM, GEMM_TC_BN, GEMM_TC_STAGES};
use gpu_device::half::{bf16, f16};
use gpu_device::mma::{WarpTileItems, WarpTiles};
use gpu_device::prelude::*;
use gpu_device::tma::ring::{KMajor, MnMajor, TmaRing};
use gpu_device::tma::TensorMap2d;
use gpu_device::wgmma::{Accumulator, Carried, Swizzle128B};

/// The output map: the consumers' 8 warps of 16 × 256 (a warpgroup's four
/// warps its 64 rows), then the producer's 4 idle warps; 16 tile rows a
/// group.
pub type GemmWgmmaTmaTiles = WarpTiles<8, 1, 1, 32, 16, 4>;
/// The ring: 4 stages of A's 128 rows and B's 256 (rows of `Bᵀ` for
/// [`KMajor`], columns of B for [`MnMajor`]).
pub type GemmWgmmaTmaRing<O, L = KMajor> =
    TmaRing<O, Swizzle128B, GEMM_TC_STAGES, GEMM_TC_BM, GEMM_TC_BN, L>;
/// Threads a block: two consumer warpgroups and the producer.
pub const GEMM_WGMMA_TMA_THREADS: u32 = 384;
/// Dynamic shared memory a launch needs: the ring's.
pub const GEMM_WGMMA_TMA_SHARED_BYTES: usize =
    GemmWgmmaTmaRing::<gpu_device::mma::Bf16>::SHARED_BYTES;
/// The blocks of a launch for an `m × n` result on a device of `sms`
/// multiprocessors: one a multiprocessor (the ring's shared memory fits one
/// block), or one a tile where there are fewer tiles.
pub fn gemm_wgmma_tma_blocks(m: usize, n: usize, sms: u32) -> u32 {
    super::gemm_tc::gemm_tc_blocks(m, n).min(sms.max(1))
}

/// A's tensor map: boxes of 128 rows of one k-block.
pub type GemmMapA<E> = TensorMap2d<E, GEMM_TC_BM, GEMM_TC_BK, Swizzle128B>;
/// B's tensor map: boxes of 256 rows of one k-block (of `Bᵀ`, `n × k`).
pub type GemmMapB<E> = TensorMap2d<E, GEMM_TC_BN, GEMM_TC_BK, Swizzle128B>;
/// B's tensor map for the `_kn` kernels: boxes of one k-block's 64 rows of
/// 64 columns (of B, `k × n`), four a stage.
pub type GemmMapBKn<E> = TensorMap2d<E, GEMM_TC_BK, GEMM_TC_BK, Swizzle128B>;

/// The kernels' body, for element type `$e`. A macro, not a function both
/// entry points of a kernel (the general one and `__1d`) call: the ring's
/// closure is then one function a caller, which LLVM inlines; shared by
/// two callers it stayed a call, which ptxas serialises the `wgmma`s
/// across (with 1280 bytes of stack).
macro_rules! wgmma_tma_gemm {
    ($e:ty, $major:ty, $a:ident, $b:ident, $k:ident, $c:ident, $smem:ident, |$col:ident, $kc:ident| $b_at:expr) => {{
        type E = $e;
        let (a, b, k, c, smem) = (&$a, &$b, $k, &mut $c, $smem);
        // The copy engine's coordinates are i32 (a tile's origin is below
        // the matrix's extents, at most u32::MAX).
        let Ok(_) = i32::try_from(k) else { past_i32(k) };
        let k_blocks = k.div_ceil(GEMM_TC_BK);
        let shape = (c.rows(), c.cols());
        let ring = GemmWgmmaTmaRing::<<E as GemmElement>::Operand, $major>::new(smem, gpu_device::mbarriers!(9));
        // Both roles inlined into the kernel, always: left a call (as LLVM
        // may, once the consumer's stores grow), ptxas serialises the
        // `wgmma`s across it (C7510).
        ring.with(
            #[inline(always)]
            |mut producer| {
                producer.warpgroup().lower_register_limit::<40>();
                if let Some(mut issuer) = producer.issuer() {
                    let mut i = 0;
                    while let Some((row, col)) = WarpTileItems::<GemmWgmmaTmaTiles>::strided_origin(shape, i) {
                        let (Ok(row), Ok($col)) = (i32::try_from(row), i32::try_from(col)) else {
                            past_i32(k)
                        };
                        for kb in 0..k_blocks {
                            let $kc = (kb * GEMM_TC_BK) as i32;
                            // B's box: (row, column) of `Bᵀ` or of B.
                            let (b_row, b_col) = $b_at;
                            issuer.load(a, row, $kc, b, b_row, b_col);
                        }
                        i += 1;
                    }
                }
            },
            #[inline(always)]
            |mut consumer| {
                consumer.warpgroup().raise_register_limit::<232>();
                let a_row = 64 * consumer.index();
                let mut i = 0;
                while let Some(items) = WarpTileItems::strided(c, i) {
                    let mut acc = Carried::new(Accumulator::<256>::zero(consumer.warpgroup()));
                    for _ in 0..k_blocks {
                        acc = consumer.mma(acc, a_row, 0);
                    }
                    // The producer loads the next tile's stages meanwhile.
                    let acc = consumer.finish(acc);
                    store(c, &items, &acc);
                    i += 1;
                }
            },
        );
    }};
}

/// `C = A Bᵀ` (see the [module](self)).
#[kernel(arch = "sm_90a", block = 384, launch_bounds = (384, 1))]
pub fn gemm_bf16_wgmma_tma(
    a: TensorMap2d<bf16, 128, 64, Swizzle128B>,
    b: TensorMap2d<bf16, 256, 64, Swizzle128B>,
    k: usize,
    mut c: DisjointMatrix<bf16, GemmWgmmaTmaTiles>,
    smem: DynamicShared<bf16>,
) {
    wgmma_tma_gemm!(bf16, KMajor, a, b, k, c, smem, |col, kc| (col, kc));
}

/// `C = A Bᵀ` of f16 (see the [module](self)).
#[kernel(arch = "sm_90a", block = 384, launch_bounds = (384, 1))]
pub fn gemm_f16_wgmma_tma(
    a: TensorMap2d<f16, 128, 64, Swizzle128B>,
    b: TensorMap2d<f16, 256, 64, Swizzle128B>,
    k: usize,
    mut c: DisjointMatrix<f16, GemmWgmmaTmaTiles>,
    smem: DynamicShared<f16>,
) {
    wgmma_tma_gemm!(f16, KMajor, a, b, k, c, smem, |col, kc| (col, kc));
}

/// `C = A B` with B row-major, `k × n` (as `torch.matmul` takes it): the
/// same kernel, B's tile copied as four 64 × 64 boxes of its k-block and
/// read by `wgmma` MN-major ([`MnMajor`]), so B needs no transposed copy.
#[kernel(arch = "sm_90a", block = 384, launch_bounds = (384, 1))]
pub fn gemm_bf16_wgmma_tma_kn(
    a: TensorMap2d<bf16, 128, 64, Swizzle128B>,
    b: TensorMap2d<bf16, 64, 64, Swizzle128B>,
    k: usize,
    mut c: DisjointMatrix<bf16, GemmWgmmaTmaTiles>,
    smem: DynamicShared<bf16>,
) {
    wgmma_tma_gemm!(bf16, MnMajor, a, b, k, c, smem, |col, kc| (kc, col));
}

/// `C = A B` of f16, B row-major (see [`gemm_bf16_wgmma_tma_kn`]).
#[kernel(arch = "sm_90a", block = 384, launch_bounds = (384, 1))]
pub fn gemm_f16_wgmma_tma_kn(
    a: TensorMap2d<f16, 128, 64, Swizzle128B>,
    b: TensorMap2d<f16, 64, 64, Swizzle128B>,
    k: usize,
    mut c: DisjointMatrix<f16, GemmWgmmaTmaTiles>,
    smem: DynamicShared<f16>,
) {
    wgmma_tma_gemm!(f16, MnMajor, a, b, k, c, smem, |col, kc| (kc, col));
}

/// Writes a consumer's accumulator into its rows of the block's tile.
#[inline(always)]
fn store<E: GemmElement>(
    c: &mut DisjointMatrix<'_, E, GemmWgmmaTmaTiles>,
    items: &WarpTileItems<GemmWgmmaTmaTiles>,
    acc: &Accumulator<256>,
) {
    // The warp's 16 × 256 strip checked once (its 32 tiles written out:
    // a tile index known at compile time keeps the accumulator in
    // registers).
    c.set_accumulator_strip(items, 0, |j| acc.tile(j), E::round_pair);
}

#[cold]
#[inline(never)]
#[track_caller]
fn past_i32(k: usize) -> ! {
    panic!("gemm_wgmma_tma: K = {k}, or a tile's origin, is past the copy engine's i32 coordinates")
}
