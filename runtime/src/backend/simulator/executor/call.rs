//! What a launch runs, and what the blocks of one run of it share.

use crate::backend::simulator::globals::ModuleGlobals;
use crate::backend::simulator::race_check::LaunchRaces;
use std::ffi::c_void;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

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
}

impl std::ops::Deref for Run {
    type Target = KernelCall;
    fn deref(&self) -> &KernelCall {
        &self.kernel_call
    }
}
