//! The array operations of `gpu-ops`: sums, element-wise expressions,
//! device-wide scans and matrix products.

mod matmul;
mod scans;
mod sum_and_elementwise;

/// splitmix64, for the tests' inputs.
fn numbers(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}
