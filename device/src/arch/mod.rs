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

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
#[path = "nvptx_wgmma.rs"]
pub(crate) mod wgmma;

// `mbarrier`'s transaction counts and the bulk tensor copies are sm_90's.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
#[path = "nvptx_tma.rs"]
pub(crate) mod tma;

// Thread-block clusters are sm_90's.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
#[path = "nvptx_cluster.rs"]
pub(crate) mod cluster;

#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_cluster.rs"]
pub(crate) mod cluster;
#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_mma.rs"]
pub(crate) mod mma;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_tma.rs"]
pub(crate) mod tma;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "host_wgmma.rs"]
pub(crate) mod wgmma;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::simulation;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use host::*;

/// A tile in shared memory as `wgmma` reads it, what its matrix descriptor
/// encodes (built from the address on the GPU, read directly by the
/// simulator): rows of `row_bytes` (the swizzle's width), 8-row groups
/// `8 row_bytes` apart, swizzled by `layout_type` (1: 128 bytes, 2: 64, 3:
/// 32), the operand starting `k_byte_offset` bytes after `base`.
///
/// K-major (`chunk_bytes` 0): a row is one of M or N, its elements K's.
/// MN-major (`chunk_bytes` > 0, `wgmma`'s transposed B): a row is one k,
/// its elements `row_bytes / 2` consecutive columns of N, and the next
/// columns start `chunk_bytes` later (the descriptor's leading byte
/// offset).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub struct SharedMatrix {
    pub(crate) base: *const u8,
    pub(crate) k_byte_offset: u32,
    pub(crate) row_bytes: u32,
    pub(crate) layout_type: u8,
    pub(crate) chunk_bytes: u32,
}

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
