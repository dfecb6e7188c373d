//! Numba's device random numbers (`numba.cuda.random`): one xoroshiro128+
//! generator per thread, its state in a device buffer.
//!
//! The algorithm is Numba's, step for step, so that a seed gives the same
//! sequence as `create_xoroshiro128p_states(n, seed)` and
//! `xoroshiro128p_uniform_float32(states, i)` do in numba-cuda:
//!
//! - a state is two `u64` ([`Xoroshiro128p`], laid out as Numba's
//!   `xoroshiro128p_dtype`), seeded by SplitMix64 with `s0 == s1`;
//! - the states of a launch are one sequence cut into subsequences `2^64`
//!   steps apart: state `i + 1` is state `i` after a jump
//!   ([`Xoroshiro128p::jump`]). Numba computes them one after the other on
//!   the host and copies them ([`Xoroshiro128p::states`] does the same);
//!   `gpu_ops::random` computes them in a kernel instead, each thread
//!   jumping `i` times at once: a jump is linear over GF(2), a 128 x 128 bit
//!   matrix ([`JumpRows`]), so `i` jumps are the product of the matrices of
//!   `2^k` jumps for the bits `k` of `i`;
//! - a uniform `f64` is the top 53 bits of the next output over `2^53`; a
//!   uniform `f32` is that `f64` rounded to `f32` (so, as in Numba, it can
//!   round up to `1.0`);
//! - a normal value is Box-Muller's first value from two uniform `f32`
//!   (also for [`normal_f64`](Xoroshiro128p::normal_f64), as Numba does).
//!
//! A thread draws from its own state, which it reaches through its own
//! element of the states' [`DisjointSlice`](crate::DisjointSlice): the draws
//! take `&mut self`, so no two threads can share a generator in safe code.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::random::Xoroshiro128p;
//!
//! // With `#[kernel]`: one uniform draw per thread.
//! pub fn draw(mut states: DisjointSlice<Xoroshiro128p>, mut out: DisjointSlice<f32>) {
//!     let i = thread_index();
//!     if let Some(state) = states.get_mut(i) {
//!         let x = state.uniform_f32();
//!         out.set(i, x);
//!     }
//! }
//! ```
//!
//! The transcendental functions of the normal draws are `libm`'s (within an
//! ulp or so, as CUDA's libdevice, which Numba calls, is): the uniform draws
//! equal Numba's bit for bit, the normal ones to within a few ulp.

use crate::math::Float;
use crate::DeviceCopy;

/// One xoroshiro128+ generator's state: Numba's `xoroshiro128p_dtype`
/// (`s0`, `s1`, two `u64`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
pub struct Xoroshiro128p {
    /// The first word.
    pub s0: u64,
    /// The second word.
    pub s1: u64,
}

/// The xoroshiro128+ jump polynomial: `2^64` steps.
const JUMP: [u64; 2] = [0xBEAC_0467_EBA5_FACB, 0xD86B_048B_86AA_9922];

impl Xoroshiro128p {
    /// The state SplitMix64 makes of `seed` (Numba's
    /// `init_xoroshiro128p_state`): both words are SplitMix64's first output.
    #[inline]
    pub const fn from_seed(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Xoroshiro128p { s0: z, s1: z }
    }

    /// The next 64-bit output, advancing the state one step.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s1 = s1.rotate_left(36);
        result
    }

    /// Advances the state `2^64` steps (Numba's `xoroshiro128p_jump`).
    pub fn jump(&mut self) {
        let (mut s0, mut s1) = (0u64, 0u64);
        for word in JUMP {
            for bit in 0..64 {
                if word & (1u64 << bit) != 0 {
                    s0 ^= self.s0;
                    s1 ^= self.s1;
                }
                self.next_u64();
            }
        }
        self.s0 = s0;
        self.s1 = s1;
    }

    /// The states of `n` generators, as Numba's `init_xoroshiro128p_states`
    /// makes them: the first is [`from_seed`](Self::from_seed) jumped
    /// `subsequence_start` times, each next one the previous jumped once.
    pub fn states(seed: u64, subsequence_start: u64) -> impl Iterator<Item = Xoroshiro128p> {
        let mut first = Xoroshiro128p::from_seed(seed);
        for _ in 0..subsequence_start {
            first.jump();
        }
        core::iter::successors(Some(first), |previous| {
            let mut next = *previous;
            next.jump();
            Some(next)
        })
    }

    /// A uniform `f64` in `[0, 1)`: the next output's top 53 bits over `2^53`.
    #[inline(always)]
    pub fn uniform_f64(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }

    /// A uniform `f32`: [`uniform_f64`](Self::uniform_f64)'s value rounded to
    /// `f32`, as Numba computes it (so `1.0` is possible, once in about
    /// `2^25` draws).
    #[inline(always)]
    pub fn uniform_f32(&mut self) -> f32 {
        unit_f64(self.next_u64()) as f32
    }

    /// A standard normal `f32` (mean 0, deviation 1) by Box-Muller from two
    /// [`uniform_f32`](Self::uniform_f32) draws (two steps); the second
    /// value of the pair is discarded, as in Numba. A first draw of `0.0`
    /// gives infinity, as in Numba.
    #[inline]
    pub fn normal_f32(&mut self) -> f32 {
        let u1 = self.uniform_f32();
        let u2 = self.uniform_f32();
        Float::sqrt(-2.0f32 * libm::logf(u1)) * libm::cosf(core::f32::consts::TAU * u2)
    }

    /// A standard normal `f64` by Box-Muller from two
    /// [`uniform_f32`](Self::uniform_f32) draws, as Numba's
    /// `xoroshiro128p_normal_float64` (its logarithm of an `f32`, the rest in
    /// `f64`).
    #[inline]
    pub fn normal_f64(&mut self) -> f64 {
        let u1 = self.uniform_f32();
        let u2 = self.uniform_f32();
        let log = libm::logf(u1) as f64;
        Float::sqrt(-2.0f64 * log) * libm::cos(core::f64::consts::TAU * u2 as f64)
    }
}

