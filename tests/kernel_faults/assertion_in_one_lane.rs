//! An assertion that fails in one thread of each warp (an attack on the
//! report: many threads fail at once, in different warps and blocks). The
//! first to claim the device's record reports: one whole report, of a
//! thread whose assertion did fail. It runs in a process of its own (a
//! failed assertion ends the CUDA context).

use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream};
use gpu_test_kernels::output::assert_lane_is_not;

#[test]
fn an_assertion_in_one_lane_of_each_warp_reports_one_of_them_whole() {
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(256, &stream).unwrap();
    launch!(assert_lane_is_not[2, 128, stream](7, &mut out)).unwrap();
    match stream.synchronize().unwrap_err() {
        Error::KernelAssertion {
            kernel,
            block,
            thread,
            message,
            ..
        } => {
            assert_eq!(kernel, "assert_lane_is_not");
            assert!(block[0] < 2 && block[1] == 0 && block[2] == 0, "{block:?}");
            assert_eq!(thread[0] % 32, 7, "{thread:?}");
            assert_eq!(
                message,
                "assertion failed: gpu_device::warp::lane_id() != lane"
            );
            if backend() == Backend::Simulator {
                // The simulator runs each block's threads in order; its
                // blocks run on every core, so either block may fail first.
                assert_eq!(thread, [7, 0, 0], "block {block:?}");
            }
        }
        other => panic!("expected KernelAssertion, got {other:?}: {other}"),
    }
}
