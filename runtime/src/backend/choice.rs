//! Which backend runs the work: a CUDA device, or the CPU simulator.
//!
//! The choice is made once per process, on first use: the environment
//! variable [`BACKEND_ENV`] forces one (`cuda` or `simulator`); without it,
//! the CUDA backend is used when the driver finds a device and the simulator
//! otherwise. The choice is reported once, as an info event (see
//! `diagnostics`: printed on standard error where the program set no
//! `tracing` subscriber). `require_backend` (in `device.rs`) refuses to go
//! on elsewhere than on the backend a program needs.

use super::cuda::CudaDriver;
use super::simulator::SimulatorDriver;
use super::Driver;
use crate::diagnostics::{report, Level};
use std::sync::OnceLock;

/// The environment variable that forces a backend: `cuda` or `simulator`.
pub const BACKEND_ENV: &str = "GPU_BACKEND";

/// Where kernels run and device memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
    /// The CPU simulator: device memory in host memory, kernels on CPU
    /// threads with CUDA's semantics, streams on worker threads.
    Simulator,
}

static CUDA: CudaDriver = CudaDriver::new();
static SIMULATOR: SimulatorDriver = SimulatorDriver::new();

impl Backend {
    /// What the backend is, in words (`the CUDA driver`).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Backend::Cuda => "the CUDA driver",
            Backend::Simulator => "the CPU simulator",
        }
    }
}

/// The backend this process uses (chosen on first call).
pub fn backend() -> Backend {
    choice().0
}

/// The choice and why it was made.
fn choice() -> &'static (Backend, String) {
    static CHOICE: OnceLock<(Backend, String)> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let (choice, why) = choose();
        report(
            Level::Info,
            &format!("running on {} ({why})", choice.describe()),
        );
        (choice, why)
    })
}

/// Why the backend was chosen (`GPU_BACKEND=cuda`, `no CUDA device: ...`).
pub(crate) fn choice_reason() -> &'static str {
    &choice().1
}

/// The driver of the chosen backend.
#[inline]
pub(crate) fn driver() -> &'static dyn Driver {
    match backend() {
        Backend::Cuda => &CUDA,
        Backend::Simulator => &SIMULATOR,
    }
}

fn choose() -> (Backend, String) {
    match std::env::var(BACKEND_ENV)
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        Ok("cuda") => return (Backend::Cuda, format!("{BACKEND_ENV}=cuda")),
        Ok("simulator") | Ok("sim") => {
            return (Backend::Simulator, format!("{BACKEND_ENV}=simulator"))
        }
        Ok("") | Err(_) => {}
        Ok(other) => report(
            Level::Warn,
            &format!("ignoring {BACKEND_ENV}={other}: use `cuda` or `simulator`"),
        ),
    }
    match CUDA.device_count() {
        Ok(n) if n > 0 => (Backend::Cuda, format!("{n} CUDA device(s) found")),
        Ok(_) => (
            Backend::Simulator,
            "the CUDA driver reports no device".into(),
        ),
        Err(e) => (Backend::Simulator, format!("no CUDA device: {e}")),
    }
}
