//! Numba's device random numbers (`gpu_device::random`,
//! `gpu_ops::random`): the states and the draws of a kernel equal an
//! independent host implementation of numba-cuda's `random.py` (written
//! here from its algorithm, as plain functions over `(s0, s1)` pairs), for
//! several seeds and threads. The uniform draws are compared bit for bit,
//! the normal ones to a few ulp (their logarithm and cosine are `libm`'s
//! here, std's in the reference).
//!
//! The comparison with numba-cuda itself runs on the GPU machine: the
//! `vectorize` benchmark runs `benches/python/numba_rng_reference.py` and
//! compares its values with this kernel's.

use gpu_device::random::Xoroshiro128p;
use gpu_ops::random::{create_xoroshiro128p_states, create_xoroshiro128p_states_from};
use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::random::xoroshiro_draws;

/// numba-cuda's algorithm, step by step, on `(s0, s1)`.
mod numba {
    pub fn init(seed: u64) -> (u64, u64) {
        let mut z = seed.wrapping_add(0x9E3779B97F4A7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        (z, z)
    }

    // As Numba writes it, not through the library's `rotate_left`.
    #[allow(clippy::manual_rotate)]
    fn rotl(x: u64, k: u32) -> u64 {
        (x << k) | (x >> (64 - k))
    }

    pub fn next(s: &mut (u64, u64)) -> u64 {
        let (s0, mut s1) = *s;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        *s = (rotl(s0, 55) ^ s1 ^ (s1 << 14), rotl(s1, 36));
        result
    }

    pub fn jump(s: &mut (u64, u64)) {
        let table = [0xBEAC0467EBA5FACBu64, 0xD86B048B86AA9922u64];
        let (mut a, mut b) = (0u64, 0u64);
        for word in table {
            for bit in 0..64 {
                if word & (1u64 << bit) != 0 {
                    a ^= s.0;
                    b ^= s.1;
                }
                next(s);
            }
        }
        *s = (a, b);
    }

    pub fn states(n: usize, seed: u64, subsequence_start: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let mut s = init(seed);
        for _ in 0..subsequence_start {
            jump(&mut s);
        }
        out.push(s);
        for _ in 1..n {
            jump(&mut s);
            out.push(s);
        }
        out
    }

    pub fn uniform_f64(s: &mut (u64, u64)) -> f64 {
        (next(s) >> 11) as f64 * (1.0 / 9007199254740992.0)
    }

    pub fn uniform_f32(s: &mut (u64, u64)) -> f32 {
        uniform_f64(s) as f32
    }

    pub fn normal_f32(s: &mut (u64, u64)) -> f32 {
        let (u1, u2) = (uniform_f32(s), uniform_f32(s));
        (-2.0f32 * u1.ln()).sqrt() * (2.0f32 * std::f32::consts::PI * u2).cos()
    }

    pub fn normal_f64(s: &mut (u64, u64)) -> f64 {
        let (u1, u2) = (uniform_f32(s), uniform_f32(s));
        (-2.0f64 * u1.ln() as f64).sqrt() * (2.0 * std::f64::consts::PI * u2 as f64).cos()
    }
}

struct Draws {
    uniform_f32: Vec<[f32; 4]>,
    uniform_f64: Vec<[f64; 4]>,
    normal_f32: Vec<[f32; 4]>,
    normal_f64: Vec<[f64; 4]>,
}

fn draw(states: &mut DeviceBuffer<Xoroshiro128p>, stream: &Stream) -> Draws {
    let n = states.len();
    let mut u32s = DeviceBuffer::<[f32; 4]>::zeroed_on(n, stream).unwrap();
    let mut u64s = DeviceBuffer::<[f64; 4]>::zeroed_on(n, stream).unwrap();
    let mut n32s = DeviceBuffer::<[f32; 4]>::zeroed_on(n, stream).unwrap();
    let mut n64s = DeviceBuffer::<[f64; 4]>::zeroed_on(n, stream).unwrap();
    launch!(xoroshiro_draws[n.div_ceil(64), 64, stream](
        &mut *states, &mut u32s, &mut u64s, &mut n32s, &mut n64s
    ))
    .unwrap();
    Draws {
        uniform_f32: u32s.copy_to_host_sync(stream).unwrap(),
        uniform_f64: u64s.copy_to_host_sync(stream).unwrap(),
        normal_f32: n32s.copy_to_host_sync(stream).unwrap(),
        normal_f64: n64s.copy_to_host_sync(stream).unwrap(),
    }
}

/// `a` and `b` within `ulps` units in the last place of `b` (or both infinite alike).
fn close_f64(a: f64, b: f64, ulps: f64) -> bool {
    a == b || (a - b).abs() <= ulps * f64::EPSILON * b.abs().max(f64::MIN_POSITIVE)
}

fn check_against_numba(seed: u64, n: usize, stream: &Stream) {
    let mut states = create_xoroshiro128p_states(n, seed, stream).unwrap();
    let mut reference = numba::states(n, seed, 0);
    let created: Vec<(u64, u64)> = states
        .copy_to_host_sync(stream)
        .unwrap()
        .iter()
        .map(|s| (s.s0, s.s1))
        .collect();
    assert_eq!(created, reference, "the states of seed {seed}");
    // Two launches: the second continues each thread's sequence.
    for launch_number in 0..2 {
        let got = draw(&mut states, stream);
        for (i, s) in reference.iter_mut().enumerate() {
            let at = format!("seed {seed}, thread {i}, launch {launch_number}");
            let want: [f32; 4] = std::array::from_fn(|_| numba::uniform_f32(s));
            assert_eq!(
                got.uniform_f32[i].map(f32::to_bits),
                want.map(f32::to_bits),
                "uniform_f32, {at}"
            );
            let want: [f64; 4] = std::array::from_fn(|_| numba::uniform_f64(s));
            assert_eq!(
                got.uniform_f64[i].map(f64::to_bits),
                want.map(f64::to_bits),
                "uniform_f64, {at}"
            );
            let want: [f32; 4] = std::array::from_fn(|_| numba::normal_f32(s));
            for (g, w) in got.normal_f32[i].iter().zip(want) {
                // f32 results: a few ulp of f32.
                assert!(
                    close_f64(*g as f64, w as f64, 8.0 * 2f64.powi(29)),
                    "normal_f32 {g} != {w}, {at}"
                );
            }
            let want: [f64; 4] = std::array::from_fn(|_| numba::normal_f64(s));
            for (g, w) in got.normal_f64[i].iter().zip(want) {
                // The logarithm is of an f32, in f32: a few ulp of f32 again.
                assert!(
                    close_f64(*g, w, 8.0 * 2f64.powi(29)),
                    "normal_f64 {g} != {w}, {at}"
                );
            }
        }
        let advanced: Vec<(u64, u64)> = states
            .copy_to_host_sync(stream)
            .unwrap()
            .iter()
            .map(|s| (s.s0, s.s1))
            .collect();
        assert_eq!(
            advanced, reference,
            "the states after launch {launch_number}, seed {seed}"
        );
    }
}

#[test]
fn draws_of_seeds_1_and_12345_equal_numbas_algorithm() {
    let stream = Stream::new().unwrap();
    check_against_numba(1, 5, &stream);
    check_against_numba(12345, 70, &stream);
}

#[test]
fn seed_1_starts_with_splitmix64s_first_output() {
    // SplitMix64's first output for seed 1 (its published test value
    // sequence starts 0x910a2dec89025cc1 for seed 1).
    assert_eq!(Xoroshiro128p::from_seed(1).s0, 0x910a2dec89025cc1);
    assert_eq!(numba::init(1).0, 0x910a2dec89025cc1);
}

#[test]
fn a_subsequence_start_skips_whole_generators() {
    let stream = Stream::new().unwrap();
    let from_three = create_xoroshiro128p_states_from(4, 9, 3, &stream)
        .unwrap()
        .copy_to_host_sync(&stream)
        .unwrap();
    let all = numba::states(7, 9, 0);
    let from_three: Vec<(u64, u64)> = from_three.iter().map(|s| (s.s0, s.s1)).collect();
    assert_eq!(from_three, all[3..]);
}

#[test]
fn the_kernels_jumps_equal_numbas_chain_for_many_threads_and_starts() {
    // The states are computed by a kernel, thread i jumping i times at once
    // (powers of the jump matrix): equal to Numba's one-after-the-other chain
    // across several levels of powers and a start past many jumps.
    let stream = Stream::new().unwrap();
    for (n, seed, start) in [
        (1usize, 3u64, 0u64),
        (2, 3, 1),
        (1000, 77, 0),
        (257, 5, 1000),
    ] {
        let got: Vec<(u64, u64)> = create_xoroshiro128p_states_from(n, seed, start, &stream)
            .unwrap()
            .copy_to_host_sync(&stream)
            .unwrap()
            .iter()
            .map(|s| (s.s0, s.s1))
            .collect();
        assert_eq!(
            got,
            numba::states(n, seed, start),
            "n {n}, seed {seed}, start {start}"
        );
    }
}

#[test]
fn no_states_is_an_empty_buffer() {
    let stream = Stream::new().unwrap();
    let states = create_xoroshiro128p_states(0, 1, &stream).unwrap();
    assert!(states.is_empty());
}

#[test]
fn uniform_f32_rounds_to_one_as_numba_does() {
    // The largest 53-bit fraction rounds to 1.0 in f32: Numba returns it.
    let mut s = Xoroshiro128p {
        s0: u64::MAX,
        s1: 0,
    };
    assert_eq!(s.uniform_f32(), 1.0);
    let mut r = (u64::MAX, 0);
    assert_eq!(numba::uniform_f32(&mut r), 1.0);
}
