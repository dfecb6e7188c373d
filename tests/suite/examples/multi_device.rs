//! The two multi-device examples, `multi_gpu_pipeline` and `allreduce`, run
//! on the CPU simulator with 2 and with 4 simulated devices, as child
//! processes; each must succeed and print its check line. (`cargo test`
//! builds the examples beside the tests; the GPU bundle copies both.)

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

fn run_on_simulated_devices(name: &str, devices: usize, expect: &[&str]) {
    let out = Command::new(example(name))
        .env("GPU_BACKEND", "simulator")
        .env("GPU_SIM_DEVICES", devices.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name} on {devices} simulated devices failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for line in expect {
        assert!(
            stdout.contains(line),
            "{name} printed no `{line}`:\n{stdout}"
        );
    }
}

#[test]
fn the_multi_gpu_pipeline_runs_on_two_and_four_devices() {
    for devices in [2, 4] {
        run_on_simulated_devices(
            "multi_gpu_pipeline",
            devices,
            &[
                // The table's row of the run on every device.
                &format!("| {devices:>7} | {:>7} |", devices * 4),
                "every run matches the CPU",
            ],
        );
    }
}

#[test]
fn allreduce_runs_on_two_and_four_devices_in_one_and_in_several_processes() {
    for devices in [2, 4] {
        run_on_simulated_devices(
            "allreduce",
            devices,
            &[
                &format!(
                    "on {devices} device(s) (CPU simulator) in one process: replicas identical"
                ),
                &format!("on {devices} process(es), one device each"),
                &format!("rank {} of {devices}", devices - 1),
            ],
        );
    }
}