/// A linear map of states over GF(2), as 128 rows: bit `r` of the image of
/// a state is the parity of row `r` and-ed with the state (bit `b` of a
/// state is bit `b` of `s0` for `b < 64`, bit `b - 64` of `s1` above). The
/// rows of `2^k` jumps, for each `k`, are what the initialising kernel
/// reads.
pub type JumpRows = [[u64; 2]; 128];

impl Xoroshiro128p {
    /// The rows of one jump ([`jump`](Self::jump)), computed by jumping each
    /// state of one bit.
    pub fn jump_rows() -> JumpRows {
        let mut rows = [[0u64; 2]; 128];
        for b in 0..128 {
            let mut unit = Xoroshiro128p {
                s0: if b < 64 { 1 << b } else { 0 },
                s1: if b >= 64 { 1 << (b - 64) } else { 0 },
            };
            unit.jump();
            // Column `b` of the matrix is the image of state bit `b`.
            for (r, row) in rows.iter_mut().enumerate() {
                let bit = if r < 64 {
                    unit.s0 >> r
                } else {
                    unit.s1 >> (r - 64)
                } & 1;
                row[b / 64] |= bit << (b % 64);
            }
        }
        rows
    }

    /// The map `rows` applied to this state.
    #[inline(always)]
    pub fn apply(self, rows: &[[u64; 2]]) -> Xoroshiro128p {
        let (mut s0, mut s1) = (0u64, 0u64);
        for (r, row) in rows.iter().enumerate().take(128) {
            let parity = ((row[0] & self.s0).count_ones() + (row[1] & self.s1).count_ones()) & 1;
            if r < 64 {
                s0 |= (parity as u64) << r;
            } else {
                s1 |= (parity as u64) << (r - 64);
            }
        }
        Xoroshiro128p { s0, s1 }
    }
}

/// The rows of `a` after `b` (`a(b(x))`).
pub fn compose(a: &JumpRows, b: &JumpRows) -> JumpRows {
    let mut out = [[0u64; 2]; 128];
    for (r, row) in a.iter().enumerate() {
        for j in 0..128 {
            if (row[j / 64] >> (j % 64)) & 1 == 1 {
                out[r][0] ^= b[j][0];
                out[r][1] ^= b[j][1];
            }
        }
    }
    out
}

/// `x`'s top 53 bits over `2^53`, in `[0, 1)`.
#[inline(always)]
fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

// `DeviceCopy` is derived above; this keeps the layout Numba's (16 bytes,
// 8-aligned) a compile-time fact.
const _: () = {
    assert!(core::mem::size_of::<Xoroshiro128p>() == 16);
    assert!(core::mem::align_of::<Xoroshiro128p>() == 8);
    crate::copy::require_device_align::<Xoroshiro128p>();
};

#[cfg(test)]
mod tests {
    use super::Xoroshiro128p;

    #[test]
    fn a_jump_equals_its_polynomial_on_a_small_example() {
        // The jump is linear over GF(2): jump(a ^ b) == jump(a) ^ jump(b).
        let (a, b) = (Xoroshiro128p::from_seed(1), Xoroshiro128p::from_seed(2));
        let both = Xoroshiro128p {
            s0: a.s0 ^ b.s0,
            s1: a.s1 ^ b.s1,
        };
        let (mut ja, mut jb, mut jboth) = (a, b, both);
        ja.jump();
        jb.jump();
        jboth.jump();
        assert_eq!((jboth.s0, jboth.s1), (ja.s0 ^ jb.s0, ja.s1 ^ jb.s1));
        assert_ne!(ja, a);
    }

    #[test]
    fn the_jump_matrix_and_its_square_jump_once_and_twice() {
        let rows = Xoroshiro128p::jump_rows();
        let squared = super::compose(&rows, &rows);
        let start = Xoroshiro128p::from_seed(42);
        let (mut once, mut twice) = (start, start);
        once.jump();
        twice.jump();
        twice.jump();
        assert_eq!(start.apply(&rows), once);
        assert_eq!(start.apply(&squared), twice);
    }

    #[test]
    fn uniform_draws_stay_in_the_unit_interval() {
        let mut s = Xoroshiro128p::from_seed(7);
        for _ in 0..10_000 {
            let x = s.uniform_f64();
            assert!((0.0..1.0).contains(&x), "{x}");
            let y = s.uniform_f32();
            assert!((0.0..=1.0).contains(&y), "{y}");
        }
    }
}
