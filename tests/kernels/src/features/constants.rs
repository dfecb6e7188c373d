//! Constant memory (`gpu_device::constant!`), set from the host.

use gpu_device::prelude::*;

gpu_device::constant! {
    /// A five-tap filter.
    pub static TAPS: [f32; 5];
    /// A scale and an offset applied after the filter.
    pub static AFFINE: [f64; 2];
}

/// `out[i] = (sum_k TAPS[k] * x[i + k]) * AFFINE[0] + AFFINE[1]` over the
/// positions where the filter fits.
#[kernel]
pub fn convolve5(x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    let taps = TAPS.get();
    let [scale, offset] = *AFFINE.get();
    if let Some(window) = x.get(i.get()..i.get() + 5) {
        let mut sum = 0.0f32;
        for k in 0..5 {
            sum += taps[k] * window[k];
        }
        out.set(i, (f64::from(sum) * scale + offset) as f32);
    }
}

/// Spins `iterations` rounds, then writes `TAPS[i % 5]`: a kernel that
/// reads the constant late.
#[kernel]
pub fn read_taps_after(iterations: u32, mut out: DisjointSlice<f32>) {
    let i = thread_index();
    let mut state = i.get() as u32;
    for k in 0..iterations {
        state = core::hint::black_box(state.wrapping_mul(1_664_525).wrapping_add(k));
    }
    let tap = TAPS.get()[i.get() % 5];
    out.set(i, if state == u32::MAX { -tap } else { tap });
}
