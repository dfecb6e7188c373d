//! Attacks on the device side's promises that need a launch to show: each
//! test misuses the API from safe code and checks that the launch fails with
//! a report naming what was wrong, never that it runs with undefined
//! behaviour or a silently wrong result. (Attacks the type system refuses
//! are compile-fail cases in `tests/ui/`.)
//!
//! The simulator is forced for this binary: the failures are traps on a GPU,
//! which end the CUDA context for the rest of the process.

use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream, BACKEND_ENV};
use gpu_test_kernels::attacks::{self, warp_call};
use std::sync::Once;

// SAFETY: test scaffolding for the kernels of this file, which run on the
// simulator only (this binary forces it), from their host entry points: no
// PTX is ever loaded from it.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule =
    unsafe { gpu_runtime::EmbeddedModule::new("device_attacks", "") };

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

/// Attacks the project's own kernels that write per-block results through
/// the `unsafe` escape hatch (`sums[block_idx().x]`, one writer per block):
/// in a two-dimensional grid, blocks (x, 0) and (x, 1) both wrote element x
/// (a data race), and `add_unchecked`'s threads (x, 0) and (x, 1) both wrote
/// element `grid_1d()`. They take the one-dimensional witness now, which
/// fails in other launch shapes.
#[test]
fn kernels_writing_per_block_results_refuse_two_dimensional_grids() {
    use gpu_ops::sum_partials;
    use gpu_test_kernels::{add_unchecked, block_sum_shuffles, block_sum_static};
    let stream = simulator();
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
    launch!(block_sum_static[(2, 2), 64, stream](&ones, &mut sums)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "block_sum_static");
    assert!(message.contains("use thread_index_2d()"), "{message}");
    launch!(block_sum_shuffles[(2, 2), 64, stream](&ones, &mut sums)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "block_sum_shuffles");
    assert!(message.contains("use thread_index_2d()"), "{message}");

    let mut out = DeviceBuffer::<f32>::zeroed_on(256, &stream).unwrap();
    launch!(add_unchecked[(2, 2), 64, stream](&ones, &ones, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "add_unchecked");
    assert!(message.contains("use thread_index_2d()"), "{message}");

    let input = DeviceBuffer::to_device_sync(&[1u32; 1024], &stream).unwrap();
    let mut partials = DeviceBuffer::<u64>::zeroed_on(4, &stream).unwrap();
    launch!(sum_partials::<u32>[(2, 2), 64, stream, 16](&input, &mut partials)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "sum_partials");
    assert!(message.contains("use thread_index_2d()"), "{message}");

    // In one-dimensional grids they work.
    launch!(block_sum_static[4, 64, stream](&ones, &mut sums)).unwrap();
    assert_eq!(sums.copy_to_host_sync(&stream).unwrap(), vec![64.0; 4]);
    launch!(sum_partials::<u32>[4, 64, stream, 16](&input, &mut partials)).unwrap();
    let got = partials.copy_to_host_sync(&stream).unwrap();
    assert_eq!(got.iter().sum::<u64>(), 1024, "{got:?}");
}

/// Attacks `sum_partials`'s other launch assumptions: blocks of a multiple
/// of 32 threads (its warp sums shuffle over full warps) and one slot of
/// dynamic shared memory per warp. With too little shared memory the warps'
/// sums were dropped and the partial came out 0, silently.
#[test]
fn sum_partials_refuses_launches_it_would_sum_wrongly() {
    use gpu_ops::sum_partials;
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[1u32; 64], &stream).unwrap();
    let mut partials = DeviceBuffer::<u64>::zeroed_on(1, &stream).unwrap();
    launch!(sum_partials::<u32>[1, 64, stream, 0](&input, &mut partials)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "sum_partials");
    assert!(
        message.contains("needs 16 bytes of dynamic shared memory"),
        "{message}"
    );
    launch!(sum_partials::<u32>[1, 48, stream, 16](&input, &mut partials)).unwrap();
    let (_, message) = failure(&stream);
    assert!(
        message.contains("blocks of a multiple of 32 threads"),
        "{message}"
    );
    launch!(sum_partials::<u32>[1, 64, stream, 16](&input, &mut partials)).unwrap();
    assert_eq!(partials.copy_to_host_sync(&stream).unwrap(), vec![64]);
}

/// Attacks the block votes: half of a block votes while the other half
/// waits at `sync_threads()`. The vote has a barrier of its own, so the two
/// never pair up: a GPU hangs, and the simulator names both barriers.
#[test]
fn a_vote_beside_sync_threads_is_reported() {
    use gpu_test_kernels::votes::vote_beside_sync_threads;
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(vote_beside_sync_threads[1, 64, stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "vote_beside_sync_threads");
    assert!(
        message.contains("wait at different barriers")
            && message.contains("a block vote (sync_threads_count/_and/_or)")
            && message.contains("sync_threads()"),
        "{message}"
    );
}

/// Attacks the shared arrays' ownership maps with block shapes they were
/// not made for: a halo span too small for the block, register tiles of
/// another thread count, a per-warp array with fewer slots than warps.
/// Each write that would go past its array, or onto another thread's
/// slot, fails the launch with a report naming it.
#[test]
fn shared_maps_in_blocks_they_were_not_made_for_fail() {
    let stream = simulator();
    let x = DeviceBuffer::to_device_sync(&[1.0f32; 512], &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    // 128 threads fit the span; 256 do not.
    launch!(attacks::halo_in_any_block[1, 128, stream](&x, &mut out)).unwrap();
    stream.synchronize().unwrap();
    launch!(attacks::halo_in_any_block[1, 256, stream](&x, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "halo_in_any_block");
    assert!(
        message.contains("halo slot")
            && message.contains("out of range for a shared array of 132 slots"),
        "{message}"
    );

    launch!(attacks::shared_tiles_in_any_block[1, 256, stream](&mut out)).unwrap();
    stream.synchronize().unwrap();
    for threads in [128u32, 512] {
        launch!(attacks::shared_tiles_in_any_block[1, threads, stream](&mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "shared_tiles_in_any_block");
        assert!(
            message.contains(&format!(
                "made for blocks of 256 threads; this block has {threads}"
            )),
            "{message}"
        );
    }

    let mut counts = DeviceBuffer::<u32>::zeroed_on(512, &stream).unwrap();
    launch!(attacks::warp_slots_too_few[1, 128, stream](&mut counts)).unwrap();
    stream.synchronize().unwrap();
    launch!(attacks::warp_slots_too_few[1, 160, stream](&mut counts)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "warp_slots_too_few");
    assert!(
        message.contains("warp 4's slot (one slot per warp of the block) is out of range for a shared array of 4 slots"),
        "{message}"
    );
}
