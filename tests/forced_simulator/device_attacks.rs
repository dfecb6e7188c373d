//! Attacks on the device side's promises that need a launch to show: each
//! test misuses the API from safe code and checks that the launch fails with
//! a report naming what was wrong, never that it runs with undefined
//! behaviour or a silently wrong result. (Attacks the type system refuses
//! are compile-fail cases in `tests/ui/`.)
//!
//! The simulator is forced for this binary: the failures are traps on a GPU,
//! which end the CUDA context for the rest of the process. They end the
//! simulated device too: each test that fails a launch runs in a process of
//! its own, with a device for each failure it checks.

use crate::common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream};
use gpu_test_kernels::attacks::{self, warp_call};

fn simulator() -> Stream {
    crate::force_simulator();
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
    if !in_own_simulator_process() {
        return;
    }
    simulator();
    for call in [
        warp_call::SHUFFLE,
        warp_call::SHUFFLE_DOWN,
        warp_call::BALLOT,
        warp_call::SYNC_WARP,
    ] {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
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
        // Lanes 16..32 call with a mask naming lanes 0..16 only.
        launch!(attacks::warp_call_with_mask[1, 32, stream](call, 0x0000_ffff, &mut out)).unwrap();
        let (kernel, message) = failure(&stream);
        assert_eq!(kernel, "warp_call_with_mask");
        assert!(
            message.contains("with the mask 0x0000ffff, which leaves that lane out"),
            "call {call}: {message}"
        );
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
    use gpu_test_kernels::{add_unchecked, block_sum_shuffles, block_sum_static};
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    // In one-dimensional grids they work.
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
    launch!(block_sum_static[4, 64, stream](&ones, &mut sums)).unwrap();
    assert_eq!(sums.copy_to_host_sync(&stream).unwrap(), vec![64.0; 4]);

    // In two-dimensional grids they fail (each on a device of its own: a
    // failure ends its device).
    let stream = next_device();
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
    launch!(block_sum_static[(2, 2), 64, stream](&ones, &mut sums)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "block_sum_static");
    assert!(message.contains("use thread_index_2d()"), "{message}");

    let stream = next_device();
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
    launch!(block_sum_shuffles[(2, 2), 64, stream](&ones, &mut sums)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "block_sum_shuffles");
    assert!(message.contains("use thread_index_2d()"), "{message}");

    let stream = next_device();
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(256, &stream).unwrap();
    launch!(add_unchecked[(2, 2), 64, stream](&ones, &ones, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "add_unchecked");
    assert!(message.contains("use thread_index_2d()"), "{message}");
}

/// Attacks `sum_partials`'s launch assumptions. It used to need
/// one-dimensional grids, blocks of whole warps and one slot of dynamic
/// shared memory per warp (with too little, the warps' sums were dropped
/// and the partial came out 0, silently); rebuilt on the per-block map, the
/// grid-stride items and the block reduction, every launch shape sums all
/// of its input, and a partials slice shorter than the grid fails the
/// launch instead of dropping a block's sum.
#[test]
fn sum_partials_sums_everything_in_any_launch_shape() {
    use gpu_ops::sum_partials;
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[1u32; 1031], &stream).unwrap();
    let mut partials = DeviceBuffer::<u64>::zeroed_on(8, &stream).unwrap();
    let total = |p: &DeviceBuffer<u64>| p.copy_to_host_sync(&stream).unwrap().iter().sum::<u64>();
    launch!(sum_partials::<u32>[(2, 2), 64, stream](&input, &mut partials)).unwrap();
    assert_eq!(total(&partials), 1031);
    partials.zero(&stream).unwrap();
    launch!(sum_partials::<u32>[3, 48, stream](&input, &mut partials)).unwrap();
    assert_eq!(total(&partials), 1031);
    partials.zero(&stream).unwrap();
    launch!(sum_partials::<u32>[(2, 1, 2), (8, 3, 2), stream](&input, &mut partials)).unwrap();
    assert_eq!(total(&partials), 1031);
    launch!(sum_partials::<u32>[9, 64, stream](&input, &mut partials)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "sum_partials");
    assert!(message.contains("has 8 partials"), "{message}");
}

/// Attacks the block votes: half of a block votes while the other half
/// waits at `sync_threads()`. The vote has a barrier of its own, so the two
/// never pair up: a GPU hangs, and the simulator names both barriers.
#[test]
fn a_vote_beside_sync_threads_is_reported() {
    if !in_own_simulator_process() {
        return;
    }
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

/// Attacks the look-back's ownership of tiles (`gpu_device::lookback`): a
/// tile counter that is not zero at the launch, status words left from an
/// earlier launch, a block that claims twice, blocks of partial warps and
/// a claim in a divergent branch. Each fails its launch with a report;
/// none writes a tile twice or reports a wrong sum as right.
#[test]
fn look_back_misuses_fail_their_launch() {
    use gpu_device::lookback::TileStatus;
    use gpu_ops::scan::{scan_tiles, SumU32, TILE};
    use gpu_runtime::LaunchConfig;
    if !in_own_simulator_process() {
        return;
    }
    simulator();
    // Each failure on a device of its own (a failure ends its device).
    let stream = next_device();
    let n = 3 * TILE + 5;
    let input = DeviceBuffer::to_device_sync(&vec![1u32; n], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
    let tiles = n.div_ceil(TILE);
    let config = || LaunchConfig::new(tiles, 128).stream(&stream);

    // A counter left at the previous launch's count: every claim is past
    // the status words. (A counter at 1 fails the same on a GPU, where the
    // blocks are all resident; the simulator, running a few blocks at a
    // time, may first run blocks waiting for the tile nobody claimed, which
    // its watchdog reports after `GPU_SIM_TIMEOUT_SECS`.)
    let mut counter = DeviceBuffer::to_device_sync(&[tiles as u32], &stream).unwrap();
    let mut status = DeviceBuffer::<TileStatus>::zeroed_on(tiles, &stream).unwrap();
    scan_tiles::Launcher::new(config())
        .launch::<SumU32>(&input, &mut out, &mut counter, &mut status)
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "scan_tiles");
    assert!(
        message.contains("the counter was not zero at the launch"),
        "{message}"
    );

    // A right launch, then the same status words again with a zeroed counter.
    let stream = next_device();
    let config = || LaunchConfig::new(tiles, 128).stream(&stream);
    let input = DeviceBuffer::to_device_sync(&vec![1u32; n], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
    let mut counter = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut status = DeviceBuffer::<TileStatus>::zeroed_on(tiles, &stream).unwrap();
    scan_tiles::Launcher::new(config())
        .launch::<SumU32>(&input, &mut out, &mut counter, &mut status)
        .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as u32));
    counter.zero(&stream).unwrap();
    scan_tiles::Launcher::new(config())
        .launch::<SumU32>(&input, &mut out, &mut counter, &mut status)
        .unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("was not empty"), "{message}");

    // Four blocks claiming twice each, four words.
    let stream = next_device();
    let mut counter = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut status = DeviceBuffer::<TileStatus>::zeroed_on(4, &stream).unwrap();
    let mut small = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    launch!(attacks::claim_twice[4, 64, stream](&mut small, &mut counter, &mut status)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "claim_twice");
    assert!(message.contains("4 tile status words"), "{message}");

    // Blocks of 48 threads: the look-back needs whole warps.
    let stream = next_device();
    let mut small = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    let mut counter = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut status = DeviceBuffer::<TileStatus>::zeroed_on(4, &stream).unwrap();
    launch!(attacks::claim_twice[1, 48, stream](&mut small, &mut counter, &mut status)).unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("whole warps"), "{message}");

    // Half the block claims.
    let stream = next_device();
    let mut small = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    let mut counter = DeviceBuffer::<u32>::zeroed_on(1, &stream).unwrap();
    let mut status = DeviceBuffer::<TileStatus>::zeroed_on(2, &stream).unwrap();
    launch!(attacks::claim_in_a_branch[2, 64, stream](&mut small, &mut counter, &mut status))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "claim_in_a_branch");
    assert!(message.contains("block collective"), "{message}");
}

