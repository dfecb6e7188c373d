//! Helpers for tests whose launches fail. A kernel fault ends its device
//! for the rest of the process, on a GPU (the CUDA context is lost) as on
//! the simulator, and the tests of one binary share a process: such a test
//! runs in a process of its own, and gives each failure it checks a device
//! of its own.

use gpu_runtime::{Device, Stream, SIMULATED_DEVICES_ENV};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether the calling test should run its body here. In the test process
/// it runs the calling test (named by its thread, as libtest names them)
/// alone in a child process with `env` set, fails if it failed there, and
/// returns `false`; in that child it returns `true`. For tests whose kernels
/// fault: a fault ends the device for the rest of the process, on the
/// simulator as on a GPU, and the tests of one binary share the process.
///
/// ```ignore
/// if !common::in_own_process(&[]) {
///     return;
/// }
/// ```
pub fn in_own_process(env: &[(&str, &str)]) -> bool {
    const CHILD_ENV: &str = "GPU_TEST_IN_OWN_PROCESS";
    let thread = std::thread::current();
    let test = thread
        .name()
        .filter(|name| *name != "main")
        .expect("libtest runs each test on a thread named after it");
    if std::env::var(CHILD_ENV).as_deref() == Ok(test) {
        return true;
    }
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        // --include-ignored: the test may be one that runs only where asked
        // (a GPU-only test); the parent ran it, so the child runs it too.
        .args([
            "--exact",
            test,
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ])
        .env(CHILD_ENV, test);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && text.contains("test result: ok. 1 passed"),
        "`{test}` failed in a process of its own:\n{text}"
    );
    false
}

/// [`in_own_process`] with 16 simulated devices, for tests that force the
/// simulator and check several failures ([`next_device`]).
pub fn in_own_simulator_process() -> bool {
    in_own_process(&[(SIMULATED_DEVICES_ENV, "16")])
}

/// A stream on the next device this process has not used (device 1, 2,
/// ...; device 0 is the current device): a failed launch ends its device,
/// so each failure a test checks gets one.
pub fn next_device() -> Stream {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let device = Device::get(NEXT.fetch_add(1, Ordering::Relaxed)).unwrap();
    Stream::on_device(device).unwrap()
}

/// The report of the launch on `stream`, which must have failed: `kernel:
/// message`. Panics when the stream's work succeeded or failed otherwise.
pub fn failure(stream: &Stream) -> String {
    outcome(stream).expect_err("the launch was to fail")
}

/// Whether the work on `stream` succeeded, or the report of the launch
/// that failed (`kernel: message`). Panics when it failed otherwise.
pub fn outcome(stream: &Stream) -> Result<(), String> {
    match stream.synchronize() {
        Ok(()) => Ok(()),
        Err(gpu_runtime::Error::KernelFailed { kernel, driver, .. }) => {
            Err(format!("{kernel}: {}", driver.description))
        }
        Err(other) => panic!("expected KernelFailed, got {other:?}"),
    }
}
