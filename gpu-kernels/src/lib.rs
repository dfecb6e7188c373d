//! The kernels of the tutorial examples (`examples/*.rs`) and of the
//! runtime's documentation: [`add_kernel`] (the Numba streams tutorial),
//! [`saxpy`], [`fill`], and [`busy`] with [`busy_rounds_lasting`] (the Day 7
//! pipeline's compute stage), and [`numba_toolbox`]'s port of a Numba kernel
//! using `print`, `cuda.fp16`, `syncthreads_count` and a constant array;
//! Numba's Black-Scholes ([`black_scholes`], `#[vectorize]`) and Laplace
//! ([`laplace`]) tests, and π by Monte Carlo with the device random numbers
//! ([`monte_carlo_pi`]), and a hand-written tensor-core kernel
//! ([`tensor_cores`], sm_80). The tests use them too; kernels only the tests
//! and benchmarks use are in `gpu-test-kernels`, and the array operations in
//! `gpu-ops`.
//!
//! Each `#[kernel]` here is a PTX entry point on the device and a module with a
//! typed `launch` function on the host; `build.rs` builds the PTX and
//! [`embed_kernels!`](gpu_device::embed_kernels) embeds it.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]
#![deny(missing_docs)]

use gpu_device::prelude::*;

gpu_device::embed_kernels!();

pub mod black_scholes;
pub mod laplace;
pub mod monte_carlo_pi;
pub mod numba_toolbox;
// sm_80's: in the PTX of sm_80 only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod tensor_cores;

/// `c[i] = a[i] + b[i]`: the kernel of the Numba streams tutorial.
#[kernel]
pub fn add_kernel(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
    let i = thread_index();
    if i.get() < a.len().min(b.len()) {
        c.set(i, a[i.get()] + b[i.get()]);
    }
}

/// `out[i] = a * x[i] + y[i]`.
#[kernel]
pub fn saxpy(a: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if let (Some(o), Some(x), Some(y)) = (out.get_mut(i), x.get(i.get()), y.get(i.get())) {
        *o = a * x + y;
    }
}

/// Fills `out` with `value`.
#[kernel(f32, f64, i32, u32, u64)]
pub fn fill<T: DeviceCopy>(value: T, mut out: DisjointSlice<T>) {
    out.set(thread_index(), value);
}

/// `out[i] = x[i]` put through `rounds` rounds of `v = fma(v, 0.999, 0.001)` (one
/// fused multiply-add, on the GPU and on the simulator alike): a
/// compute-bound kernel whose run time scales with `rounds` (the Day 7
/// pipeline's "compute" stage).
#[kernel]
pub fn busy(x: &[f32], rounds: u32, mut out: DisjointSlice<f32>) {
    let i = thread_index();
    // An index test rather than `x.get(i)`: the `Option<&f32>` would keep a
    // null test of the pointer in the PTX.
    if i.get() < x.len() {
        let mut v = x[i.get()];
        let mut left = rounds;
        // Sixteen rounds per loop trip, as nvcc unrolls the CUDA C version:
        // the kernel is bound by instruction issue, and LLVM's unroll by
        // eight left 8% more loop overhead.
        while left >= 16 {
            let mut k = 0;
            while k < 16 {
                v = v.mul_add(0.999, 0.001);
                k += 1;
            }
            left -= 16;
        }
        while left > 0 {
            v = v.mul_add(0.999, 0.001);
            left -= 1;
        }
        out.set(i, v);
    }
}

/// Rounds of [`busy`] over `x` (into `out`) that take about `target_ms` on
/// `stream`: measured after a warm-up launch (which loads the module), then
/// measured and rescaled once more.
#[cfg(not(target_arch = "nvptx64"))]
pub fn busy_rounds_lasting(
    target_ms: f64,
    x: &gpu_runtime::DeviceBuffer<f32>,
    out: &mut gpu_runtime::DeviceBuffer<f32>,
    stream: &gpu_runtime::Stream,
) -> gpu_runtime::Result<u32> {
    use gpu_runtime::{launch, Event};
    let blocks = x.len().div_ceil(256).max(1);
    let mut rounds = 64u32;
    launch!(busy[blocks, 256, stream](x, rounds, &mut *out))?;
    for _ in 0..2 {
        let start = stream.record()?;
        launch!(busy[blocks, 256, stream](x, rounds, &mut *out))?;
        let end = stream.record()?;
        let ms = Event::elapsed_ms(&start, &end)? as f64;
        rounds = ((rounds as f64 * target_ms / ms.max(1e-6)) as u32).clamp(1, 1 << 20);
    }
    Ok(rounds)
}
