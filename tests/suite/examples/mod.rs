//! Examples run as child processes, each checking itself against the CPU:
//! the ports of numba-cuda's tests and of CuPy's stream guides, the
//! multi-device examples and the tensor-core example.

mod cupy;
mod multi_device;
mod numba;
mod tensor_cores;

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
fn run(name: &str, expect: &str) {
    run_with(name, &[], &[expect]);
}

/// Runs example `name` with the environment variables `env` set; it must
/// succeed and print every line of `expect`.
fn run_with(name: &str, env: &[(&str, &str)], expect: &[&str]) {
    let out = Command::new(example(name))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name} (environment {env:?}) failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for line in expect {
        assert!(
            stdout.contains(line),
            "{name} (environment {env:?}) printed no `{line}`:\n{stdout}"
        );
    }
}
