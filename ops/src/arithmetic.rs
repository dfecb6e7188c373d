//! The element-wise kernel behind [`Expr`](super::Expr), and the element types
//! it takes.

use gpu_device::prelude::*;

/// Element types of arithmetic expressions. Integer arithmetic wraps on
/// overflow, as NumPy's does.
pub trait Arithmetic: DeviceCopy {
    /// Zero of the type.
    const ZERO: Self;
    /// `self + other`.
    fn add(self, other: Self) -> Self;
    /// `self - other`.
    fn sub(self, other: Self) -> Self;
    /// `self * other`.
    fn mul(self, other: Self) -> Self;
}

macro_rules! integer_arithmetic {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            const ZERO: Self = 0;
            #[inline(always)] fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)] fn sub(self, other: Self) -> Self { self.wrapping_sub(other) }
            #[inline(always)] fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
        }
    )*};
}
integer_arithmetic!(i32, i64, u32, u64);

macro_rules! float_arithmetic {
    ($($t:ty),*) => {$(
        impl Arithmetic for $t {
            const ZERO: Self = 0.0;
            #[inline(always)] fn add(self, other: Self) -> Self { self + other }
            #[inline(always)] fn sub(self, other: Self) -> Self { self - other }
            #[inline(always)] fn mul(self, other: Self) -> Self { self * other }
        }
    )*};
}
float_arithmetic!(f32, f64);

/// Operand kinds of the `elementwise` kernel.
pub(crate) const ARRAY: u32 = 0;
pub(crate) const BROADCAST: u32 = 1;
pub(crate) const VALUE: u32 = 2;

/// Operations of the `elementwise` kernel.
pub(crate) const MUL_ADD: u32 = 0;
pub(crate) const MUL: u32 = 1;
pub(crate) const ADD: u32 = 2;
pub(crate) const SUB: u32 = 3;
pub(crate) const COPY: u32 = 4;

/// `out[i] = op(x, y, z)` where each operand is an array (`kind` 0, element
/// `i`), a broadcast scalar (`kind` 1, element 0) or a value (`kind` 2).
/// Operations: 0 `x * y + z`, 1 `x * y`, 2 `x + y`, 3 `x - y`, 4 `x`.
#[kernel(i32, i64, u32, u64, f32, f64)]
#[allow(clippy::too_many_arguments)]
pub fn elementwise<T: Arithmetic>(
    op: u32,
    x: &[T],
    x_kind: u32,
    x_value: T,
    y: &[T],
    y_kind: u32,
    y_value: T,
    z: &[T],
    z_kind: u32,
    z_value: T,
    mut out: DisjointSlice<T>,
) {
    let i = thread_index();
    let n = i.get();
    if n >= out.len() {
        return;
    }
    let operand = |slice: &[T], kind: u32, value: T| match kind {
        ARRAY => slice[n],
        BROADCAST => slice[0],
        _ => value,
    };
    let a = operand(x, x_kind, x_value);
    let result = match op {
        COPY => a,
        _ => {
            let b = operand(y, y_kind, y_value);
            match op {
                MUL_ADD => a.mul(b).add(operand(z, z_kind, z_value)),
                MUL => a.mul(b),
                ADD => a.add(b),
                _ => a.sub(b),
            }
        }
    };
    out.set(i, result);
}
