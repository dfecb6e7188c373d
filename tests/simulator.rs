//! The CPU simulator reports what a GPU would hide: an out-of-bounds access,
//! a `sync_threads` not reached by every thread, a shuffle with exited lanes,
//! and panics, each naming the kernel, block and thread; none hangs.
//!
//! The simulator is forced for this binary, so it runs the same on a GPU
//! machine (scripts/gpu-bundle.sh) as in CI.

use gpu_kernels::testing;
use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream, BACKEND_ENV};
use std::sync::Once;

fn simulator() -> Stream {
    static FORCE: Once = Once::new();
    // Every test calls this first, so no thread reads the environment while
    // it is set.
    FORCE.call_once(|| std::env::set_var(BACKEND_ENV, "simulator"));
    assert_eq!(backend(), Backend::Simulator);
    Stream::new().unwrap()
}

fn failure(stream: &Stream) -> (String, String) {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => (kernel.to_string(), driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

#[test]
fn an_out_of_bounds_read_names_kernel_block_and_thread() {
    let stream = simulator();
    let x = DeviceBuffer::to_device_sync(&[1u32, 2, 3], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::read_at[2, 32, stream](&x, 3, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "read_at");
    assert!(
        message.starts_with("kernel `read_at`, block ("),
        "{message}"
    );
    assert!(
        message.contains("index out of bounds: the len is 3 but the index is 3"),
        "{message}"
    );
    // In bounds, the same kernel works: the simulator carries on.
    launch!(testing::read_at[2, 32, stream](&x, 2, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![3; 64]);
}

#[test]
fn a_barrier_not_reached_by_every_thread_is_reported_not_hung_on() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(testing::divergent_barrier[1, 128, stream](0, &mut out)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![1; 128],
        "every thread reaching it passes"
    );
    launch!(testing::divergent_barrier[1, 128, stream](5, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "divergent_barrier");
    assert!(message.contains("block (0, 0, 0)"), "{message}");
    assert!(
        message.contains("sync_threads() is not reached by every thread"),
        "{message}"
    );
}

#[test]
fn a_shuffle_with_exited_lanes_is_reported() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::shuffle_after_exit[1, 64, stream](0, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert_eq!(got[..3], [1, 2, 3]);
    assert_eq!(got[31], 31, "the last lane keeps its own value");
    launch!(testing::shuffle_after_exit[1, 64, stream](3, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(
        message.contains("names lane 0 in its mask, but that thread exited"),
        "{message}"
    );
}

#[test]
fn a_panic_names_its_block_and_thread() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    launch!(testing::panic_at[4, 64, stream](2, 17, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "panic_at");
    assert!(
        message.starts_with("kernel `panic_at`, block (2, 0, 0), thread (17, 0, 0): panicked: thread 17 of block 2 gave up"),
        "{message}"
    );
}

#[test]
fn the_simulated_device_describes_itself() {
    let _stream = simulator();
    let device = gpu_runtime::Device::get(0).unwrap();
    assert_eq!(device.name(), "CPU simulator");
    assert_eq!(device.limits().max_threads_per_block, 1024);
    let (free, total) = device.memory_info().unwrap();
    assert!(free <= total && total >= 1 << 30);
}
