//! `mbarrier` (`gpu_device::mbarrier`): phases complete once every arrival
//! is in and never run ahead of a thread that has not arrived; a phase that
//! can never complete (a byte count no copy meets, an arrival missing) is a
//! report naming the barrier on the simulator, not a hang; an arrival count
//! out of range is refused; a thread's second arrival on one phase is
//! refused, and more arrivals than a phase counts reported; `init` called
//! on other barriers or with other counts than thread 0's (divergent
//! branches) is refused; `init` of barriers live in the block (one
//! `mbarriers!` evaluated twice) is refused, and the tags blocks before
//! left in shared memory are never taken for live barriers. Runs on the
//! simulator, and the tests not forcing it on a GPU of compute capability
//! 9.0 (the kernels are `sm_90a`'s).

use crate::common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_runtime::{launch, DeviceBuffer, Error, Stream, BACKEND_ENV};
use gpu_test_kernels::mbarrier::{
    mbarrier_count, mbarrier_divergent_init, mbarrier_extra_arrival, mbarrier_init_again,
    mbarrier_phases, mbarrier_two, AGAIN_IN_A_LOOP, AGAIN_UNDER_A_HANDLE, ARRIVE_TWICE,
    COUNT_SHORT, INIT_ONCE, INIT_OTHER_COUNTS, INIT_TOGETHER, INIT_TWO_ARRAYS, PHASES,
};

// Phases past the first two: the parity wraps.
const _: () = assert!(PHASES > 2);

