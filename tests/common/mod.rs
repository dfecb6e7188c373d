//! Helpers shared by the test binaries that run on both backends.

#![allow(dead_code)]

pub mod faults;

use gpu_runtime::{backend, Backend, Stream};
use std::thread::JoinHandle;
use std::time::Duration;

/// A work size: `gpu` on a GPU, where it keeps the device busy long enough for
/// ordering bugs to show; `simulator` on the CPU simulator, which runs every
/// simulated thread in turn (tens of nanoseconds each), and on a GPU under
/// compute-sanitizer (`GPU_TEST_SMALL=1`, set by `scripts/sanitize.sh`), whose
/// instrumentation slows kernels down as much.
pub fn size(gpu: usize, simulator: usize) -> usize {
    match backend() {
        Backend::Cuda if std::env::var_os("GPU_TEST_SMALL").is_none() => gpu,
        _ => simulator,
    }
}

/// For tests that hold streams with callbacks: on a GPU, `cuMemFree` in
/// another thread of the process waits for every stream and can hold up this
/// thread's driver calls until the hold ends, so such tests take turns.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Holds `stream` for `ms` milliseconds: work queued after this waits. Tests
/// that use it take turns ([`one_at_a_time`]).
pub fn hold(stream: &Stream, ms: u64) -> JoinHandle<()> {
    let (release, gate) = std::sync::mpsc::channel::<()>();
    stream
        .add_callback(move || {
            let _ = gate.recv_timeout(Duration::from_secs(10));
        })
        .unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        let _ = release.send(());
    })
}

/// The bytes this process's memory pool of `device` holds in live
/// allocations, polled until they are at most `before` plus 8 MiB (frees
/// are queued to a release thread) or 10 s passed. The pool is the
/// process's own: allocations of other processes on the GPU (a test run
/// in a process of its own has its parent beside it) do not count.
pub fn pool_used_after_release(device: &gpu_runtime::Device, before: u64) -> u64 {
    let start = std::time::Instant::now();
    loop {
        let now = device.memory_pool().stats().unwrap().used_bytes;
        if now <= before + (8 << 20) || start.elapsed() > Duration::from_secs(10) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Blocks of 256 threads covering `n` elements (at least one).
pub fn blocks(n: usize) -> usize {
    n.div_ceil(256).max(1)
}

/// A buffer of `n` copies of `value`, already on the device (the kernels'
/// module loaded).
pub fn filled(n: usize, value: f32, stream: &Stream) -> gpu_runtime::DeviceBuffer<f32> {
    let mut x = gpu_runtime::DeviceBuffer::<f32>::zeroed_on(n, stream).unwrap();
    gpu_runtime::launch!(gpu_kernels::fill[blocks(n), 256, stream](value, &mut x)).unwrap();
    stream.synchronize().unwrap();
    x
}

/// The name libtest gives the test `test` of the module whose
/// `module_path!()` is `module`: the module's path without the crate's name
/// (`graphs::dot::test` in the suite), for running it again in a child
/// process (`--exact`) or filtering a module's tests.
pub fn test_path(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{test}"),
        None => test.to_string(),
    }
}
