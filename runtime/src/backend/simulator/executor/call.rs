//! What a launch runs, and what the blocks of one run of it share.

use super::super::worker::Worker;
use crate::backend::simulator::globals::ModuleGlobals;
use crate::backend::simulator::race_check::LaunchRaces;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What a launch runs: the kernel, its parameter values and its shape.
pub(crate) struct KernelCall {
    pub(super) kernel: &'static str,
    /// The globals of the kernel's module (`None` for the simulator's own
    /// launches, which have no module).
    pub(super) globals: Option<Arc<ModuleGlobals>>,
    pub(super) call: unsafe fn(*const *mut c_void),
    pub(super) params: Vec<Box<[u128]>>,
    pub(super) grid: [u32; 3],
    pub(super) block: [u32; 3],
    pub(super) shared_bytes: usize,
    /// A cooperative launch: every block runs at once, and grid syncs wait
    /// for them all.
    pub(super) cooperative: bool,
    /// A cluster launch's cluster shape: the blocks of each cluster run at
    /// once, and cluster syncs wait for them all.
    pub(super) cluster: Option<[u32; 3]>,
}

impl KernelCall {
    /// The number of blocks.
    pub(super) fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// The number of threads of each block.
    pub(super) fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }
}

/// One run of a [`KernelCall`]: what its blocks share.
pub(super) struct Run {
    pub(super) kernel_call: Arc<KernelCall>,
    /// The serial of thread 0 of block 0; the others follow in order.
    pub(super) serial_base: u64,
    /// Each simulated thread's stack.
    pub(super) stack_bytes: usize,
    /// Present when the run is checked for data races.
    pub(super) races: Option<LaunchRaces>,
    /// What each block printed, by its linear index.
    pub(super) printed: Mutex<Vec<(u64, Vec<u8>)>>,
    /// Set when a block failed: the others stop taking blocks, and a thread
    /// waiting on memory (after atomics) stops, as what it waits for (a
    /// look-back on a failed block) may never come.
    pub(super) failed: AtomicBool,
    /// The blocks at the current grid sync, and those finished.
    pub(super) grid_sync: GridBarrier,
}

/// Where the blocks of a cooperative launch meet at each grid sync.
#[derive(Default)]
pub(super) struct GridBarrier {
    state: Mutex<GridState>,
    changed: Condvar,
}

#[derive(Default)]
struct GridState {
    /// Blocks waiting at the current grid sync.
    arrived: u64,
    /// Blocks that have finished.
    finished: u64,
    /// Grid syncs completed.
    generation: u64,
}

impl Run {
    /// Every thread of a block has reached a grid sync: waits until every
    /// block of the launch has. Fails when the launch is not cooperative,
    /// when a block finished instead (on a GPU the others would wait
    /// forever), or when a block failed.
    pub(super) fn grid_arrive(&self, worker: &Worker) -> Result<(), String> {
        if !self.cooperative {
            return Err("grid sync (Grid::sync) in a launch that is not cooperative".into());
        }
        let total = self.blocks();
        let barrier = &self.grid_sync;
        let mut state = barrier.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = state.generation;
        state.arrived += 1;
        if state.arrived == total {
            state.arrived = 0;
            state.generation += 1;
            barrier.changed.notify_all();
            return Ok(());
        }
        loop {
            if state.generation != generation {
                return Ok(());
            }
            if state.finished > 0 && state.arrived + state.finished == total {
                return Err(format!(
                    "the grid sync Grid::sync() is not reached by every block of the launch ({} of its {total} blocks finished first); on a GPU the grid would hang",
                    state.finished
                ));
            }
            if self.failed.load(Ordering::Relaxed) {
                return Err(
                    "stopped at a grid sync: another block of the launch failed first".into(),
                );
            }
            // The other blocks run: no stall of this one.
            worker.progress();
            state = barrier
                .changed
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// A block of a cooperative launch has finished (or failed).
    pub(super) fn grid_block_finished(&self) {
        let mut state = self
            .grid_sync
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        state.finished += 1;
        self.grid_sync.changed.notify_all();
    }
}

impl std::ops::Deref for Run {
    type Target = KernelCall;
    fn deref(&self) -> &KernelCall {
        &self.kernel_call
    }
}