#[test]
fn phases_complete_once_every_thread_arrived() {
    let stream = Stream::new().unwrap();
    // One warp, a block of partial warps, several blocks.
    for (blocks, threads) in [(1u32, 32u32), (1, 100), (3, 64)] {
        let mut counters = DeviceBuffer::<u32>::zeroed_on(blocks as usize, &stream).unwrap();
        let n = (blocks * threads) as usize;
        let mut out = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
        launch!(mbarrier_phases[blocks, threads, stream](&mut counters, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        assert_eq!(got, vec![1; n], "{blocks} blocks of {threads}");
    }
}

#[test]
fn two_barriers_of_one_invocation_each_complete_their_phase() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    // No bytes expected: thread 0's `arrive_expect_tx(0)` is an arrival.
    launch!(mbarrier_two[1, 64, stream](0, 0, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![2; 64]);
}

/// The report of the launch on `stream`, which must fail: its message.
fn failure(stream: &Stream) -> String {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => format!("{kernel}: {}", driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// A wrong `expect_tx` byte count and a missing arrival: every thread
/// waits on a phase nothing can complete (on a GPU, a hang), which the
/// simulator reports at once, naming the barrier and what the phase still
/// expects; arrival counts outside PTX's range are refused. Each on a
/// device of its own (a failed kernel ends its device).
#[test]
fn phases_that_never_complete_and_bad_counts_are_reported() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let never = [
        (
            (16, 0),
            "mbarrier 0 for phase 0, which never completes: it still expects 0 of its 64 arrivals and 16 bytes",
        ),
        (
            (0, 1),
            "mbarrier 1 for phase 0, which never completes: it still expects 1 of its 65 arrivals and 0 bytes",
        ),
    ];
    for ((bytes, extra), expected) in never {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
        launch!(mbarrier_two[1, 64, stream](bytes, extra, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("mbarrier_two")
                && message.contains("deadlock: every thread of the block waits on")
                && message.contains(expected),
            "{bytes} bytes, {extra} extra: {message}"
        );
    }
    for count in [0, 1 << 20] {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
        launch!(mbarrier_count[1, 32, stream](count, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.contains(&format!(
                "MBarriers::init: an arrival count of {count} is outside 1 ..= 1048575"
            )),
            "{count}: {message}"
        );
    }
    // In range, the count is kept.
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(mbarrier_count[1, 32, stream]((1 << 20) - 1, &mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![(1 << 20) - 1; 32]
    );
}

/// More arrivals than a phase counts, as an H100 refuses ("Unknown Error"
/// at the arrive, 2026-11-27): a thread's second arrival before its wait is
/// refused at the arrival (with or without bytes expected); with a count
/// below the threads that arrive, the arrival for a phase that completed
/// without it, or on a phase that waits for bytes only, is reported, naming
/// the barrier. On the simulator, each on a device of its own.
#[test]
fn arrivals_past_a_phases_count_are_reported() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let twice = "MBarrier::arrive: thread 0 of the block arrives on mbarrier 0 twice in phase 0 (of 64 arrivals): a thread arrives at most once a phase";
    let cases = [
        (0, ARRIVE_TWICE, twice),
        (16, ARRIVE_TWICE, twice),
        (0, COUNT_SHORT, "of the block arrives on mbarrier 0 for phase 0, which completed without it (phase 1 is in progress): more threads arrive on a phase than its 32 arrivals"),
        (16, COUNT_SHORT, "mbarrier 0: an arrival on phase 0, which has all 32 of its arrivals and waits for 16 bytes of transactions only"),
    ];
    for (bytes, which, expected) in cases {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
        launch!(mbarrier_extra_arrival[1, 64, stream](bytes, which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("mbarrier_extra_arrival") && message.contains(expected),
            "{bytes} bytes, case {which}: {message}"
        );
    }
}

/// A thread's second arrival on one phase fails the launch on whatever
/// device runs the suite: a trap on a GPU (the check is the handle's, on
/// every target), a report on the simulator.
#[test]
fn a_second_arrival_in_one_phase_fails_the_launch() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(mbarrier_extra_arrival[1, 64, stream](0, ARRIVE_TWICE, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(message.starts_with("mbarrier_extra_arrival"), "{message}");
}

/// `init` is a collective: threads that initialise another `mbarriers!`
/// than thread 0 (the one that initialises) in a divergent branch, or the
/// same with other counts, are refused, naming the thread; called together
/// by every thread, the barrier works. On the simulator, each on a device
/// of its own.
#[test]
fn divergent_inits_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let cases = [
        (INIT_TWO_ARRAYS, "MBarriers::init: thread 16 of the block initialises other barriers (another mbarriers!, in a branch thread 0 did not take) than thread 0 did; init is a collective"),
        (INIT_OTHER_COUNTS, "MBarriers::init: thread 1 of the block initialises the same barriers with other arrival counts than thread 0 did"),
    ];
    for (which, expected) in cases {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
        launch!(mbarrier_divergent_init[1, 32, stream](which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("mbarrier_divergent_init") && message.contains(expected),
            "case {which}: {message}"
        );
    }
}

/// Divergent `init`s fail the launch on whatever device runs the suite (a
/// trap on a GPU, where thread 16's barrier would otherwise be used
/// uninitialised), and `init` called together runs (two blocks).
#[test]
fn divergent_inits_fail_the_launch_and_a_collective_init_runs() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(mbarrier_divergent_init[2, 32, stream](INIT_TOGETHER, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 64]);
    launch!(mbarrier_divergent_init[1, 32, stream](INIT_TWO_ARRAYS, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(message.starts_with("mbarrier_divergent_init"), "{message}");
}

/// What `init` says of barriers initialised already in the block.
const LIVE: &str = "MBarriers::init: these mbarriers are initialised already in this block and their handles may be in use";

/// One `mbarriers!` initialised twice in a block, in a loop's second round
/// or through a closure called twice while the first handle lives (whose
/// wait would then return at once, a witness of a phase that never
/// completed): refused in every thread, naming the problem; initialised
/// once, in two blocks, it runs. On the simulator, each on a device of its
/// own.
#[test]
fn a_second_init_of_live_barriers_is_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    for which in [AGAIN_IN_A_LOOP, AGAIN_UNDER_A_HANDLE] {
        let stream = next_device();
        let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
        launch!(mbarrier_init_again[2, 64, stream](which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("mbarrier_init_again") && message.contains(LIVE),
            "case {which}: {message}"
        );
    }
    let stream = next_device();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(mbarrier_init_again[2, 64, stream](INIT_ONCE, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; 128]);
}

/// A second `init` of live barriers fails the launch on whatever device
/// runs the suite (a trap on a GPU).
#[test]
fn a_second_init_of_live_barriers_fails_the_launch() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(mbarrier_init_again[1, 64, stream](AGAIN_UNDER_A_HANDLE, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(message.starts_with("mbarrier_init_again"), "{message}");
}

/// Barriers initialised once a block, in many blocks (more than a GPU's
/// SMs or the simulator's workers hold at once) and several launches: each
/// block finds shared memory an earlier block (of this launch or one
/// before) left its tag in, and initialises, never taking that tag for its
/// own.
#[test]
fn tags_left_by_earlier_blocks_and_launches_are_not_live() {
    let stream = Stream::new().unwrap();
    let (blocks, threads) = (300u32, 32u32);
    let n = (blocks * threads) as usize;
    for round in 0..3 {
        let mut counters = DeviceBuffer::<u32>::zeroed_on(blocks as usize, &stream).unwrap();
        let mut phases = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
        let mut once = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
        launch!(mbarrier_phases[blocks, threads, stream](&mut counters, &mut phases)).unwrap();
        launch!(mbarrier_init_again[blocks, threads, stream](INIT_ONCE, &mut once)).unwrap();
        for (what, out) in [("mbarrier_phases", &phases), ("init once", &once)] {
            let got = out.copy_to_host_sync(&stream).unwrap();
            assert_eq!(got, vec![1; n], "{what}, round {round}");
        }
    }
}
