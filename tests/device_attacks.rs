//! Attacks on the device side's promises that need a launch to show: each
//! test misuses the API from safe code and checks that the launch fails with
//! a report naming what was wrong, never that it runs with undefined
//! behaviour or a silently wrong result. (Attacks the type system refuses
//! are compile-fail cases in `tests/ui/`.)
//!
//! The simulator is forced for this binary: the failures are traps on a GPU,
//! which end the CUDA context for the rest of the process.

use gpu_kernels::testing::attacks::{self, warp_call};
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

/// The report of the kernel that failed on `stream`: its name and message.
fn failure(stream: &Stream) -> (String, String) {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => (kernel.to_string(), driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// Attacks the warp functions: a lane calls them with a mask that leaves it
/// out (PTX leaves `shfl.sync`, `vote.sync` and `bar.warp.sync` undefined
/// then; the simulator used to pair the calls up and return a value).
#[test]
fn a_warp_function_called_by_a_lane_outside_its_mask_fails() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    for call in [
        warp_call::SHUFFLE,
        warp_call::SHUFFLE_DOWN,
        warp_call::BALLOT,
        warp_call::SYNC_WARP,
    ] {
        // Lanes 16..32 call with a mask naming lanes 0..16 only.
        launch!(attacks::warp_call_with_mask[1, 32, stream](call, 0x0000_ffff, &mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "warp_call_with_mask");
        assert!(
            message.contains("with the mask 0x0000ffff, which leaves that lane out"),
            "call {call}: {message}"
        );
        // The mask naming every caller works.
        launch!(attacks::warp_call_with_mask[1, 32, stream](call, u32::MAX, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        let expected: Vec<u32> = match call {
            warp_call::SHUFFLE => vec![0; 32],
            warp_call::SHUFFLE_DOWN => (0..32).map(|l: u32| (l + 1).min(31)).collect(),
            warp_call::BALLOT => vec![u32::MAX; 32],
            _ => (0..32).collect(),
        };
        assert_eq!(got, expected, "call {call}");
    }
}
