//! The in-order barrier against the general path: a barrier waits for the
//! whole block however the round is broken, and every way of breaking it
//! is reported as before (launches of hand-written host entries).

use super::super::{run, KernelCall};
use gpu_device::thread::{block_dim, block_idx, thread_idx};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

/// None of the block's threads.
const NONE: u32 = u32::MAX;

/// What one test's kernel does, and what it saw.
struct Plan {
    /// Barrier phases each thread goes through.
    phases: u32,
    /// This thread returns before its first barrier.
    exits: u32,
    /// This thread waits at a block vote instead of its first barrier.
    votes: u32,
    /// This thread waits at `sync_warp` over its whole warp instead of its
    /// first barrier.
    whole_warp: u32,
    /// This thread waits at `sync_warp` over itself before each barrier.
    own_lane: u32,
    /// Per thread of each block, the value it wrote last.
    slots: Vec<AtomicU32>,
    /// Reads that saw another phase's value: a barrier that did not wait.
    wrong: AtomicU32,
    /// Threads that finished (in every block).
    finished: AtomicU32,
}

impl Plan {
    fn new(threads: usize) -> Plan {
        Plan {
            phases: 5,
            exits: NONE,
            votes: NONE,
            whole_warp: NONE,
            own_lane: NONE,
            slots: (0..threads).map(|_| AtomicU32::new(NONE)).collect(),
            wrong: AtomicU32::new(0),
            finished: AtomicU32::new(0),
        }
    }
}

/// The kernel: each phase, each thread writes its slot, waits at a barrier,
/// reads its neighbour's slot (which must hold this phase's value), and
/// waits again.
///
/// # Safety
/// `params` points to one parameter, the address of a live `Plan`.
unsafe fn kernel(params: *const *mut c_void) {
    // SAFETY: the launch's one parameter holds the address of the test's
    // `Plan`, which outlives the launch.
    let plan = unsafe { &*(*(*params as *const usize) as *const Plan) };
    let (i, d) = (thread_idx(), block_dim());
    let t = i.x + d.x * (i.y + d.y * i.z);
    let n = d.x * d.y * d.z;
    let slots = &plan.slots[(block_idx().x * n) as usize..][..n as usize];
    if t == plan.exits {
        return;
    }
    for phase in 0..plan.phases {
        slots[t as usize].store(phase * 10_000 + t, Relaxed);
        if t == plan.own_lane {
            gpu_device::sync::sync_warp(1 << (t % 32));
        }
        if phase == 0 && t == plan.votes {
            gpu_device::vote::sync_threads_count(true);
        } else if phase == 0 && t == plan.whole_warp {
            gpu_device::sync::sync_warp(gpu_device::warp::FULL_MASK);
        } else {
            gpu_device::sync_threads();
        }
        let u = (t + 1) % n;
        if slots[u as usize].load(Relaxed) != phase * 10_000 + u {
            plan.wrong.fetch_add(1, Relaxed);
        }
        gpu_device::sync_threads();
    }
    plan.finished.fetch_add(1, Relaxed);
}

/// Launches `kernel` over `grid` blocks of `block` threads with `plan`.
fn launch(grid: u32, block: [u32; 3], plan: &Plan) -> Result<(), String> {
    let address = plan as *const Plan as usize;
    let call = Arc::new(KernelCall {
        kernel: "in_order_test",
        globals: None,
        call: kernel,
        params: vec![vec![address as u128].into_boxed_slice()],
        grid: [grid, 1, 1],
        block,
        shared_bytes: 0,
        cooperative: false,
        cluster: None,
    });
    run(&call)
}

fn threads(block: [u32; 3]) -> usize {
    block.iter().product::<u32>() as usize
}

#[test]
fn barriers_wait_for_the_whole_block_of_every_shape() {
    for block in [[1, 1, 1], [2, 1, 1], [33, 1, 1], [256, 1, 1], [4, 3, 2]] {
        let plan = Plan::new(threads(block));
        launch(1, block, &plan).unwrap();
        assert_eq!(plan.wrong.load(Relaxed), 0, "{block:?}");
        assert_eq!(
            plan.finished.load(Relaxed) as usize,
            threads(block),
            "{block:?}"
        );
    }
}

#[test]
fn a_round_broken_by_a_warp_operation_still_waits_for_the_whole_block() {
    for own_lane in [0, 1, 31, 40, 63] {
        let mut plan = Plan::new(64);
        plan.own_lane = own_lane;
        launch(1, [64, 1, 1], &plan).unwrap();
        assert_eq!(plan.wrong.load(Relaxed), 0, "lane {own_lane}");
        assert_eq!(plan.finished.load(Relaxed), 64, "lane {own_lane}");
    }
}

#[test]
fn a_thread_that_exits_before_the_barrier_is_reported() {
    for exits in [0, 1, 17, 63] {
        let mut plan = Plan::new(64);
        plan.exits = exits;
        let error = launch(1, [64, 1, 1], &plan).unwrap_err();
        assert!(
            error.contains("sync_threads() is not reached by every thread of the block")
                && error.contains(&format!("(thread {exits} exited first)")),
            "thread {exits}: {error}"
        );
    }
}

#[test]
fn threads_at_different_barriers_are_reported() {
    for votes in [0, 1, 17, 63] {
        let mut plan = Plan::new(64);
        plan.votes = votes;
        let error = launch(1, [64, 1, 1], &plan).unwrap_err();
        assert!(
            error.contains("threads of the block wait at different barriers")
                && error.contains("a block vote"),
            "thread {votes}: {error}"
        );
    }
}

#[test]
fn a_barrier_beside_a_warp_operation_is_a_deadlock() {
    for whole_warp in [0, 5, 31, 32, 63] {
        let mut plan = Plan::new(64);
        plan.whole_warp = whole_warp;
        let error = launch(1, [64, 1, 1], &plan).unwrap_err();
        assert!(
            error.contains("deadlock: threads wait at a barrier"),
            "thread {whole_warp}: {error}"
        );
    }
}

#[test]
fn blocks_on_several_os_threads_each_wait_for_their_own() {
    let plan = Plan::new(6 * 96);
    launch(6, [96, 1, 1], &plan).unwrap();
    assert_eq!(plan.wrong.load(Relaxed), 0);
    assert_eq!(plan.finished.load(Relaxed), 6 * 96);
}
