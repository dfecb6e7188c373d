//! A `#[vectorize(reduce)]` kernel launched by hand with more threads than
//! elements: the pass refuses (a kernel failure naming it) rather than
//! combine elements that are not there. It runs in a process of its own: on
//! a GPU the trap ends the CUDA context for the rest of the process.

use gpu_runtime::{launch, Backend, DeviceBuffer, Error, Stream};
use gpu_test_kernels::vectorized::sum_reduce;

#[test]
fn a_reduce_pass_with_a_thread_without_an_element_fails_naming_the_kernel() {
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let s = Stream::new().unwrap();
    let x = DeviceBuffer::to_device_sync(&[1.0f64, 2.0, 3.0], &s).unwrap();
    let mut partials = DeviceBuffer::<f64>::zeroed_on(1, &s).unwrap();
    let error = launch!(sum_reduce::sum_reduce_reduce[1, 32, s](&x, &mut partials))
        .and_then(|()| s.synchronize())
        .unwrap_err();
    match &error {
        Error::KernelFailed { kernel, .. } => assert_eq!(*kernel, "sum_reduce_reduce"),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
    if gpu_runtime::backend() == Backend::Simulator {
        let message = error.to_string();
        assert!(message.contains("an element per thread"), "{message}");
    }
}
