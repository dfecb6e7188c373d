//! Grid-wide synchronisation, as Numba's `cuda.cg.this_grid().sync()` and
//! CUDA's `cooperative_groups::this_grid().sync()`: every thread of every
//! block of the launch waits until all have arrived, and the writes made
//! before are visible to every thread after.
//!
//! A kernel declares it: `#[kernel(cooperative)]` and a parameter of type
//! [`Grid`], the token built on the device. A kernel without
//! `cooperative` cannot take a `Grid` (a compile error), and no other code
//! can make one, so grid sync runs only in cooperative launches. Their
//! blocks must all be resident at once: the launcher refuses a grid larger
//! than the device keeps resident (its occupancy for the kernel's block
//! times its multiprocessors), naming the kernel, the grid and the limit.
//! On a GPU the launch is `cuLaunchCooperativeKernel`; the simulator runs
//! every block of such a launch at once.
//!
//! ```text
//! #[kernel(cooperative)]
//! pub fn two_phases(input: &[u32], mut partial: DisjointSlice<u32, ByBlock>, ..., grid: Grid) {
//!     // phase 1: each block writes its partial
//!     grid.sync();
//!     // phase 2: any block reads every partial
//! }
//! ```

use crate::arch;
use crate::ownership::NotSend;
use crate::thread_owner::Owner;

/// The grid-sync token of a cooperative kernel's thread: each thread of a
/// `#[kernel(cooperative)]` launch gets one (its `Grid` parameter), and
/// only those. Neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct Grid {
    owner: Owner,
    _thread: NotSend,
}

impl core::fmt::Debug for Grid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Grid")
    }
}

impl Grid {
    /// The token of this thread: called once per thread by the entry point
    /// of a `#[kernel(cooperative)]` kernel.
    ///
    /// # Safety
    /// The calling thread runs in a cooperative launch (every block of the
    /// grid resident at once).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_kernel_entry() -> Grid {
        Grid {
            owner: Owner::current(),
            _thread: core::marker::PhantomData,
        }
    }

    /// Waits until every thread of every block of the launch has called
    /// it, then returns: what each thread wrote to global memory before is
    /// visible to every thread after (CUDA's `grid.sync()`). Every thread of
    /// the grid must call it, the same number of times (one that returns
    /// from the kernel first leaves the others waiting: a hang on a GPU, a
    /// report on the simulator).
    #[inline(always)]
    #[track_caller]
    pub fn sync(&self) {
        self.owner.check("a Grid token");
        arch::grid_sync();
    }
}
