//! The calling convention between `#[kernel]`'s generated code and the
//! runtime: what a launcher hands to a backend. Both backends depend on this
//! module and on nothing else of the runtime.
//!
//! A kernel instance has a PTX entry point (which the CUDA driver runs) and a
//! host entry point (which the CPU simulator runs). Both take one pointer per
//! PTX parameter: a slice as two parameters (address, then length), a matrix
//! (`DisjointSlice2d`) as four (address, element count, rows, columns; `u32`
//! for a `DisjointSlice2dU32`, `usize` otherwise), a
//! 3-D grid as four (address, depth, rows, columns), a scalar or a
//! `DeviceCopy` struct as one.

use std::ffi::c_void;

/// A kernel instance's body as the CPU simulator calls it: `call` (the
/// general entry point), `call_1d` (the one for one-dimensional launches)
/// and `call_2d` (the one for launches whose z extents are 1, for kernels
/// that have it) take one pointer per PTX parameter, as the entry points
/// do, whose sizes are `param_sizes` (the simulator copies the values at
/// launch).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct HostEntry {
    /// Runs the general body as the current simulated thread.
    pub call: unsafe fn(*const *mut c_void),
    /// Runs the one-dimensional body as the current simulated thread.
    pub call_1d: unsafe fn(*const *mut c_void),
    /// Runs the body for launches whose z extents are 1.
    pub call_2d: Option<unsafe fn(*const *mut c_void)>,
    /// The byte size of each parameter value.
    pub param_sizes: &'static [usize],
}

/// A slice argument as the entry point receives it: address and length.
#[doc(hidden)]
pub struct SliceArg {
    /// The device address of the first element.
    pub ptr: u64,
    /// The number of elements.
    pub len: usize,
}
