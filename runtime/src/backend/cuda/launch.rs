//! Kernel launches on the CUDA driver: `cuLaunchKernel`,
//! `cuLaunchCooperativeKernel` for kernels that sync their grid, and
//! `cuLaunchKernelEx` with a cluster dimension for cluster kernels (CUDA
//! 11.8; an older driver lacks it, an error naming it). Queued on a stream
//! whose context the caller bound.

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
        cluster,
        ..
    } = launch;
    if let Some(shape) = cluster {
        let mut value = LaunchAttributeValue([0; 16]);
        value.0[..3].copy_from_slice(&shape);
        let mut attribute = LaunchAttribute {
            id: LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            pad: [0; 4],
            value,
        };
        let config = LaunchExConfig {
            grid,
            block,
            shared_bytes,
            stream: stream(on),
            attrs: &mut attribute,
            attr_count: 1,
        };
        // SAFETY: as below; `config` and its one attribute live across the
        // call (the driver copies them); the runtime checked that the
        // cluster shape divides the grid and is the kernel's declared one
        // (its `.reqnctapercluster`).
        return check("cuLaunchKernelEx", unsafe {
            cuLaunchKernelEx(
                &config,
                function.raw as CUfunction,
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        });
    }
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
