//! The blocks of a launch that one OS thread runs: one [`BlockState`], its
//! threads' coordinates and its fibers, kept from block to block.
//!
//! A block's state is set back to a new block's at its start (`BlockState::begin`):
//! its per-thread vectors are not made again for each block, and the
//! fibers that ran the last block's threads wait (idle, see `rounds`) to
//! run the next block's, so a thread's start is a switch into a fiber
//! already running rather than a new context on a stack taken from the
//! pool. Only a launch's blocks share them: the fibers and the stacks go
//! back when the OS thread has run its last block of the launch (or one
//! failed).

use super::block::{BlockRaces, BlockState, InOrder, NO_FIBER};
use super::call::Run;
use super::cluster::ClusterRecord;
use super::shared_memory::SharedMemory;
use super::stacks::give_stacks;
use super::thread_state::{ThreadSlot, Waiting};
use crate::backend::simulator::signals::BlockSignals;
use crate::backend::simulator::worker::Worker;
use gpu_device::__private::simulation::{self, SimulatedThread};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;

/// Runs the blocks of `launch` that `next` gives (by linear index, until
/// `None`) on this OS thread, one after the other; stops at the first that
/// fails, with its report. In a cluster launch, `next` gives one block,
/// rank `rank` of the cluster `record` describes.
pub(super) fn run_blocks(
    launch: &Run,
    worker: &Worker,
    shared: &RefCell<SharedMemory>,
    mut next: impl FnMut() -> Option<u64>,
    cluster: Option<(&ClusterRecord, u32)>,
) -> Result<(), String> {
    let [bx, by, bz] = launch.block;
    let count = (bx * by * bz) as usize;
    let params: Vec<*mut c_void> = launch
        .params
        .iter()
        .map(|p| p.as_ptr() as *mut c_void)
        .collect();
    let state = BlockState::new(launch, count, params.as_ptr(), worker, shared, cluster);
    // In linear order (x fastest), counted rather than divided out; each
    // block sets its index and serials (`run_block`).
    let mut threads: Vec<SimulatedThread<'_>> = Vec::with_capacity(count);
    for z in 0..bz {
        for y in 0..by {
            for x in 0..bx {
                threads.push(SimulatedThread {
                    thread_idx: [x, y, z],
                    block_idx: [0; 3],
                    block_dim: launch.block,
                    grid_dim: launch.grid,
                    linear: threads.len() as u32,
                    serial: 0,
                    block: &state,
                });
            }
        }
    }
    let mut outcome = Ok(());
    while let Some(linear) = next() {
        worker.start_block();
        outcome = run_block(&state, &mut threads, linear);
        worker.end_block();
        if outcome.is_err() {
            break;
        }
    }
    // The threads that did not finish are abandoned with their stacks (as
    // a trap abandons a GPU's), and the idle fibers with theirs: nothing
    // runs on them any more.
    give_stacks(state.stacks.take());
    outcome
}

