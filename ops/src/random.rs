//! Numba's `create_xoroshiro128p_states`: the states of `n` device random
//! number generators ([`Xoroshiro128p`]) in a device buffer, seeded as
//! numba-cuda seeds them. Kernels draw from them with the methods of
//! [`gpu_device::random::Xoroshiro128p`], each thread from its own element.
//!
//! ```no_run
//! use gpu_ops::random::create_xoroshiro128p_states;
//! use gpu_runtime::Stream;
//!
//! let stream = Stream::new()?;
//! let states = create_xoroshiro128p_states(1024, 1, &stream)?; // seed 1
//! assert_eq!(states.len(), 1024);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! As in Numba, the states are computed on the host (state `i + 1` is state
//! `i` jumped `2^64` steps, a chain no thread can start in the middle of
//! cheaply) and copied to the device on the stream.

pub use gpu_device::random::Xoroshiro128p;
use gpu_runtime::{DeviceBuffer, Result, Stream};

/// The states of `n` generators for `seed`, in a new device buffer copied on
/// `stream` (Numba's `create_xoroshiro128p_states(n, seed, stream=stream)`).
pub fn create_xoroshiro128p_states(
    n: usize,
    seed: u64,
    stream: &Stream,
) -> Result<DeviceBuffer<Xoroshiro128p>> {
    create_xoroshiro128p_states_from(n, seed, 0, stream)
}

/// As [`create_xoroshiro128p_states`], the first generator advanced by
/// `subsequence_start` jumps of `2^64` steps (Numba's `subsequence_start`).
pub fn create_xoroshiro128p_states_from(
    n: usize,
    seed: u64,
    subsequence_start: u64,
    stream: &Stream,
) -> Result<DeviceBuffer<Xoroshiro128p>> {
    let states: Vec<Xoroshiro128p> = Xoroshiro128p::states(seed, subsequence_start)
        .take(n)
        .collect();
    DeviceBuffer::to_device_sync(&states, stream)
}
