//! The bulk tensor store (`gpu_device::tma::TensorMapOut`): block-tiled
//! copies global -> TMA load -> shared -> scaled -> TMA store -> global,
//! each block loading and storing its own box, at ragged edges; a box
//! stored twice in one scope and in two scopes.

use gpu_device::bf16;
use gpu_device::prelude::*;
use gpu_device::tma::{Box2d, Box3d, TensorMap2d, TensorMapNd, TensorMapOut};
use gpu_device::wgmma::Swizzle128B;

/// The box of [`tma_scale_3d`], outermost first.
pub const STORE_BOX_3D: [usize; 3] = [2, 8, 16];
/// The box of [`tma_scale_2d_swizzled`], outermost first.
pub const STORE_BOX_2D: [usize; 2] = [8, 64];

/// Each block's box of `out` (a block past the last box does nothing)
/// written with `factor` times the box of `input` at the same coordinates.
#[kernel(arch = "sm_90")]
pub fn tma_scale_3d(
    input: TensorMapNd<f32, Box3d<2, 8, 16>>,
    out: TensorMapOut<f32, Box3d<2, 8, 16>>,
    factor: f32,
) {
    let Some(mine) = out.block_box() else { return };
    gpu_device::tma_tile!(f32, Box3d<2, 8, 16>).with(|load| {
        gpu_device::tma_tile!(f32, Box3d<2, 8, 16>).with_store(|tile| {
            let landed = load.load_box(&input, mine.coords()).wait();
            tile.store(&mine, |i| landed.at(i) * factor);
        })
    });
}

/// As [`tma_scale_3d`], 2-D `bf16` boxes with the 128-byte swizzle (the
/// store un-swizzles the tile as the load swizzled it).
#[kernel(arch = "sm_90a")]
pub fn tma_scale_2d_swizzled(
    input: TensorMap2d<bf16, 8, 64, Swizzle128B>,
    out: TensorMapOut<bf16, Box2d<8, 64>, Swizzle128B>,
    factor: f32,
) {
    let Some(mine) = out.block_box() else { return };
    let [row, col] = mine.coords();
    gpu_device::tma_tile!(bf16, 8, 64, Swizzle128B).with(|load| {
        gpu_device::tma_tile!(bf16, Box2d<8, 64>, Swizzle128B).with_store(|tile| {
            let landed = load.load(&input, row, col).wait();
            tile.store(&mine, |[r, c]| {
                bf16::from_f32(landed.get(r, c).to_f32() * factor)
            });
        })
    });
}

/// Each block's 16 x 32 box written three times: `1`, then in the same
/// scope `2 + r`, then in a second scope `value(r, c) = 1000 b + 32 r + c`
/// (`b` the block's linear index): the last store is what stays.
#[kernel(arch = "sm_90")]
pub fn tma_store_thrice(out: TensorMapOut<f32, Box2d<16, 32>>) {
    let Some(mine) = out.block_box() else { return };
    let b = (block_idx().x + grid_dim().x * block_idx().y) as f32;
    gpu_device::tma_tile!(f32, Box2d<16, 32>).with_store(|tile| {
        tile.store(&mine, |_| 1.0);
        tile.store(&mine, |[r, _]| 2.0 + r as f32);
    });
    gpu_device::tma_tile!(f32, Box2d<16, 32>).with_store(|tile| {
        tile.store(&mine, |[r, c]| 1000.0 * b + (32 * r + c) as f32);
    });
}
