// A TMA tile is read only through what `Loading::wait` gives back (the
// barrier phase the copy completes), never while the copy is in flight,
// and a landed tile's view ends before the tile's next load.
use gpu_device::tma::{TensorMap2d, TmaTile};

type Tile = TmaTile<f32, 16, 32>;
type Map = TensorMap2d<f32, 16, 32>;

pub fn read_in_flight(tile: &mut Tile, map: &Map) -> f32 {
    let loading = tile.load(map, 0, 0);
    loading.get(0, 0)
}

pub fn read_across_the_next_load(tile: &mut Tile, map: &Map) -> f32 {
    let landed = tile.load(map, 0, 0).wait();
    let next = tile.load(map, 16, 0);
    let v = landed.get(0, 0);
    drop(next);
    v
}

fn main() {}