/// Runs block `linear` on `state`, whose threads are `threads`.
fn run_block(
    state: &BlockState<'_>,
    threads: &mut [SimulatedThread<'_>],
    linear: u64,
) -> Result<(), String> {
    let launch = state.run;
    let [gx, gy, _] = launch.grid.map(u64::from);
    let block_idx = [
        (linear % gx) as u32,
        ((linear / gx) % gy) as u32,
        (linear / (gx * gy)) as u32,
    ];
    let first_serial = launch.serial_base + linear * threads.len() as u64;
    // No thread of the last block is current (`simulation::leave` below),
    // and none of this one runs before `schedule`.
    for (thread, serial) in threads.iter_mut().zip(first_serial..) {
        thread.block_idx = block_idx;
        thread.serial = serial;
    }
    state.threads.set(threads.as_ptr().cast());
    state.begin(linear, first_serial);
    let result = state.signals.watch(|| state.schedule());
    simulation::leave();
    let printed = state.printed.take();
    if !printed.is_empty() {
        launch
            .printed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((linear, printed));
    }
    result.map_err(|(t, what)| {
        let [x, y, z] = threads[t].thread_idx;
        format!(
            "kernel `{}`, block ({}, {}, {}), thread ({x}, {y}, {z}): {what}",
            launch.kernel, block_idx[0], block_idx[1], block_idx[2]
        )
    })
}

impl<'a> BlockState<'a> {
    /// The state of blocks of `count` threads of `launch`, before the first
    /// (`begin` sets it to one).
    fn new(
        launch: &'a Run,
        count: usize,
        params: *const *mut c_void,
        worker: &'a Worker,
        shared: &'a RefCell<SharedMemory>,
        cluster: Option<(&'a ClusterRecord, u32)>,
    ) -> BlockState<'a> {
        let dynamic = (
            shared.borrow_mut().dynamic(launch.shared_bytes),
            launch.shared_bytes,
        );
        if let Some((record, rank)) = cluster {
            record.publish_dynamic(rank, dynamic.0, dynamic.1);
        }
        BlockState {
            run: launch,
            cluster,
            linear: Cell::new(0),
            first_serial: Cell::new(0),
            count,
            threads: Cell::new(std::ptr::null()),
            params,
            slots: (0..count).map(|_| ThreadSlot::new()).collect(),
            warp_state_used: Cell::new(false),
            exchanges: (0..count).map(|_| Cell::new(0)).collect(),
            warp_values: (0..count.div_ceil(32))
                .map(|_| Default::default())
                .collect(),
            votes: (0..count).map(|_| Default::default()).collect(),
            vote_rounds: (0..count).map(|_| Cell::new(0)).collect(),
            active_masks: (0..count.div_ceil(32)).map(|_| Cell::new(0)).collect(),
            printed: RefCell::new(Vec::new()),
            round: RefCell::new(Vec::with_capacity(count)),
            next: RefCell::new(Vec::new()),
            position: Cell::new(usize::MAX),
            waiting: Cell::new(Waiting::default()),
            progress: Cell::new(false),
            next_unstarted: Cell::new(0),
            current: Cell::new(0),
            in_order: InOrder::default(),
            failure: Cell::new(None),
            stacks: RefCell::new(Vec::with_capacity(count)),
            idle: RefCell::new(Vec::with_capacity(count)),
            last_static: Cell::new(None),
            fiber_main: Cell::new(&NO_FIBER as *const dyn Fn()),
            shared,
            dynamic,
            worker,
            signals: BlockSignals::new(worker, launch.kernel, launch.stack_bytes),
            races: launch.races.as_ref().map(|_| BlockRaces {
                interval: Cell::new(0),
                grid: Cell::new(0),
                clocks: RefCell::new(vec![[0; 32]; count]),
                shared: RefCell::new(HashMap::new()),
            }),
        }
    }

    /// Sets the state to block `linear`'s (whose thread 0 has serial
    /// `first_serial`) before its first thread runs: every thread not
    /// started, nobody waiting, nothing exchanged, voted or checked yet.
    /// The last block ended (all its threads finished: a block that failed
    /// ends the OS thread's run), so only its fibers remain, idle.
    fn begin(&self, linear: u64, first_serial: u64) {
        self.linear.set(linear);
        self.first_serial.set(first_serial);
        for slot in &self.slots[..] {
            slot.reset();
        }
        if self.warp_state_used.replace(false) {
            self.exchanges.iter().for_each(|c| c.set(0));
            self.warp_values
                .iter()
                .flatten()
                .flatten()
                .for_each(|c| c.set(0));
            self.votes.iter().flatten().for_each(|c| c.set(false));
            self.vote_rounds.iter().for_each(|c| c.set(0));
        }
        self.active_masks.iter().for_each(|c| c.set(0));
        self.round.borrow_mut().clear();
        self.next.borrow_mut().clear();
        self.position.set(usize::MAX);
        self.waiting.set(Waiting::default());
        self.progress.set(false);
        self.next_unstarted.set(0);
        self.current.set(0);
        self.in_order.stopped.set(0);
        self.in_order.id.set(0);
        self.failure.set(None);
        self.last_static.set(None);
        if let Some(races) = &self.races {
            races.interval.set(0);
            races.grid.set(0);
            for (t, clocks) in races.clocks.borrow_mut().iter_mut().enumerate() {
                *clocks = [0; 32];
                clocks[t % 32] = 1;
            }
            races.shared.borrow_mut().clear();
        }
    }
}

#[cfg(test)]
mod tests;
