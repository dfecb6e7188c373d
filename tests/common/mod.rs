//! Helpers shared by the test binaries that run on both backends.

#![allow(dead_code)]

use gpu_runtime::{backend, Backend};

/// A work size: `gpu` on a GPU, where it keeps the device busy long enough for
/// ordering bugs to show; `simulator` on the CPU simulator, which runs every
/// simulated thread in turn (tens of nanoseconds each).
pub fn size(gpu: usize, simulator: usize) -> usize {
    match backend() {
        Backend::Cuda => gpu,
        Backend::Simulator => simulator,
    }
}
