//! A future awaiting a stream whose kernel faults completes with the error,
//! naming the kernel, instead of never waking (CUDA calls host functions no
//! more after a fault; the futures use the callback that is called with the
//! error). It runs in a process of its own: a fault ends the CUDA context.

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels as testing;
use std::time::Duration;

#[test]
fn a_kernel_fault_completes_the_future_with_the_error() {
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    // On `stream`, not the current stream (kernel_panic.rs says why).
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::panic_if[1, 64, stream](1, &mut out)).unwrap();
    let done = stream.async_done().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let outcome = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), done).await })
        .expect("the future completed: a fault wakes it");
    match outcome {
        Err(Error::KernelFailed { kernel, .. }) => assert_eq!(kernel, "panic_if"),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}
