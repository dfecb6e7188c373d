// The descriptors describe the tiles as their types say: A has 64 rows, B
// as many as the accumulator has columns, both the same swizzle (so the
// same K), and only the shapes wgmma has exist.
use gpu_device::mma::{Bf16, F16};
use gpu_device::wgmma::{Accumulator, KMajorTile, Swizzle128B, Swizzle64B, Warpgroup};

pub fn b_of_64_rows_for_128_columns(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &KMajorTile<Bf16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<128>::zero(wg), a, b).wait(wg);
}

pub fn a_of_128_rows(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 128>,
    b: &KMajorTile<Bf16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

pub fn two_swizzles(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &KMajorTile<Bf16, Swizzle64B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

pub fn two_types(
    wg: &Warpgroup,
    a: &KMajorTile<Bf16, Swizzle128B, 64>,
    b: &KMajorTile<F16, Swizzle128B, 64>,
) {
    let _ = wg.mma_async(Accumulator::<64>::zero(wg), a, b).wait(wg);
}

pub fn no_such_shape(wg: &Warpgroup) {
    let _ = Accumulator::<96>::zero(wg);
}

fn main() {}
