//! π by Monte Carlo with Numba's device random numbers (the
//! `numba_monte_carlo_pi` example): each thread draws points in the unit
//! square from its own generator and counts those inside the quarter disc.

use gpu_device::prelude::*;
use gpu_device::random::Xoroshiro128p;

/// Thread `i` draws `samples` points `(x, y)` (two uniform `f32` each, from
/// `states[i]`) and writes how many have `x² + y² <= 1` to `inside[i]`.
#[kernel]
pub fn count_inside(
    mut states: DisjointSlice<Xoroshiro128p>,
    samples: u32,
    mut inside: DisjointSlice<u64>,
) {
    let i = thread_index();
    if let Some(state) = states.get_mut(i) {
        let mut count = 0u64;
        for _ in 0..samples {
            let x = state.uniform_f32();
            let y = state.uniform_f32();
            if inside_quarter_disc(x, y) {
                count += 1;
            }
        }
        inside.set(i, count);
    }
}

/// Whether `x² + y² <= 1`, computed in `f64`: the squares of `f32` values
/// are exact there, so a fused multiply-add (which the device's compiler
/// may form) gives the same answer as separate operations, and the host's
/// count equals the device's.
#[inline(always)]
pub fn inside_quarter_disc(x: f32, y: f32) -> bool {
    let (x, y) = (x as f64, y as f64);
    x * x + y * y <= 1.0
}

/// The sum of the counts.
#[vectorize(reduce)]
pub fn total(a: u64, b: u64) -> u64 {
    a + b
}
