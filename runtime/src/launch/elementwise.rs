//! The launch shapes of the kernels `#[vectorize]` generates, and the
//! checks of their arguments.
//!
//! An element-wise kernel runs one thread per element in blocks of
//! [`ELEMENTWISE_BLOCK`] threads: a fixed size rather than the occupancy
//! API's answer, as these kernels use few registers and no shared memory,
//! so 256 threads reach full occupancy on every architecture from sm_70 on,
//! and the grid (`len / 256` blocks) fills the device for any length worth a
//! launch. A reduction runs two passes of one kernel: the first over the
//! input with at most [`REDUCE_BLOCKS_PER_SM`] blocks per multiprocessor,
//! the second of one block over the first's partials.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::Stream;

/// The threads per block of an element-wise launch.
const ELEMENTWISE_BLOCK: usize = 256;
/// The most threads per block of a reduction's passes.
const REDUCE_BLOCK: usize = 256;
/// The most threads of a reduction's second pass (one block).
const REDUCE_FINAL_BLOCK: usize = 1024;
/// The most blocks per multiprocessor of a reduction's first pass.
const REDUCE_BLOCKS_PER_SM: usize = 8;

/// The element count of an element-wise launch over `arguments` (each a
/// name and its element count, inputs then the output): `Ok` when they all
/// agree; otherwise an `InvalidLaunch` error naming the function and the
/// first argument whose length differs from the first's.
#[doc(hidden)]
pub fn elementwise_len(
    function: &'static str,
    arguments: &[(&'static str, usize)],
) -> Result<usize> {
    let Some(&(first, len)) = arguments.first() else {
        return Ok(0);
    };
    match arguments.iter().find(|(_, other)| *other != len) {
        None => Ok(len),
        Some((name, other)) => Err(Error::InvalidLaunch {
            kernel: function,
            reason: format!(
                "argument `{name}` has {other} elements where `{first}` has {len}: a vectorized function's arguments and output have one length"
            ),
        }),
    }
}

/// `Ok` when a reduction's output `out` has the one element it writes;
/// otherwise an `InvalidLaunch` error naming the function and the length.
#[doc(hidden)]
pub fn check_reduce_output(function: &'static str, len: usize) -> Result<()> {
    if len == 1 {
        return Ok(());
    }
    Err(Error::InvalidLaunch {
        kernel: function,
        reason: format!(
            "`out` has {len} elements: a reduction writes one (pass a one-element buffer or view)"
        ),
    })
}

/// The grid and block of an element-wise launch over `len` elements.
#[doc(hidden)]
pub fn elementwise_shape(len: usize) -> (usize, usize) {
    (len.div_ceil(ELEMENTWISE_BLOCK), ELEMENTWISE_BLOCK)
}

/// The two passes of a reduction of `len` elements on `stream`'s device:
/// `(blocks, threads)` of the first pass and the threads of the second (one
/// block over the `blocks` partials). Each pass has at most one thread per
/// element it reads, as `gpu_device::vectorize::reduce_pass` requires. An
/// `InvalidLaunch` error for `len == 0`, which has no value to give (Numba's
/// `reduce` returns its `init` there).
#[doc(hidden)]
pub fn reduce_shape(
    function: &'static str,
    len: usize,
    stream: &Stream,
) -> Result<((usize, usize), usize)> {
    if len == 0 {
        return Err(Error::InvalidLaunch {
            kernel: function,
            reason: "the input is empty: a reduction without an initial value has no result".into(),
        });
    }
    let sms = Device::get(stream.device())?.limits().multiprocessor_count as usize;
    let threads = len.min(REDUCE_BLOCK);
    let blocks = (len / threads).clamp(1, sms.max(1) * REDUCE_BLOCKS_PER_SM);
    Ok(((blocks, threads), blocks.min(REDUCE_FINAL_BLOCK)))
}

#[cfg(test)]
mod tests {
    use super::{elementwise_len, elementwise_shape};

    #[test]
    fn a_length_that_differs_is_refused_naming_it() {
        assert_eq!(
            elementwise_len("f", &[("a", 5), ("b", 5), ("out", 5)]).unwrap(),
            5
        );
        let message = elementwise_len("black_scholes", &[("a", 5), ("b", 4), ("out", 5)])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("`black_scholes`")
                && message.contains("`b` has 4 elements where `a` has 5"),
            "{message}"
        );
    }

    #[test]
    fn a_reduction_writes_exactly_one_element() {
        assert!(super::check_reduce_output("f", 1).is_ok());
        let message = super::check_reduce_output("larger", 2)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("`larger`") && message.contains("`out` has 2 elements"),
            "{message}"
        );
        assert!(super::check_reduce_output("f", 0).is_err());
    }

    #[test]
    fn the_grid_covers_every_element() {
        assert_eq!(elementwise_shape(0), (0, 256));
        assert_eq!(elementwise_shape(1), (1, 256));
        assert_eq!(elementwise_shape(257), (2, 256));
    }
}
