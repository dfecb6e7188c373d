//! `#[vectorize]` functions of the tests and of the `vectorize` benchmark,
//! with the hand-written kernel the benchmark compares them with.

use gpu_device::prelude::*;

/// `a + b`: Numba's `@vectorize(['float32(float32, float32)'], target='cuda')`
/// example, and the benchmark's element-wise case.
#[vectorize]
pub fn vector_add(a: f32, b: f32) -> f32 {
    a + b
}

/// [`vector_add`](fn@vector_add) written by hand: one thread per element.
#[kernel(len(a >= out), len(b >= out))]
pub fn vector_add_by_hand(a: &[f32], b: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if let Some(o) = out.get_mut(i) {
        let k = i.get();
        *o = a[k] + b[k];
    }
}

/// Three arguments of three types: `a + (b - a) * t`.
#[vectorize]
pub fn lerp(a: f64, b: f64, t: f32) -> f64 {
    a + (b - a) * t as f64
}

/// A complex number, a `DeviceCopy` struct crossing as an element.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
pub struct Complex {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

/// `|z|^2`, of a struct element.
#[vectorize]
pub fn norm_squared(z: Complex) -> f32 {
    z.re * z.re + z.im * z.im
}

/// An argument named as the generated output parameter would be.
#[vectorize]
pub fn shifted(out: i32) -> i32 {
    out.wrapping_add(1)
}

/// Arguments named as the launchers' own parameters and locals, and as the
/// launcher `apply` calls.
#[vectorize]
pub fn hostile_names(stream: f32, grid: f32, block: f32, launch: f32) -> f32 {
    stream + grid * block - launch
}

/// A module whose own `thread_index` and `launch` the generated kernel and
/// launchers must not pick up.
pub mod shadowing {
    /// Not the witness.
    pub fn thread_index() -> usize {
        7
    }

    /// Not a launcher.
    pub fn launch() {}

    /// `a - b`, vectorized beside the names above.
    #[gpu_device::vectorize]
    pub fn difference(a: i64, b: i64) -> i64 {
        a.wrapping_sub(b)
    }
}

/// A private vectorized function, reached through [`square_all`].
#[vectorize]
fn private_square(x: f32) -> f32 {
    x * x
}

/// `private_square` of every element of `x` (host only).
#[cfg(not(target_arch = "nvptx64"))]
pub fn square_all(
    x: &gpu_runtime::DeviceBuffer<f32>,
    stream: &gpu_runtime::Stream,
) -> gpu_runtime::Result<gpu_runtime::DeviceBuffer<f32>> {
    private_square::apply(x, stream)
}

/// The sum, Numba's `@cuda.reduce def sum_reduce(a, b): return a + b`.
#[vectorize(reduce)]
pub fn sum_reduce(a: f64, b: f64) -> f64 {
    a + b
}

/// The wrapping sum of `i64`s (exact, whatever the order).
#[vectorize(reduce)]
pub fn wrapping_sum(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// The larger of two `u32`s.
#[vectorize(reduce)]
pub fn larger(a: u32, b: u32) -> u32 {
    if a > b {
        a
    } else {
        b
    }
}
