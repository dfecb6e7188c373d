// An MN-major B (B row-major, read transposed) is held to the same shape
// as a K-major one: as many columns as the accumulator, A's swizzle and
// A's element type; and it is a B operand only, never an A.
use gpu_device::mma::{Bf16, F16};
use gpu_device::wgmma::{Accumulator, KMajorTile, MnMajorTile, Swizzle128B, Swizzle64B, Warpgroup};

pub fn b_of_64_columns_for_256(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &MnMajorTile<Bf16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<256>::zero(wg), a, b).wait(wg);
}

pub fn two_swizzles(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &MnMajorTile<Bf16, Swizzle64B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

pub fn two_types(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &MnMajorTile<F16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

pub fn an_mn_major_a(
    wg: &Warpgroup,
    a: &MnMajorTile<Bf16, Swizzle128B, 64>,
    b: &KMajorTile<Bf16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

fn main() {}
