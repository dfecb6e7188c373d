//! The kernels of this workspace's tests and benchmarks, and nothing a user
//! program needs (a dev-dependency only, not published):
//!
//! - kernels that exercise one device feature each (indices and witnesses,
//!   shared memory, warp shuffles, atomics, parameters, float math), with
//!   the benchmarks' baselines [`add_unchecked`] and [`empty`];
//! - kernels that fail, hang or spin on purpose, for the runtime's and the
//!   simulator's reports ([`panic_if`], [`divergent_barrier`], ...);
//! - [`attacks`]: kernels that misuse the device API on purpose, as a
//!   hostile reviewer would, for the attack tests;
//! - [`agreement`]: kernels whose host and device builds disagree on
//!   purpose (`cfg` tricks), which every launch must refuse;
//! - [`scopes`]: kernels that try the macro's scopes and generated names;
//! - [`races`]: kernels with data races on purpose (through `unsafe`), for
//!   the simulator's race detector;
//! - [`classic`]: the five classic CUDA kernels of the kernel benchmark;
//! - [`ownership`]: the ownership maps, leaders and their shared arrays;
//! - [`codegen`]: launch bounds and unrolled loops;
//! - [`patterns`]: the Rust ports of issue #20's kernels (softmax, SGEMM,
//!   convolution, layer norm), timed by `benches/patterns.rs`.
//! - [`vectorized`]: `#[vectorize]` functions, and [`random`]: draws from
//!   Numba's device random numbers.
//!
//! The tutorials' kernels (`add_kernel`, `saxpy`, `fill`, `busy`) are in
//! `gpu-kernels`, which the tests use too.
//!
//! Each `#[kernel]` here is a PTX entry point on the device and a module with a
//! typed `launch` function on the host; `build.rs` builds the PTX and
//! [`embed_kernels!`](gpu_device::embed_kernels) embeds it.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]
#![deny(missing_docs)]

gpu_device::embed_kernels!();

pub mod agreement;
pub mod attacks;
pub mod classic;
pub mod codegen;
mod faults;
mod features;
pub mod ownership;
pub mod patterns;
pub mod races;
pub mod random;
pub mod scopes;
pub mod vectorized;

pub use faults::*;
pub use features::*;
