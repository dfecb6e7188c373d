//! π by Monte Carlo with Numba's device random numbers: 1024 generators
//! seeded as numba-cuda's `create_xoroshiro128p_states(1024, seed=1)`, each
//! thread drawing points from its own, the counts summed by a
//! `#[vectorize(reduce)]` function.
//!
//! Checked twice: the count equals the CPU's, drawing from the same states
//! (the uniform draws are exact, so the counts are equal); and π is within
//! `0.01` of the true value (about 6 standard deviations for this count).
//!
//! | Numba | here |
//! |---|---|
//! | `rng_states = create_xoroshiro128p_states(n, seed=1, stream=stream)` | `create_xoroshiro128p_states(n, 1, &stream)?` |
//! | `x = xoroshiro128p_uniform_float32(rng_states, i)` | `let x = state.uniform_f32();` (`state`: thread `i`'s `&mut Xoroshiro128p`) |
//!
//! The kernels: `gpu_kernels::monte_carlo_pi`.

use gpu_device::random::Xoroshiro128p;
use gpu_kernels::monte_carlo_pi::{count_inside, inside_quarter_disc, total};
use gpu_ops::random::create_xoroshiro128p_states;
use gpu_runtime::{launch, DeviceBuffer, Stream};
use std::error::Error;
use std::process::ExitCode;

const THREADS: usize = 1024;
const SAMPLES: u32 = 256;
const SEED: u64 = 1;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("numba_monte_carlo_pi: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let stream = Stream::new()?;
    let mut states = create_xoroshiro128p_states(THREADS, SEED, &stream)?;
    let mut inside = DeviceBuffer::<u64>::zeroed_on(THREADS, &stream)?;
    launch!(count_inside[THREADS / 256, 256, stream](&mut states, SAMPLES, &mut inside))?;
    let count = total::reduce(&inside, &stream)?;

    let cpu: u64 = Xoroshiro128p::states(SEED, 0)
        .take(THREADS)
        .map(|mut state| {
            (0..SAMPLES)
                .filter(|_| {
                    let (x, y) = (state.uniform_f32(), state.uniform_f32());
                    inside_quarter_disc(x, y)
                })
                .count() as u64
        })
        .sum();
    let points = THREADS as u64 * SAMPLES as u64;
    let pi = 4.0 * count as f64 / points as f64;
    println!("monte-carlo: {points} points, {count} inside: pi ~ {pi:.5}");
    if count != cpu {
        return Err(format!(
            "the device counted {count} points inside, the CPU {cpu} from the same states"
        )
        .into());
    }
    if (pi - std::f64::consts::PI).abs() >= 0.01 {
        return Err(format!("pi ~ {pi} is more than 0.01 from the true value").into());
    }
    println!("monte-carlo: matches the CPU, within 0.01 of pi");
    Ok(())
}
