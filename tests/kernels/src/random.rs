//! A kernel drawing from Numba's device random numbers
//! (`gpu_device::random`), for the tests and the benchmark's comparison
//! with numba-cuda.

use gpu_device::prelude::*;
use gpu_device::random::Xoroshiro128p;

/// Each thread draws, from its own state and in this order, 4 uniform
/// `f32`, 4 uniform `f64`, 4 normal `f32` and 4 normal `f64` (24 steps), and
/// writes them at its index; its state stays advanced for the next launch.
#[kernel]
pub fn xoroshiro_draws(
    mut states: DisjointSlice<Xoroshiro128p>,
    mut uniform_f32: DisjointSlice<[f32; 4]>,
    mut uniform_f64: DisjointSlice<[f64; 4]>,
    mut normal_f32: DisjointSlice<[f32; 4]>,
    mut normal_f64: DisjointSlice<[f64; 4]>,
) {
    let i = thread_index();
    if let Some(state) = states.get_mut(i) {
        let mut u32s = [0.0f32; 4];
        let mut u64s = [0.0f64; 4];
        let mut n32s = [0.0f32; 4];
        let mut n64s = [0.0f64; 4];
        for x in &mut u32s {
            *x = state.uniform_f32();
        }
        for x in &mut u64s {
            *x = state.uniform_f64();
        }
        for x in &mut n32s {
            *x = state.normal_f32();
        }
        for x in &mut n64s {
            *x = state.normal_f64();
        }
        uniform_f32.set(i, u32s);
        uniform_f64.set(i, u64s);
        normal_f32.set(i, n32s);
        normal_f64.set(i, n64s);
    }
}
