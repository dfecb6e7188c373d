//! Kernels of the codegen controls (`tests/suite/kernels/codegen_controls.rs`): launch
//! bounds, and loops unrolled by `unroll!`.

use gpu_device::prelude::*;

/// Copies `x` to `out`, declared with CUDA's `__launch_bounds__(128, 4)`:
/// PTX `.maxntid 128` and `.minnctapersm 4`; the launcher refuses blocks of
/// more than 128 threads.
#[kernel(launch_bounds = (128, 4))]
pub fn bounded_copy(x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if let Some(v) = x.get(i.get()) {
        out.set(i, *v);
    }
}

/// Filter taps by value: a 5 x 5 filter.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Taps25 {
    /// `w[5 dy + dx]`.
    pub w: [f32; 25],
}

/// `out[i] = sum_k w[k] * x[i + k]` over the 25 taps (0 past the end),
/// the tap loop fully unrolled: 25 multiply-adds in straight-line code,
/// each tap's weight a constant offset into the parameter.
#[kernel]
pub fn taps_unrolled(x: &[f32], taps: Taps25, mut out: DisjointSlice<f32>) {
    let i = thread_index();
    let mut acc = 0.0f32;
    unroll!(for k in 0..25 {
        let v = x.get(i.get() + k).copied().unwrap_or(0.0);
        acc = taps.w[k].mul_add(v, acc);
    });
    out.set(i, acc);
}

/// `out[i] = sum_{k < n} x[i + k]` (0 past the end), the loop over a
/// run-time `n` unrolled by 4.
#[kernel]
pub fn window_sum_unrolled_by_4(x: &[f32], n: u32, mut out: DisjointSlice<f32>) {
    let i = thread_index();
    let mut acc = 0.0f32;
    unroll!(by 4, for k in 0..(n as usize) {
        acc += x.get(i.get() + k).copied().unwrap_or(0.0);
    });
    out.set(i, acc);
}