/// Attacks the witness's promise on the simulator (issue 21, item 7): a
/// `ThreadIndex` put in a host `thread_local!` by thread 0 and taken by the
/// block's other 63 threads. They all wrote element 0, with no report (a
/// GPU has no such place, and each thread wrote its own). A witness now
/// records its simulated thread, and an output refuses it in another.
#[test]
fn a_witness_shared_through_a_thread_local_fails_the_launch() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(attacks::witness_shared_by_threads[1, 64, stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "witness_shared_by_threads");
    assert!(
        message.contains("block (0, 0, 0), thread (1, 0, 0): panicked: a ThreadIndex made by thread (0, 0, 0) of block (0, 0, 0) was used by another thread"),
        "{message}"
    );
}

/// The same attack between blocks (a 2-D witness left by one block for the
/// next on the same OS thread) and between launches (a 3-D witness left for
/// the next launch on the stream).
#[test]
fn witnesses_carried_to_other_blocks_and_launches_fail_them() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut matrix = DeviceBuffer::<u32>::zeroed_on(64 * 64, &stream).unwrap();
    launch!(attacks::witness_shared_by_blocks[(64, 8), (1, 8), stream](
        matrix.view_2d_mut(64, 64).unwrap()
    ))
    .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "witness_shared_by_blocks");
    assert!(
        message.contains(
            "thread (0, 0, 0): panicked: a ThreadIndex2d made by thread (0, 0, 0) of block ("
        ) && message.contains("was used by another thread"),
        "{message}"
    );

    // On another device: the failure above ended this one.
    let stream = next_device();
    let mut grid = DeviceBuffer::<u32>::zeroed_on(8, &stream).unwrap();
    let launch_once = |grid: &mut DeviceBuffer<u32>| {
        launch!(attacks::witness_kept_for_the_next_launch[(1, 1, 1), (2, 2, 2), stream](
            grid.view_3d_mut(2, 2, 2).unwrap()
        ))
    };
    // The first launch leaves its witness (or uses one an earlier test run
    // on this stream's thread left); the second uses the first's.
    launch_once(&mut grid).unwrap();
    let _ = stream.synchronize();
    launch_once(&mut grid).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "witness_kept_for_the_next_launch");
    assert!(
        message.contains(
            "a ThreadIndex3d made by a thread of another launch was used by another thread"
        ),
        "{message}"
    );
}

