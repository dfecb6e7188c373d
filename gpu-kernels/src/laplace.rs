//! Numba's `test_laplace`: Jacobi relaxation of Laplace's equation on a
//! grid (the `numba_laplace` example). Numba's kernel reduces each block's
//! error in shared memory; here each thread writes its own change, and
//! [`largest`](mod@largest) (`#[vectorize(reduce)]`) reduces them, with no `unsafe`.

use gpu_device::math::Float;
use gpu_device::prelude::*;

/// One Jacobi step: `a_new` is the mean of each interior element's four
/// neighbours in `a` (the border is copied), and `change` is
/// `|a_new - a|` per element. `a`, `a_new` and `change` have one shape.
#[kernel]
pub fn jacobi_relax_core(
    a: &[f64],
    mut a_new: DisjointSlice2d<f64>,
    mut change: DisjointSlice2d<f64>,
) {
    let index = thread_index_2d();
    let grid = Slice2d::with_shape(a, a_new.shape());
    let (row, col) = (index.y(), index.x());
    let (value, delta) = match grid.interior(row, col) {
        Some(n) => {
            let value = 0.25 * (((n.right() + n.left()) + n.up()) + n.down());
            (value, Float::abs(value - n.centre()))
        }
        None => match grid.get(row, col) {
            Some(&border) => (border, 0.0),
            None => return,
        },
    };
    a_new.set(index, value);
    change.set(index, delta);
}

/// The larger of two changes (Numba's `get_max`), reduced over the grid.
#[vectorize(reduce)]
pub fn largest(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}
