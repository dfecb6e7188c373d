//! Array operations of the CuPy tutorials, as kernels launched on the current
//! stream (or a given one): [`sum`] (CuPy's `cp.sum`), prefix scans
//! ([`exclusive_sum`], [`inclusive_sum`] (`cp.cumsum`), [`scan()`] with a
//! minimum or maximum), element-wise arithmetic ([`Expr`], enough for
//! `b * a + 8`), matrix products ([`matmul()`], `torch.matmul`: bf16 on
//! tensor cores, f32 on the FP32 SGEMM), and Numba's device random number
//! states ([`random`]).
//!
//! ```no_run
//! use gpu_ops::DeviceScalar;
//! use gpu_runtime::DeviceBuffer;
//!
//! let a = DeviceBuffer::from_host_sync(&[1i64, 2, 3])?;   // cp.asarray
//! let b: DeviceScalar<i64> = gpu_ops::sum(&a)?;      // cp.sum: a 0-d device array
//! let c = (&b * &a + 8).eval()?;                     // b * a + 8, one fused kernel
//! assert_eq!(c.to_host_sync()?, vec![14, 20, 26]);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! The kernels are `#[kernel]` functions of this crate, built to PTX by its
//! `build.rs` and embedded by [`embed_kernels!`](gpu_device::embed_kernels).
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]
// `#[inline(always)]` on a TMA ring's role closures (`matmul::gemm_wgmma_tma`,
// built where that module is).
#![cfg_attr(
    any(not(target_arch = "nvptx64"), target_feature = "sm_90a"),
    feature(stmt_expr_attributes)
)]
#![deny(missing_docs)]

// The crate's README (its page on crates.io), whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

gpu_device::embed_kernels!();

mod arithmetic;
#[cfg(not(target_arch = "nvptx64"))]
mod expr;
pub mod matmul;
pub mod random;
#[cfg(not(target_arch = "nvptx64"))]
mod scalar;
pub mod scan;
mod sum;

pub use arithmetic::Arithmetic;
pub use sum::{Lanes, SumElement};

#[cfg(not(target_arch = "nvptx64"))]
pub use arithmetic::elementwise;
#[cfg(not(target_arch = "nvptx64"))]
pub use expr::{array, Expr};
#[cfg(not(target_arch = "nvptx64"))]
pub use matmul::{matmul, matmul_on, matmul_path, MatmulElement, MatmulPath};
#[cfg(not(target_arch = "nvptx64"))]
pub use scalar::DeviceScalar;
#[cfg(not(target_arch = "nvptx64"))]
pub use scan::{exclusive_sum, inclusive_sum, scan, scan_into, Scannable};
#[cfg(not(target_arch = "nvptx64"))]
pub use sum::{sum, sum_on, sum_partials};
