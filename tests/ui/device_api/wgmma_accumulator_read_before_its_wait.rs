// A product in flight holds its accumulator: its elements are read only
// from what `InFlight::wait` gives back (wgmma.wait_group), never before.
use gpu_device::mma::Bf16;
use gpu_device::wgmma::{Accumulator, KMajorTile, Swizzle128B, Warpgroup};

type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;

pub fn read_in_flight(wg: &Warpgroup, a: &Tile, b: &Tile) -> f32 {
    let flight = wg.mma_async(Accumulator::<64>::zero(wg), a, b);
    flight.elements().map(|(_, _, v)| v).sum()
}

pub fn taken_out_by_hand(wg: &Warpgroup, a: &Tile, b: &Tile) -> Accumulator<64> {
    let flight = wg.mma_async(Accumulator::<64>::zero(wg), a, b);
    flight.acc
}

fn main() {}
