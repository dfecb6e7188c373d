// A product in flight borrows its tiles, they their stage and the stage the
// ring: the ring hands out no further stage (after which a fill could
// overwrite the one still read) until the product is waited for, or
// carried (`InFlight::carry`), which the ring records.
use gpu_device::cp_async::CpAsyncRing;
use gpu_device::half::bf16;
use gpu_device::mma::Bf16;
use gpu_device::shared::DynamicShared;
use gpu_device::wgmma::{self, Accumulator, KMajorTile, Swizzle128B, Warpgroup};

type Tile<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;

pub fn kept_across_a_wait(smem: DynamicShared<bf16>) {
    let mut ring = CpAsyncRing::<bf16, 4>::with_async_reads(smem, 128);
    ring.fill(|_| {});
    ring.fill(|_| {});
    let wg = Warpgroup::of_this_thread();
    let stage = wgmma::wait_stage(&mut ring);
    let (a, b) = (Tile::from_stage(&stage, 0), Tile::from_stage(&stage, 64));
    let flight = wg.mma_async(Accumulator::<64>::zero(&wg), &a, &b);
    let next = wgmma::wait_stage(&mut ring);
    let _ = flight.wait(&wg);
    drop(next);
}

fn main() {}
