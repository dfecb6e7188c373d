//! Tests that need this machine's tools rather than a device: the
//! compile-fail cases (`tests/ui/`, built by trybuild with cargo), the PTX
//! the kernel crates' builds wrote (checked with `ptxas` from
//! `scripts/setup.sh`), and a kernel crate's errors as `cargo check` reports
//! them.
//!
//! A binary of its own: `scripts/gpu-bundle.sh` leaves it out of the GPU
//! bundle (it runs in CI, where the tools are).

mod compile_fail;
mod kernel_crate_errors;
mod ptx;
