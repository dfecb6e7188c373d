//! The two multi-device examples, `multi_gpu_pipeline` and `allreduce`, run
//! on the CPU simulator with 2 and with 4 simulated devices, as child
//! processes; each must succeed and print its check line. (`cargo test`
//! builds the examples beside the tests; the GPU bundle copies both.)

use super::run_with;

fn run_on_simulated_devices(name: &str, devices: usize, expect: &[&str]) {
    let devices = devices.to_string();
    let env = [
        ("GPU_BACKEND", "simulator"),
        ("GPU_SIM_DEVICES", devices.as_str()),
    ];
    run_with(name, &env, expect);
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
