// A TMA copy lands only in a tile of its map's element type, box and
// swizzle: the tile's bytes and alignment are what the map's box needs.
use gpu_device::tma::{TensorMap2d, TmaTile};
use gpu_device::wgmma::Swizzle128B;

pub fn another_box(tile: &mut TmaTile<f32, 16, 32>, map: &TensorMap2d<f32, 32, 32>) {
    let _ = tile.load(map, 0, 0).wait();
}

pub fn another_swizzle(
    tile: &mut TmaTile<u16, 16, 64>,
    map: &TensorMap2d<u16, 16, 64, Swizzle128B>,
) {
    let _ = tile.load(map, 0, 0).wait();
}

fn main() {}
