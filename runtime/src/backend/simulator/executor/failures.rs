//! What the executor says of a simulated thread that failed.

use super::super::settings::{settings, SIM_STACK_BYTES_ENV, SIM_TIMEOUT_ENV};
use super::thread_state::ThreadState;
pub(super) use crate::panic_message::panic_message;
use gpu_device::__private::simulation::SimulatedThread;

/// What a thread that overflowed its stack is told.
pub(super) fn stack_overflow(stack_bytes: usize) -> String {
    format!(
        "overflowed its stack of {stack_bytes} bytes (the simulator's stack for each GPU thread; a large local array or deep recursion needs more): set {SIM_STACK_BYTES_ENV} to more bytes, e.g. {SIM_STACK_BYTES_ENV}={}",
        (stack_bytes * 4).next_power_of_two()
    )
}

/// What the watchdog reports of a block without progress, seen while thread
/// `current` ran.
pub(super) fn stalled(
    status: &[ThreadState],
    started: &dyn Fn(usize) -> bool,
    current: usize,
    threads: &[SimulatedThread<'_>],
) -> String {
    let timeout = settings()
        .ok()
        .and_then(|s| s.timeout)
        .map_or(0.0, |t| t.as_secs_f64());
    let running: Vec<usize> = (0..status.len())
        .filter(|&t| {
            t == current
                || (started(t) && matches!(status[t], ThreadState::Ready | ThreadState::Yielded))
        })
        .collect();
    let shown: Vec<String> = running
        .iter()
        .take(8)
        .map(|&t| {
            let [x, y, z] = threads[t].thread_idx;
            format!("({x}, {y}, {z})")
        })
        .collect();
    let mut others = Vec::new();
    if running.len() > shown.len() {
        others.push(format!("{} more running", running.len() - shown.len()));
    }
    let count = |f: &dyn Fn(usize) -> bool| (0..status.len()).filter(|&t| f(t)).count();
    for (n, what) in [
        (count(&|t| t != current && !started(t)), "not started"),
        (
            count(&|t| matches!(status[t], ThreadState::AtBarrier(_))),
            "at sync_threads()",
        ),
        (
            count(&|t| matches!(status[t], ThreadState::AtWarp(_))),
            "at a warp operation",
        ),
        (
            count(&|t| t != current && status[t] == ThreadState::Done),
            "finished",
        ),
    ] {
        if n > 0 {
            others.push(format!("{n} {what}"));
        }
    }
    let others = match others.is_empty() {
        true => String::new(),
        false => format!("; {}", others.join(", ")),
    };
    format!(
        "made no progress for {timeout} s ({SIM_TIMEOUT_ENV}): no thread of the block finished, reached a barrier or warp operation, or changed memory with an atomic. Threads running: {}{others}. A thread spinning on memory that no thread changes, or looping without end, never finishes; on a GPU this launch would hang",
        shown.join(", ")
    )
}
