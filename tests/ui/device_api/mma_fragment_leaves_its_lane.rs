// A fragment's elements belong to the lane that loaded it (the layout
// chose them by its lane index): it cannot be shuffled to another lane,
// stored in memory as device data, or read or forged by hand.
use gpu_device::half::bf16;
use gpu_device::mma::{Accumulator, Bf16, FragmentA};
use gpu_device::warp::{shfl_sync, FULL_MASK};

pub fn shuffled(a: &[bf16]) {
    let fa = FragmentA::<Bf16>::load(a, 16);
    let _other_lanes = shfl_sync(FULL_MASK, fa, 0);
}

pub fn as_device_data(acc: Accumulator) -> impl gpu_device::DeviceCopy {
    acc
}

pub fn by_hand(a: &[bf16]) -> [u32; 4] {
    let fa = FragmentA::<Bf16>::load(a, 16);
    fa.regs
}

fn main() {}
