// One `shared_array!` invocation is one array under one symbol. In a
// function generic over the element type it would be one symbol for every
// `T`: on the simulator, `tile::<DeviceAtomic<u32>>()` updated atomically
// while `tile::<u32>()` reads the same bytes is a data race (and two sizes
// under one symbol wrote past an allocation). The device cannot build it
// (its `static` cannot use `T`); the host refuses it just the same.
use gpu_device::prelude::*;
use gpu_device::shared::{Shared, SharedElement};

fn tile<T: SharedElement>() -> Shared<T, 64> {
    shared_array!(T; 64)
}

fn tile_of<const N: usize>() -> Shared<u32, N> {
    shared_array!(u32; N)
}

fn main() {
    let _ = (tile::<u32>, tile::<DeviceAtomic<u32>>, tile_of::<4>);
}
