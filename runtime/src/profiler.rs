//! Starting and stopping an attached profiler's collection
//! (`cuProfilerStart`/`cuProfilerStop`), as `cudaProfilerStart` and
//! `torch.cuda.profiler.start` do: Nsight Compute run with
//! `--profile-from-start off`, or Nsight Systems with
//! `--capture-range=cudaProfilerApi`, collects only between the two.
//!
//! Without a profiler attached the calls succeed and change nothing. On the
//! simulator, where no profiler attaches, they only record the switch, which
//! [`is_collecting`] reports (on both backends: the switch as this process
//! last set it, not what a profiler does with it).

use crate::device::{self, Device};
use crate::error::Result;
use std::sync::atomic::{AtomicBool, Ordering};

static COLLECTING: AtomicBool = AtomicBool::new(false);

/// Starts the profiler's collection on the current device
/// (`cuProfilerStart`).
pub fn start() -> Result<()> {
    set(true)
}

/// Stops the profiler's collection on the current device
/// (`cuProfilerStop`): work queued after it is not profiled.
pub fn stop() -> Result<()> {
    set(false)
}

/// Runs `f` with the profiler's collection on, and stops it afterwards, also
/// when `f` fails.
pub fn scope<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    start()?;
    let result = f();
    let stopped = stop();
    let value = result?;
    stopped?;
    Ok(value)
}

/// Whether this process last started (rather than stopped, or never started)
/// the profiler's collection.
pub fn is_collecting() -> bool {
    COLLECTING.load(Ordering::SeqCst)
}

fn set(on: bool) -> Result<()> {
    let device = Device::current()?;
    let state = device::state(device.ordinal())?;
    crate::backend::driver()
        .set_profiler_collection(device.ordinal(), on)
        .map_err(|e| state.error(e))?;
    COLLECTING.store(on, Ordering::SeqCst);
    Ok(())
}
