//! Thread-block clusters (sm_90 and later), as CUDA's
//! `cooperative_groups::this_cluster()`: the blocks of a cluster run at
//! once on neighbouring multiprocessors, wait for each other at a cluster
//! barrier, and read each other's shared memory (distributed shared memory).
//!
//! A kernel declares its cluster shape, `#[kernel(arch = "sm_90", cluster =
//! (2, 1, 1))]` (CUDA's `__cluster_dims__`), and takes a [`Cluster`]
//! parameter, the witness built on the device. A kernel without `cluster`
//! cannot take one (a compile error), and the runtime launches a cluster
//! kernel only with its declared cluster shape (PTX `.reqnctapercluster`,
//! `cuLaunchKernelEx` with the cluster dimension), refusing a grid that the
//! shape does not divide.
//!
//! Another block's shared memory is read only through
//! [`Cluster::exchange`]: each thread writes its own slots of a
//! [`shared_array!`](crate::shared_array) in its own block, a cluster
//! barrier, then any thread reads any block's slots, and a cluster barrier
//! again before the exchange returns. So a read never races with the
//! owner's write (the writes are all before the first barrier, and nothing
//! writes the array until the second), and no block leaves the exchange,
//! or exits, while a peer may still read its memory (CUDA's rule that a
//! block's shared memory is undefined once it exits).
//!
//! ```text
//! #[kernel(arch = "sm_90", block = 64, cluster = 2)]
//! pub fn swap(mut out: DisjointSlice<u32>, block: Block, cluster: Cluster) {
//!     let slots = shared_array!(u32; 64);
//!     let mut w = block;
//!     let rank = cluster.block_rank();
//!     let peer = (rank + 1) % cluster.size();
//!     let got = cluster.exchange(&mut w, &slots, |slot| rank * 1000 + slot as u32, |peers| {
//!         peers.get(peer, w_rank)
//!     });
//!     ...
//! }
//! ```

use crate::arch;
use crate::ownership::{BlockStride, NotSend};
use crate::shared::{Block, Phase, Shared, SharedElement};
use crate::thread_owner::Owner;
use core::marker::PhantomData;

/// The cluster witness of a `#[kernel(cluster = ...)]` kernel's thread:
/// each thread of such a launch gets one (its `Cluster` parameter), and
/// only those. Neither `Send` nor `Sync`.
#[derive(Clone, Copy)]
pub struct Cluster {
    owner: Owner,
    _thread: NotSend,
}

impl core::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Cluster")
    }
}

