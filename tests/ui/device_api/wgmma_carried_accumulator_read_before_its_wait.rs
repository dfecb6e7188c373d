// A carried product borrows nothing, so its accumulator is out of reach
// altogether: no element, no tile, until `Carried::wait`.
use gpu_device::cp_async::CpAsyncRing;
use gpu_device::half::bf16;
use gpu_device::mma::Bf16;
use gpu_device::shared::DynamicShared;
use gpu_device::wgmma::{self, Accumulator, KMajorTile, Swizzle128B, Warpgroup};

type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;

pub fn read_while_carried(smem: DynamicShared<bf16>) -> f32 {
    let mut ring = CpAsyncRing::<bf16, 4>::with_async_reads(smem, 128);
    ring.fill(|_| {});
    let wg = Warpgroup::of_this_thread();
    let stage = wgmma::wait_stage(&mut ring);
    let (a, b) = (Tile::from_stage(&stage, 0), Tile::from_stage(&stage, 64));
    let carried = wg.mma_async(Accumulator::<64>::zero(&wg), &a, &b).carry(&stage);
    carried.elements().map(|(_, _, v)| v).sum()
}

fn main() {}
