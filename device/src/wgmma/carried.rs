//! Products kept in flight across a ring's wait: a GEMM's k-block `kb`
//! runs on the tensor cores while stage `kb + 1` is waited for and filled,
//! and `wgmma.wait_group 1` after k-block `kb + 1`'s products retires it
//! (CUTLASS's and the CUDA C twin's main loop).
//!
//! ```no_run
//! use gpu_device::cp_async::{CpAsyncRing, StageFill};
//! use gpu_device::half::bf16;
//! use gpu_device::mma::Bf16;
//! use gpu_device::prelude::*;
//! use gpu_device::wgmma::{self, Accumulator, Carried, KMajorTile, Swizzle128B, Warpgroup};
//!
//! // 128 threads; each stage 64 rows of A then 64 of B (K = 64).
//! fn k_loop(smem: DynamicShared<bf16>, k_blocks: usize, load: impl Fn(&mut StageFill<'_, bf16>, usize)) {
//!     let mut ring = CpAsyncRing::<bf16, 4>::with_async_reads(smem, 128);
//!     ring.fill(|s| load(s, 0));
//!     ring.fill(|s| load(s, 1));
//!     let wg = Warpgroup::of_this_thread();
//!     let mut acc = Carried::new(Accumulator::<64>::zero(&wg));
//!     for kb in 0..k_blocks {
//!         let mut stage = wgmma::wait_stage(&mut ring);
//!         stage.fill(|s| load(s, kb + 2)); // two ahead: stage kb - 1 is still read
//!         let a = KMajorTile::<Bf16, Swizzle128B, 64>::from_stage(&stage, 0);
//!         let b = KMajorTile::<Bf16, Swizzle128B, 64>::from_stage(&stage, 64);
//!         acc = acc.then(&wg, &stage, &a, &b).carry(&stage);
//!     }
//!     let d = acc.wait(&wg, &ring);
//!     ring.finish();
//!     # let _ = d;
//! }
//! ```
//!
//! Why it is sound: a [`Carried`] product borrows nothing, so the ring can
//! hand out the next stage while it runs; instead the ring records, per
//! thread, the stage it reads ([`InFlight::carry`]), refuses the thread's
//! second wait after it while the record stands, and refills a stage only
//! after every thread passed that second wait's barrier (a ring made by
//! `CpAsyncRing::with_async_reads`; see `cp_async/async_reads.rs`).
//! [`Carried::then`] issues the next product and waits for every older
//! group (`wait_group 1`), which clears the record; [`Carried::wait`]
//! waits for all (`wait_group 0`) and gives the accumulator back. A
//! `Carried` dropped or forgotten leaves the record, so the ring's next
//! wait but one refuses; its registers were never read.

use super::{
    Accumulator, AsyncStage, BOperand, InFlight, KMajorTile, Operand16, Shape, Swizzle, Warpgroup,
    M64N,
};
use crate::cp_async::CpAsyncRing;
use crate::shared::SharedElement;

/// An accumulator whose products may still be running, reading a ring
/// stage no longer borrowed (see the [`wgmma`](crate::wgmma) module): its registers are out
/// of reach until [`wait`](Self::wait). Per thread, `!Send`.
#[must_use = "a carried wgmma product is read only after Carried::wait"]
pub struct Carried<const N: usize>
where
    M64N<N>: Shape,
{
    acc: Accumulator<N>,
}

