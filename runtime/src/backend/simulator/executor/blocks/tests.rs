//! Blocks run one after the other on an OS thread's one state and fibers:
//! each block sees its own coordinates, votes, warp exchanges and barriers
//! whatever the block before it left (no barrier, one fiber for the block;
//! barriers, a fiber per thread), and a block that fails is reported as its
//! own (launches of hand-written host entries).

use super::super::{run, KernelCall};
use gpu_device::thread::{block_dim, block_idx, thread_idx};
use gpu_device::warp::FULL_MASK;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

/// What the kernel does, and what it saw.
struct Plan {
    /// The thread that panics (in block `fails_in`), if any.
    fails: u32,
    fails_in: u32,
    /// Per thread of the launch: how many times it ran.
    ran: Vec<AtomicU32>,
    /// Per thread of the launch: its last value of a phase.
    slots: Vec<AtomicU32>,
    /// Votes, ballots and reads that were not what the block's threads did.
    wrong: AtomicU32,
}

impl Plan {
    fn new(threads: usize) -> Plan {
        Plan {
            fails: u32::MAX,
            fails_in: u32::MAX,
            ran: (0..threads).map(|_| AtomicU32::new(0)).collect(),
            slots: (0..threads).map(|_| AtomicU32::new(u32::MAX)).collect(),
            wrong: AtomicU32::new(0),
        }
    }
}

/// By its index, a block waits at barriers (odd blocks: three phases of
/// two), votes and ballots (blocks 0 and 3 modulo 6), or does neither
/// (blocks 2 and 4 modulo 6: one fiber runs the whole block).
///
/// # Safety
/// `params` points to one parameter, the address of a live `Plan`.
unsafe fn kernel(params: *const *mut c_void) {
    // SAFETY: the launch's one parameter holds the address of the test's
    // `Plan`, which outlives the launch.
    let plan = unsafe { &*(*(*params as *const usize) as *const Plan) };
    let (b, t, n) = (block_idx().x, thread_idx().x, block_dim().x);
    let slots = &plan.slots[(b * n) as usize..][..n as usize];
    plan.ran[(b * n + t) as usize].fetch_add(1, Relaxed);
    if b % 2 == 1 {
        for phase in 0..3 {
            slots[t as usize].store(phase * 10_000 + b, Relaxed);
            gpu_device::sync_threads();
            let u = (t + 1) % n;
            if slots[u as usize].load(Relaxed) != phase * 10_000 + b {
                plan.wrong.fetch_add(1, Relaxed);
            }
            gpu_device::sync_threads();
        }
    }
    if b % 3 == 0 {
        let below = b % (n + 1);
        if gpu_device::vote::sync_threads_count(t < below) != below {
            plan.wrong.fetch_add(1, Relaxed);
        }
        // The warp's lanes (a block's last warp may have fewer than 32).
        let warp = t / 32;
        let lanes = (n - warp * 32).min(32);
        let mask = FULL_MASK >> (32 - lanes);
        let ballot = gpu_device::warp::ballot_sync(mask, t % 3 == b % 3);
        let expected = (0..32)
            .filter(|&lane| lane < lanes && (warp * 32 + lane) % 3 == b % 3)
            .fold(0u32, |mask, lane| mask | 1 << lane);
        if ballot != expected {
            plan.wrong.fetch_add(1, Relaxed);
        }
    }
    if b == plan.fails_in && t == plan.fails {
        panic!("thread {t} of block {b} fails");
    }
}

/// Launches `kernel` over `grid` blocks of `threads` threads with `plan`.
fn launch(grid: u32, threads: u32, plan: &Plan) -> Result<(), String> {
    let address = plan as *const Plan as usize;
    let call = Arc::new(KernelCall {
        kernel: "blocks_test",
        globals: None,
        call: kernel,
        params: vec![vec![address as u128].into_boxed_slice()],
        grid: [grid, 1, 1],
        block: [threads, 1, 1],
        shared_bytes: 0,
        cooperative: false,
        cluster: None,
    });
    run(&call)
}

#[test]
fn each_block_of_an_os_thread_sees_its_own_state() {
    // More blocks than OS threads: each runs several, of every kind in turn.
    for threads in [1, 33, 64, 256] {
        let grid = 48;
        let plan = Plan::new(grid * threads);
        launch(grid as u32, threads as u32, &plan).unwrap();
        assert_eq!(plan.wrong.load(Relaxed), 0, "{threads} threads");
        let ran: Vec<u32> = plan.ran.iter().map(|r| r.load(Relaxed)).collect();
        assert!(
            ran.iter().all(|&r| r == 1),
            "{threads} threads: each thread of each block runs once"
        );
    }
}

#[test]
fn a_block_that_fails_after_others_is_reported_as_its_own() {
    for (fails_in, fails) in [(0, 0), (5, 3), (6, 63), (17, 40), (23, 0)] {
        let mut plan = Plan::new(24 * 64);
        (plan.fails_in, plan.fails) = (fails_in, fails);
        let error = launch(24, 64, &plan).unwrap_err();
        assert!(
            error.contains(&format!(
                "block ({fails_in}, 0, 0), thread ({fails}, 0, 0): panicked: thread {fails} of block {fails_in} fails"
            )),
            "block {fails_in}, thread {fails}: {error}"
        );
        // The next launch starts afresh.
        let plan = Plan::new(24 * 64);
        launch(24, 64, &plan).unwrap();
        assert_eq!(plan.wrong.load(Relaxed), 0, "after block {fails_in}");
    }
}