impl Cluster {
    /// The witness of this thread: called once per thread by the entry
    /// point of a `#[kernel(cluster = ...)]` kernel.
    ///
    /// # Safety
    /// The calling thread runs in a cluster launch of the kernel's declared
    /// cluster shape (every block of its cluster resident at once).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_kernel_entry() -> Cluster {
        Cluster {
            owner: Owner::current(),
            _thread: PhantomData,
        }
    }

    /// The block's rank in its cluster, `0..size()` (x fastest: CUDA's
    /// `cluster.block_rank()`, PTX `%cluster_ctarank`).
    #[inline(always)]
    pub fn block_rank(&self) -> u32 {
        arch::cluster::block_rank()
    }

    /// The number of blocks of the cluster (`cluster.num_blocks()`,
    /// `%cluster_nctarank`).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        arch::cluster::size()
    }

    /// The block's index in its cluster (`cluster.block_index()`,
    /// `%cluster_ctaid`).
    #[inline(always)]
    pub fn block_index(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::block_index();
        crate::Dim3 { x, y, z }
    }

    /// The cluster's shape in blocks (`cluster.dim_blocks()`,
    /// `%cluster_nctaid`): the kernel's declared `cluster`.
    #[inline(always)]
    pub fn dim(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::dim();
        crate::Dim3 { x, y, z }
    }

    /// The cluster's index in the grid of clusters (`%clusterid`).
    #[inline(always)]
    pub fn cluster_index(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::cluster_index();
        crate::Dim3 { x, y, z }
    }

    /// The grid's shape in clusters (`%nclusterid`).
    #[inline(always)]
    pub fn clusters(&self) -> crate::Dim3 {
        let [x, y, z] = arch::cluster::clusters();
        crate::Dim3 { x, y, z }
    }

    /// Waits until every thread of every block of the cluster has called
    /// it (CUDA's `cluster.sync()`: `barrier.cluster.arrive` and
    /// `barrier.cluster.wait`); what each thread wrote before is visible to
    /// every thread of the cluster after. Every thread of the cluster must
    /// call it, the same number of times (one that returns from the kernel
    /// first leaves the others waiting: a hang on a GPU, a report on the
    /// simulator).
    #[inline(always)]
    #[track_caller]
    pub fn sync(&self) {
        self.owner.check("a Cluster witness");
        arch::cluster::sync();
    }

    /// Exchanges shared memory across the cluster (distributed shared
    /// memory): each thread fills the slots it owns of `array` in its own
    /// block (slot `s` gets `write(s)`, as [`Shared::fill`]: every slot
    /// of the array is written), the cluster waits at a cluster barrier,
    /// `read` runs with a view of every block's `array`, and the cluster
    /// waits at a cluster barrier again before this returns `read`'s value.
    ///
    /// Every thread of every block of the cluster calls it, with the same
    /// `array` (the same `shared_array!`). The phase token is borrowed for
    /// the whole exchange, so `read` cannot write the array (nor any other
    /// shared array of the block): no read of a peer's slot races with its
    /// write, and no block moves on, rewrites the array or exits while a
    /// peer may still read it.
    #[inline(always)]
    #[track_caller]
    pub fn exchange<T, const N: usize, W, R>(
        &self,
        block: &mut Block<W>,
        array: &Shared<T, N, BlockStride, W>,
        write: impl FnMut(usize) -> T,
        read: impl FnOnce(&Peers<'_, T, N>) -> R,
    ) -> R
    where
        T: SharedElement + Copy,
        W: Phase,
    {
        self.owner.check("a Cluster witness");
        array.fill(block, write);
        arch::cluster::sync();
        let peers = Peers {
            base: array.raw().as_mut_ptr(),
            size: arch::cluster::size(),
            _borrow: PhantomData,
        };
        let value = read(&peers);
        arch::cluster::sync();
        value
    }
}

/// Every block's instance of a shared array during a
/// [`Cluster::exchange`]: read-only, valid only inside the exchange's
/// `read` (no block writes the array or exits meanwhile).
pub struct Peers<'a, T, const N: usize> {
    /// This block's instance (the generic address `mapa` maps).
    base: *mut T,
    size: u32,
    _borrow: PhantomData<(&'a T, NotSend)>,
}

impl<T: SharedElement + Copy, const N: usize> Peers<'_, T, N> {
    /// The number of blocks of the cluster: the ranks [`get`](Self::get)
    /// takes are below it.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Slot `index` of block `rank`'s array (this block's own when `rank`
    /// is its [`block_rank`](Cluster::block_rank)). Panics (a trap on the
    /// GPU, a report on the simulator) when `rank` is not below the
    /// cluster's size or `index` not below `N`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, rank: u32, index: usize) -> T {
        if rank >= self.size {
            rank_out_of_range(rank, self.size);
        }
        if index >= N {
            index_out_of_range(index, N);
        }
        // SAFETY: `index < N`: the slot is in this block's array, in its
        // shared memory; `rank` is below the cluster's size.
        let mapped =
            unsafe { arch::cluster::map_shared_rank(self.base.add(index).cast::<u8>(), rank) };
        // SAFETY: block `rank`'s instance of the same slot, aligned as
        // this block's (the same offset in the same static array), written
        // by its owner before the exchange's first cluster barrier, which
        // this thread has passed; nothing writes it, and its block does
        // not exit, before the second barrier, which this thread reaches
        // only after `read` returns (`Peers` does not outlive it).
        unsafe { core::ptr::read(mapped.cast::<T>()) }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn rank_out_of_range(rank: u32, size: u32) -> ! {
    panic!(
        "block rank {rank} is outside the cluster of {size} blocks (ranks 0 to {})",
        size - 1
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_range(index: usize, len: usize) -> ! {
    panic!("slot {index} is out of range for a cluster-shared array of {len} slots")
}