impl<const N: usize> Carried<N>
where
    M64N<N>: Shape,
{
    /// An accumulator with no product in flight, to start a loop of
    /// [`then`](Self::then)s.
    #[inline(always)]
    pub fn new(acc: Accumulator<N>) -> Carried<N> {
        Carried { acc }
    }

    /// Issues `D = A Bᵀ + D` from the tiles of `stage` (as
    /// [`Warpgroup::mma_async`]), then waits for every older group of the
    /// warpgroup (`wgmma.wait_group 1`): the products carried so far are
    /// done, and the ring's record of them cleared. The new product is in
    /// flight, borrowing its tiles. Every thread of the warpgroup calls it
    /// together.
    #[inline(always)]
    #[track_caller]
    pub fn then<'t, T, S, B, E, const STAGES: usize>(
        self,
        warpgroup: &Warpgroup,
        stage: &'t AsyncStage<'_, E, STAGES>,
        a: &'t KMajorTile<'_, T, S, 64>,
        b: &'t B,
    ) -> InFlight<'t, N>
    where
        T: Operand16,
        S: Swizzle,
        B: BOperand<T, S, N>,
        E: SharedElement + Copy,
    {
        let flight = warpgroup.mma_async(self.acc, a, b);
        crate::arch::wgmma::wait_group::<1>();
        stage.ready().ring().retire_reads();
        flight
    }

    /// Issues `D = A Bᵀ + D` from the K-major tile of swizzle `S` at `a`
    /// (64 rows) and the B tile `b`, as [`Warpgroup::mma_async`], and keeps
    /// the product in flight: for a ring that retires its stages' reads
    /// itself (the TMA ring's consumer).
    ///
    /// # Safety
    /// `a` is such a tile of the block's shared memory, aligned to the
    /// swizzle's pattern on the GPU, and nothing writes it or `b`'s tile
    /// until a `wgmma.wait_group` of this warpgroup retires the product.
    #[inline(always)]
    #[track_caller]
    #[allow(dead_code)]
    pub(crate) unsafe fn issue_from_raw<T: Operand16, S: Swizzle, B: BOperand<T, S, N>>(
        self,
        warpgroup: &Warpgroup,
        a: *const T::Element,
        b: &B,
    ) -> Carried<N> {
        // SAFETY: the caller's contract.
        let a = unsafe { KMajorTile::<T, S, 64>::from_raw(a) };
        Carried {
            acc: warpgroup.mma_async(self.acc, &a, b).acc,
        }
    }

    /// Waits for every group of the warpgroup (`wgmma.wait_group 0`) and
    /// gives the accumulator back, for a ring that retires its stages'
    /// reads itself. Every thread of the warpgroup calls it together.
    #[inline(always)]
    #[track_caller]
    #[allow(dead_code)]
    pub(crate) fn wait_all(self, warpgroup: &Warpgroup) -> Accumulator<N> {
        InFlight {
            acc: self.acc,
            _tiles: core::marker::PhantomData,
        }
        .wait(warpgroup)
    }

    /// Waits for every group of the warpgroup (`wgmma.wait_group 0`),
    /// clears `ring`'s record and gives the accumulator back. Every thread
    /// of the warpgroup calls it together.
    #[inline(always)]
    #[track_caller]
    pub fn wait<E: SharedElement + Copy, const STAGES: usize>(
        self,
        warpgroup: &Warpgroup,
        ring: &CpAsyncRing<E, STAGES>,
    ) -> Accumulator<N> {
        let acc = InFlight {
            acc: self.acc,
            _tiles: core::marker::PhantomData,
        }
        .wait(warpgroup);
        ring.retire_reads();
        acc
    }
}

impl<const N: usize> InFlight<'_, N>
where
    M64N<N>: Shape,
{
    /// Keeps the product in flight past the end of `stage`'s borrow (the
    /// stage its tiles are from): the ring records that this thread's
    /// products read it, and the next wait but one refuses until a
    /// [`Carried::then`] or [`Carried::wait`] retires them. Panics when
    /// the ring was made by `CpAsyncRing::new` (it may refill the stage
    /// right after the next wait), or while products of an older stage are
    /// carried.
    #[inline(always)]
    #[track_caller]
    pub fn carry<E: SharedElement + Copy, const STAGES: usize>(
        self,
        stage: &AsyncStage<'_, E, STAGES>,
    ) -> Carried<N> {
        let ready = stage.ready();
        ready.ring().carry_reads(ready.index());
        Carried { acc: self.acc }
    }
}
