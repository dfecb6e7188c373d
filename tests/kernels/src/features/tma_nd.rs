//! The bulk tensor copy beyond 2-D (`gpu_device::tma::TensorMapNd`): boxes
//! of 1, 3 and 5 dimensions copied into shared tiles and read back element
//! by element, one element a thread (thread `t` reads the box's element of
//! linear index `t`, outermost dimension slowest).

use gpu_device::bf16;
use gpu_device::prelude::*;
use gpu_device::tma::{Box1d, Box3d, Box5d, TensorMapNd};
use gpu_device::wgmma::Swizzle128B;

/// Threads of [`tma_box_1d`]: its box's elements.
pub const BOX_1D: usize = 64;
/// The box of [`tma_box_3d`], outermost first: 256 elements.
pub const BOX_3D: [usize; 3] = [2, 8, 16];
/// The box of [`tma_box_3d_swizzled`], outermost first: 1024 elements.
pub const BOX_3D_SWIZZLED: [usize; 3] = [2, 8, 64];
/// The box of [`tma_box_5d`], outermost first: 256 elements.
pub const BOX_5D: [usize; 5] = [2, 2, 2, 4, 8];

/// The box of 64 elements at `x`.
#[kernel(arch = "sm_90")]
pub fn tma_box_1d(map: TensorMapNd<f32, Box1d<64>>, x: i32, mut out: DisjointSlice<f32>) {
    let t = thread_rank();
    let v = gpu_device::tma_tile!(f32, Box1d<64>)
        .with(|tile| tile.load_box(&map, [x]).wait().at([t % 64]));
    out.set(thread_index(), v);
}

/// The box of 2 x 8 x 16 elements at (`z`, `y`, `x`).
#[kernel(arch = "sm_90")]
pub fn tma_box_3d(
    map: TensorMapNd<f32, Box3d<2, 8, 16>>,
    z: i32,
    y: i32,
    x: i32,
    mut out: DisjointSlice<f32>,
) {
    let t = thread_rank();
    let v = gpu_device::tma_tile!(f32, Box3d<2, 8, 16>).with(|tile| {
        tile.load_box(&map, [z, y, x])
            .wait()
            .at([t / 128 % 2, t / 16 % 8, t % 16])
    });
    out.set(thread_index(), v);
}

/// The box of 2 x 8 x 64 `bf16` at (`z`, `y`, `x`) with the 128-byte
/// swizzle: its rows (of 128 bytes) swizzled across both planes.
#[kernel(arch = "sm_90a")]
pub fn tma_box_3d_swizzled(
    map: TensorMapNd<bf16, Box3d<2, 8, 64>, Swizzle128B>,
    z: i32,
    y: i32,
    x: i32,
    mut out: DisjointSlice<bf16>,
) {
    let t = thread_rank();
    let v = gpu_device::tma_tile!(bf16, Box3d<2, 8, 64>, Swizzle128B).with(|tile| {
        tile.load_box(&map, [z, y, x])
            .wait()
            .at([t / 512 % 2, t / 64 % 8, t % 64])
    });
    out.set(thread_index(), v);
}

/// The box of 2 x 2 x 2 x 4 x 8 elements at (`a`, `b`, `c`, `y`, `x`).
#[kernel(arch = "sm_90")]
pub fn tma_box_5d(
    map: TensorMapNd<f32, Box5d<2, 2, 2, 4, 8>>,
    a: i32,
    b: i32,
    c: i32,
    y: i32,
    x: i32,
    mut out: DisjointSlice<f32>,
) {
    let t = thread_rank();
    let v = gpu_device::tma_tile!(f32, Box5d<2, 2, 2, 4, 8>).with(|tile| {
        tile.load_box(&map, [a, b, c, y, x]).wait().at([
            t / 128 % 2,
            t / 64 % 2,
            t / 32 % 2,
            t / 8 % 4,
            t % 8,
        ])
    });
    out.set(thread_index(), v);
}
