//! Kernels that fail on purpose, and what the host sees: a panic, a fault
//! under a future, a failed `gpu_assert!` (in one thread, and in one lane of
//! every warp), a `#[vectorize(reduce)]` pass launched with more threads
//! than elements.
//!
//! A binary of its own: a kernel fault ends its device for the rest of the
//! process (the CUDA context is lost; the simulator keeps the same rule), so
//! each test runs in a process of its own (`common::faults::in_own_process`),
//! and `scripts/sanitize.sh` leaves this binary out (its kernels trap on
//! purpose).

#[path = "../common/mod.rs"]
mod common;

mod assertion;
mod assertion_in_one_lane;
mod future_of_a_fault;
mod kernel_panic;
mod vectorize_reduce_misuse;
