//! Kernel launches on the CUDA driver: `cuLaunchKernel`, and
//! `cuLaunchCooperativeKernel` for kernels that sync their grid. Queued on a
//! stream whose context the caller bound.

use super::super::{DriverError, KernelLaunch, StreamHandle};
use super::call::{check, stream};
use super::ffi::*;
use std::ptr;

/// # Safety
/// As [`Driver::launch`](super::super::Driver::launch).
#[inline]
pub(super) unsafe fn launch(launch: KernelLaunch<'_>, on: StreamHandle) -> Result<(), DriverError> {
    let KernelLaunch {
        function,
        grid,
        block,
        shared_bytes,
        params,
        cooperative,
        ..
    } = launch;
    if cooperative {
        // SAFETY: as below; the runtime checked that the grid fits the
        // device's resident blocks.
        return check("cuLaunchCooperativeKernel", unsafe {
            cuLaunchCooperativeKernel(
                function.raw as CUfunction,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared_bytes,
                stream(on),
                params.as_mut_ptr(),
            )
        });
    }
    // SAFETY: forwarded to the caller (the driver refuses a function of
    // another device's module with CUDA_ERROR_INVALID_HANDLE).
    check("cuLaunchKernel", unsafe {
        cuLaunchKernel(
            function.raw as CUfunction,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared_bytes,
            stream(on),
            params.as_mut_ptr(),
            ptr::null_mut(),
        )
    })
}
