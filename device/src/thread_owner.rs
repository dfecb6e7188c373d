//! The simulated thread a per-thread value belongs to.
//!
//! The witnesses ([`ThreadIndex`](crate::ThreadIndex) and its 2-D and 3-D
//! forms), the phase token [`Block`](crate::Block) and a kernel entry's shape
//! token are each made by one thread for itself, and are neither `Send` nor
//! `Sync`: on a GPU they cannot reach another thread. The CPU simulator runs
//! a block's threads as coroutines on one OS thread, so host-only code (a
//! `thread_local!`, present only in the host build) could carry one from a
//! simulated thread to another, or from one block or launch to the next,
//! where it would name an element or a slot that another thread owns.
//!
//! So on the host each such value records its maker (`Owner`), and every
//! use that relies on it being this thread's (an output element, a shared
//! slot, a phase change) checks that the maker is the thread running now: a
//! value used elsewhere fails the launch with a report naming both threads.
//! On the GPU `Owner` is a zero-sized type and the check is nothing.

/// The simulated thread that made a per-thread value (see the [module
/// documentation](self)); zero-sized on the GPU.
#[derive(Clone, Copy)]
pub(crate) struct Owner {
    /// The maker's serial number ([`crate::arch::simulation::SimulatedThread::serial`]).
    #[cfg(not(target_arch = "nvptx64"))]
    serial: u64,
}

impl Owner {
    /// The thread running now.
    #[inline(always)]
    pub(crate) fn current() -> Owner {
        Owner {
            #[cfg(not(target_arch = "nvptx64"))]
            serial: crate::arch::current_serial(),
        }
    }

    /// Panics, naming `what` and both threads, unless the thread running now
    /// made the value (on the GPU: nothing to check).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check(self, what: &'static str) {
        #[cfg(not(target_arch = "nvptx64"))]
        if self.serial != crate::arch::current_serial() {
            crate::arch::used_by_another_thread(self.serial, what)
        }
        #[cfg(target_arch = "nvptx64")]
        let _ = what;
    }
}
