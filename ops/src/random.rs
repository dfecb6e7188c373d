//! Numba's `create_xoroshiro128p_states`: the states of `n` device random
//! number generators ([`Xoroshiro128p`]) in a device buffer, seeded as
//! numba-cuda seeds them: state `i` is the seed's SplitMix64 state jumped
//! `subsequence_start + i` times (`2^64` steps each). Kernels draw from them
//! with the methods of [`gpu_device::random::Xoroshiro128p`], each thread
//! from its own element.
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
//! Numba computes the states one after the other on the host (each jump is
//! 128 steps) and copies them. Here a kernel computes them, thread `i`
//! jumping `i` times at once: the host computes the jump's matrix over
//! GF(2) and its powers `2^k` (`gpu_device::random::JumpRows`), and each
//! thread applies those of the bits of `i`. The result is the same, bit for
//! bit (`tests/suite/device_api/random.rs` compares it with Numba's sequential algorithm).

use gpu_device::prelude::*;
pub use gpu_device::random::Xoroshiro128p;

/// Thread `i` writes `first` jumped `i` times: `powers` holds the rows of
/// `2^k` jumps for `k = 0, 1, ...` (128 rows each), enough levels for every
/// thread index of the launch (a launch with more threads fails). Launched
/// by `create_xoroshiro128p_states`.
#[kernel]
pub(crate) fn init_xoroshiro128p_states(
    first: Xoroshiro128p,
    powers: &[[u64; 2]],
    mut states: DisjointSlice<Xoroshiro128p>,
) {
    let i = thread_index();
    if i.get() >= states.len() {
        return;
    }
    let (mut state, mut rest, mut level) = (first, i.get(), 0usize);
    while rest != 0 {
        if rest & 1 == 1 {
            match powers.get(level * 128..level * 128 + 128) {
                Some(rows) => state = state.apply(rows),
                None => too_few_levels(level),
            }
        }
        rest >>= 1;
        level += 1;
    }
    states.set(i, state);
}

#[cold]
#[inline(never)]
fn too_few_levels(level: usize) -> ! {
    panic!(
        "init_xoroshiro128p_states: a thread index needs jump level {level}, which `powers` lacks"
    )
}

/// The host side.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{init_xoroshiro128p_states, Xoroshiro128p};
    use gpu_device::random::{compose, JumpRows};
    use gpu_runtime::{launch, DeviceBuffer, Result, Stream};

    const THREADS: usize = 256;

    /// The states of `n` generators for `seed`, in a new device buffer
    /// computed on `stream` (Numba's `create_xoroshiro128p_states(n, seed,
    /// stream=stream)`).
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
        let mut states = DeviceBuffer::<Xoroshiro128p>::zeroed_on(n, stream)?;
        if n == 0 {
            return Ok(states);
        }
        // The levels the largest thread index needs: the bits of `n - 1`.
        let levels = (usize::BITS - (n - 1).leading_zeros()) as usize;
        let mut rows = Xoroshiro128p::jump_rows();
        // The first state: the seed's, jumped `subsequence_start` times.
        let mut first = Xoroshiro128p::from_seed(seed);
        let mut powers: Vec<[u64; 2]> = Vec::with_capacity(levels.max(1) * 128);
        let mut start = subsequence_start;
        let mut level = 0;
        while level < levels || start != 0 {
            if start & 1 == 1 {
                first = first.apply(&rows);
            }
            if level < levels {
                powers.extend_from_slice(&rows);
            }
            start >>= 1;
            level += 1;
            if level < levels || start != 0 {
                rows = square(&rows);
            }
        }
        if powers.is_empty() {
            // One state: no jump; the kernel reads no row.
            powers.push([0, 0]);
        }
        let powers = DeviceBuffer::to_device_sync(&powers, stream)?;
        launch!(init_xoroshiro128p_states[n.div_ceil(THREADS), THREADS, stream](
            first,
            &powers,
            &mut states
        ))?;
        Ok(states)
    }

    fn square(rows: &JumpRows) -> JumpRows {
        compose(rows, rows)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{create_xoroshiro128p_states, create_xoroshiro128p_states_from};
