//! The examples that port numba-cuda's tests, run as child processes (on
//! the CPU simulator here, on the GPU in the bundle): Black-Scholes with
//! `#[vectorize]`, Laplace with a 2-D kernel and `#[vectorize(reduce)]`,
//! and π by Monte Carlo with the device random numbers. Each checks itself
//! against the CPU and prints a line saying so. (`cargo test` builds the
//! examples beside the tests; the GPU bundle copies both.)

use super::run;

#[test]
fn test_blackscholes_with_vectorize_matches_the_cpu() {
    run("numba_black_scholes", "black-scholes: matches the CPU");
}

#[test]
fn test_laplace_on_a_stream_matches_the_cpu() {
    run("numba_laplace", "laplace: matches the CPU");
}

#[test]
fn monte_carlo_pi_with_the_device_random_numbers_matches_the_cpu() {
    run(
        "numba_monte_carlo_pi",
        "monte-carlo: matches the CPU, within 0.01 of pi",
    );
}
