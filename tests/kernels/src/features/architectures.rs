//! Kernels that declare the GPU architecture they need (`#[kernel(arch =
//! "...")]`): `tests/forced_simulated_architectures.rs` launches them on simulated devices of
//! several compute capabilities, `tests/toolchain/ptx.rs` looks for them in the PTX of
//! each architecture this crate is built for (its build.rs).

use gpu_device::prelude::*;

/// Writes, at each thread's index, the newest architecture whose features
/// the device code was built with (70, 80, 90, or 901 for sm_90a; the host
/// build, which the simulator runs, has none: 0). Only in the PTX of sm_80
/// and later.
#[kernel(arch = "sm_80")]
pub fn needs_sm_80(mut out: DisjointSlice<u32>) {
    out.set(thread_index(), built_for());
}

/// As [`needs_sm_80`], only in the PTX of sm_90a (which runs only on
/// compute capability 9.0).
#[kernel(arch = "sm_90a")]
pub fn needs_sm_90a(mut out: DisjointSlice<u32>) {
    out.set(thread_index(), built_for());
}

/// As [`needs_sm_80`], for any architecture.
#[kernel]
pub fn needs_any_arch(mut out: DisjointSlice<u32>) {
    out.set(thread_index(), built_for());
}

/// The newest architecture the code was built with the features of.
fn built_for() -> u32 {
    if cfg!(target_feature = "sm_90a") {
        901
    } else if cfg!(target_feature = "sm_90") {
        90
    } else if cfg!(target_feature = "sm_80") {
        80
    } else if cfg!(target_feature = "sm_70") {
        70
    } else {
        0
    }
}
