//! The one seam between the device API and the machine it runs on.
//!
//! On `nvptx64` every function is a PTX special register, instruction or LLVM
//! intrinsic. On the host, atomics and math are real (they work on any
//! memory), while thread coordinates, barriers, shuffles and shared memory
//! exist only inside a running kernel: calling them from host code panics with
//! a message naming the function. Kernel bodies therefore type-check on the
//! host, and a CPU backend can take this seam over.

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::*;

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[path = "nvptx_mma.rs"]
pub(crate) mod mma;

// `mbarrier`'s transaction counts and the bulk tensor copies are sm_90's.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
#[path = "nvptx_tma.rs"]
pub(crate) mod tma;

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_mma.rs"]
pub(crate) mod mma;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_tma.rs"]
pub(crate) mod tma;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::simulation;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use host::*;

/// Which lane a shuffle reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    /// `lane + b`
    Down,
    /// `lane - b`
    Up,
    /// `lane ^ b`
    Xor,
    /// lane `b`
    Index,
}