/// Attacks the phase token the same way: thread 0 leaves its `Writing`
/// token in a host `thread_local!` and returns; thread 1 takes it and
/// writes thread 0's slot with it.
#[test]
fn a_phase_token_taken_by_another_thread_fails_the_launch() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(attacks::phase_token_taken_by_another_thread[1, 32, stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "phase_token_taken_by_another_thread");
    assert!(
        message.contains("thread (1, 0, 0): panicked: a phase token (Block) made by thread (0, 0, 0) of block (0, 0, 0) was used by another thread"),
        "{message}"
    );
}

/// Attacks the entry point's shape token: a kernel keeps its body's
/// `thread_index` (the one-dimensional entry's, which trusts the launch's
/// shape and tests nothing) in a host `thread_local!`, and a later kernel
/// launched with a two-dimensional block calls it: every row of threads got
/// the same indices, and the element counts came out 4 and 0.
#[test]
fn a_witness_maker_kept_for_another_launch_fails_it() {
    if !in_own_simulator_process() {
        return;
    }
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    launch!(attacks::keep_the_witness_maker[1, 16, stream](&mut out)).unwrap();
    stream.synchronize().unwrap();
    launch!(attacks::use_a_kept_witness_maker[1, (4, 4), stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "use_a_kept_witness_maker");
    assert!(
        message.contains("a kernel entry's shape token made by a thread of another launch was used by another thread"),
        "{message}"
    );
}

/// A shared array's handle kept from an earlier block (a host
/// `thread_local!`) reaches the running block's array, as a GPU's address
/// does: the simulator keeps each OS thread's shared memory at the same
/// addresses, and never gives it back while the thread runs blocks (the
/// handle used to point into the earlier block's freed memory).
#[test]
fn a_shared_handle_kept_from_an_earlier_block_reaches_this_blocks_array() {
    let stream = simulator();
    let blocks = 48;
    let mut sums = DeviceBuffer::<u32>::zeroed_on(blocks * 64, &stream).unwrap();
    launch!(attacks::shared_handle_kept_by_a_later_block[blocks, 64, stream](&mut sums)).unwrap();
    let got = sums.copy_to_host_sync(&stream).unwrap();
    for (i, &sum) in got.iter().enumerate() {
        assert_eq!(sum, 64 * (i / 64) as u32, "thread {i}");
    }
}

/// Attacks the shared arrays' ownership maps with block shapes they were
/// not made for: a halo span too small for the block, register tiles of
/// another thread count, a per-warp array with fewer slots than warps.
/// Each write that would go past its array, or onto another thread's
/// slot, fails the launch with a report naming it.
#[test]
fn shared_maps_in_blocks_they_were_not_made_for_fail() {
    if !in_own_simulator_process() {
        return;
    }
    simulator();
    let stream = next_device();
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

    let stream = next_device();
    let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    launch!(attacks::shared_tiles_in_any_block[1, 256, stream](&mut out)).unwrap();
    stream.synchronize().unwrap();
    for threads in [128u32, 512] {
        let stream = next_device();
        let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
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

    let stream = next_device();
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

/// Attacks the leaders' and the maps' tokens as the witnesses are attacked
/// above: a `BlockLeader` or a grid-stride `Items` stashed by one simulated
/// thread in a host `thread_local!` and used by the others. Each use fails
/// the launch with a report naming both threads.
#[test]
fn a_leader_or_a_maps_token_used_by_another_thread_fails() {
    if !in_own_simulator_process() {
        return;
    }
    simulator();
    let stream = next_device();
    let mut sums = DeviceBuffer::<u32>::zeroed_on(2, &stream).unwrap();
    launch!(attacks::leader_shared_by_threads[2, 32, stream](&mut sums)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "leader_shared_by_threads");
    assert!(
        message.contains(
            "a BlockLeader made by thread (0, 0, 0) of block (0, 0, 0) was used by another thread"
        ),
        "{message}"
    );
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(attacks::items_shared_by_threads[1, 64, stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "items_shared_by_threads");
    assert!(
        message.contains("an Owned element index made by thread (0, 0, 0) of block (0, 0, 0) was used by another thread"),
        "{message}"
    );
}
