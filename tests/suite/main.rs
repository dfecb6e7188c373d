//! The test suite: every test that can share its process with the others,
//! in modules named for the runtime's and the device crate's concepts. It
//! runs on whichever backend the process chooses: the CPU simulator where
//! there is no GPU (CI), the GPU otherwise (`scripts/gpu-bundle.sh`).
//!
//! The tests run in parallel threads of one process, so none of them sets
//! the environment, changes a process-wide setting or measures the device's
//! memory. A test that needs a process of its own for one case (a kernel
//! fault ends its device, a setting read once per process) runs that case in
//! a child process (`common::faults::in_own_process`); a file whose every
//! test needs one is a binary of its own at the root of `tests/`, named for
//! the reason (ARCHITECTURE.md, "Where a new test goes").

#[path = "../common/mod.rs"]
mod common;

mod device_api;
mod examples;
mod graphs;
mod interop;
mod kernels;
mod launch;
mod memory;
mod ops;
mod streams;
