//! The examples that port numba-cuda's tests, run as child processes (on
//! the CPU simulator here, on the GPU in the bundle): Black-Scholes with
//! `#[vectorize]`, Laplace with a 2-D kernel and `#[vectorize(reduce)]`,
//! and π by Monte Carlo with the device random numbers. Each checks itself
//! against the CPU and prints a line saying so. (`cargo test` builds the
//! examples beside the tests; the GPU bundle copies both.)

use std::path::PathBuf;
use std::process::Command;

/// The example binary `name`, built beside this test binary.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = dir.join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is not built: `cargo test --workspace` (or `cargo build --examples`) builds it",
        path.display()
    );
    path
}

/// Runs example `name`, which must succeed and print `expect`.
pub(super) fn run(name: &str, expect: &str) {
    run_with(name, expect, &[]);
}

/// As [`run`], with the environment variables `env` set for the example.
pub(super) fn run_with(name: &str, expect: &str, env: &[(&str, &str)]) {
    let out = Command::new(example(name))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name} failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(expect),
        "{name} printed no `{expect}`:\n{stdout}"
    );
}

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
