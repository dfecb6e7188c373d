// A product in flight borrows its tiles, and they the phase they are read
// in: the block cannot change phase (and write the tiles) before the wait.
use gpu_device::half::bf16;
use gpu_device::mma::Bf16;
use gpu_device::shared::DynamicShared;
use gpu_device::wgmma::{self, Accumulator, KMajorTile, Swizzle128B, Warpgroup};
use gpu_device::Block;

type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;

pub fn written_in_flight(smem: DynamicShared<bf16>, block: Block) {
    let phase = wgmma::sync_for_async(block);
    let wg = Warpgroup::of_this_thread();
    let (a, b) = (Tile::new(&smem, &phase, 0), Tile::new(&smem, &phase, 4096));
    let flight = wg.mma_async(Accumulator::<64>::zero(&wg), &a, &b);
    let mut w = phase.sync();
    smem.set_own(&mut w, 0, bf16::from_f32(1.0));
    let _ = flight.wait(&wg);
}

fn main() {}
