//! The twins' block reductions (`block_sum`, `block_max` of
//! `patterns.cu`): an `xor` butterfly in each warp, lane 0 of each warp
//! writes its warp's slot of a per-warp shared array, one barrier, every
//! thread combines the slots. A kernel that reduces twice passes two slot
//! arrays, the second written in the Reading phase, so that each reduction
//! costs one barrier.

use gpu_device::ownership::ByWarp;
use gpu_device::prelude::*;
use gpu_device::shared::{Phase, Shared};
use gpu_device::warp::{shfl_xor_sync, FULL_MASK};

/// The sum over the warp, in every lane (full warps).
#[inline(always)]
pub fn warp_sum(mut x: f32) -> f32 {
    unroll!(for i in 0..5 {
        x += shfl_xor_sync(FULL_MASK, x, 16 >> i);
    });
    x
}

/// The maximum over the warp, in every lane (full warps).
#[inline(always)]
pub fn warp_max(mut x: f32) -> f32 {
    unroll!(for i in 0..5 {
        x = x.max(shfl_xor_sync(FULL_MASK, x, 16 >> i));
    });
    x
}

/// `reduce` over the block (of `WARPS` full warps): each warp's value by
/// `warp`, its slot written by lane 0, one barrier, then every thread
/// folds the slots in order. Returns the token of the next phase.
#[inline(always)]
fn block_reduce<const WARPS: usize, P: Phase>(
    x: f32,
    slots: Shared<f32, WARPS, ByWarp<0>, P>,
    block: Block<P>,
    warp: impl Fn(f32) -> f32,
    fold: impl Fn(f32, f32) -> f32,
) -> (Block<P::Next>, f32) {
    let x = warp(x);
    let mut b = block;
    if let Some(leader) = warp_leader::<0>() {
        slots.set_by(&mut b, leader, x);
    }
    let r = b.sync();
    let s = slots.as_array(&r);
    let mut total = s[0];
    unroll!(for w in 0..WARPS {
        if w > 0 {
            total = fold(total, s[w]);
        }
    });
    (r, total)
}

/// The block's sum (see `block_reduce`); the twin adds the slots from 0.
#[inline(always)]
pub fn block_sum<const WARPS: usize, P: Phase>(
    x: f32,
    slots: Shared<f32, WARPS, ByWarp<0>, P>,
    block: Block<P>,
) -> (Block<P::Next>, f32) {
    block_reduce(x, slots, block, warp_sum, |a, b| a + b)
}

/// The block's maximum (see `block_reduce`).
#[inline(always)]
pub fn block_max<const WARPS: usize, P: Phase>(
    x: f32,
    slots: Shared<f32, WARPS, ByWarp<0>, P>,
    block: Block<P>,
) -> (Block<P::Next>, f32) {
    block_reduce(x, slots, block, warp_max, f32::max)
}
