//! A hand-written tensor-core kernel (`examples/tensor_cores.rs`): one warp
//! a block, each computing a 16 × 8 tile of `C = A Bᵀ` with
//! `mma.sync.m16n8k16` (bf16 in, f32 accumulation), its fragments loaded
//! straight from global memory. The lane layout of every operand is the
//! fragments' ([`FragmentA`], [`FragmentB`], [`Accumulator`]): safe code
//! cannot give a lane another lane's elements. `gpu_ops::matmul` is the
//! fast path (shared-memory tiles fed by `cp.async`, `ldmatrix`, 256
//! threads a block); this is the smallest kernel that reaches the tensor
//! cores.

use gpu_device::half::bf16;
use gpu_device::mma::{mma, Accumulator, Bf16, FragmentA, FragmentB, WarpTileItems, WarpTiles};
use gpu_device::prelude::*;

/// C's map: one warp a block, one 16 × 8 accumulator a warp.
pub type WarpTile = WarpTiles<1, 1, 1, 1, 1>;

/// `C = A Bᵀ`: A is `m × k`, B is `n × k` (B's rows are C's columns), both
/// row-major, `k` a multiple of 16 and C's `m` and `n` multiples of 16 and
/// 8 (a fragment load past A or B panics, naming the slice). Launch 32
/// threads a block and `(m / 16) · (n / 8)` blocks.
#[kernel(arch = "sm_80", block = 32)]
pub fn mma_bf16_warp_tiles(a: &[bf16], b: &[bf16], k: usize, mut c: DisjointMatrix<f32, WarpTile>) {
    let items = WarpTileItems::mine(&c);
    let (row0, col0) = items.block_origin();
    let mut acc = Accumulator::zero();
    let mut kk = 0;
    while kk < k {
        let fa = FragmentA::<Bf16>::load(&a[row0 * k + kk..], k);
        let fb = FragmentB::<Bf16>::load(&b[col0 * k + kk..], k);
        acc = mma(&fa, &fb, acc);
        kk += 16;
    }
    c.set_accumulator(&items, 0, 0, &acc, |lo, hi| [lo, hi]);
}
