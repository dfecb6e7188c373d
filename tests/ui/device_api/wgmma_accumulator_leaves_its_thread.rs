// An accumulator's elements belong to the thread whose rank in its
// warpgroup placed them: it cannot be shuffled to another lane, sent to
// another thread, stored as device data or shared memory, and a warpgroup
// witness cannot be sent or forged.
use gpu_device::wgmma::{Accumulator, Warpgroup};
use gpu_device::warp::{shfl_sync, FULL_MASK};

pub fn shuffled(acc: Accumulator<64>) {
    let _other = shfl_sync(FULL_MASK, acc, 0);
}

pub fn sent(acc: Accumulator<64>) -> impl Send {
    acc
}

pub fn as_device_data(acc: Accumulator<64>) -> impl gpu_device::DeviceCopy {
    acc
}

pub fn witness_sent(wg: Warpgroup) -> impl Send {
    wg
}

pub fn witness_forged() -> Warpgroup {
    Warpgroup { index: 0, rank: 0 }
}

fn main() {}
