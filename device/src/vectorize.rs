//! What the kernels `#[vectorize]` generates call.
//!
//! An element-wise kernel needs nothing here: one thread per element, each
//! writing its own element of the output through its witness. A reduction
//! (`#[vectorize(reduce)]`, Numba's `@cuda.reduce`) writes one value per
//! block, a pattern the witness does not cover; [`reduce_pass`] holds that
//! write, so the generated code has no `unsafe`.

use crate::shared::reduce::{block_reduce, ReduceElement};
use crate::shared::Block;
use crate::thread::{block_idx, gridsize_1d, thread_index};
use crate::DisjointSlice;

/// One pass of a reduction with `op` (associative and commutative): block
/// `b` writes `op` over its threads' share of `input` to `partials[b]`.
///
/// Thread `t` of the grid combines `input[t]`, `input[t + gridsize]`, ...;
/// so every thread must have an element: launch one-dimensional grids of at
/// most `input.len()` threads (the launcher `#[vectorize(reduce)]`
/// generates does: a first pass over the input, a second of one block over
/// the partials). Any other launch fails (a panic: a trap on the GPU, a
/// report on the simulator) before anything is written.
#[inline(always)]
pub fn reduce_pass<T: ReduceElement>(
    input: &[T],
    mut partials: DisjointSlice<T>,
    block: Block,
    op: impl Fn(T, T) -> T,
) {
    // The checked one-dimensional witness: a grid with a y extent would have
    // two blocks writing `partials[block_idx().x]`.
    let first = thread_index().get();
    let stride = gridsize_1d();
    let Some(&start) = input.get(first) else {
        more_threads_than_elements(input.len())
    };
    let mut acc = start;
    let mut k = first.saturating_add(stride);
    while k < input.len() {
        acc = op(acc, input[k]);
        k = k.saturating_add(stride);
    }
    let (reading, total) = block_reduce(block, acc, &op);
    let b = block_idx().x as usize;
    if reading.thread_rank() == 0 && b < partials.len() {
        // SAFETY: in bounds; the launch is one-dimensional (checked above),
        // so `b` names this block alone, and only its thread of rank 0
        // writes element `b`; nothing else of the launch touches `partials`.
        unsafe { *partials.get_unchecked_mut(b) = total };
    }
}

#[cold]
#[inline(never)]
fn more_threads_than_elements(len: usize) -> ! {
    panic!("a #[vectorize(reduce)] pass needs an element per thread: this launch has more threads than the input's {len} elements (launch it through the generated `reduce` functions)")
}
