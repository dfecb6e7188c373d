//! Stages read asynchronously past their [`Ready`](super::Ready): a
//! `wgmma` issued from a stage may still read it after the thread's next
//! `wait` (one k-block's products in flight while the next stage is waited
//! for), so a ring that allows it refills a stage one wait later.
//!
//! Why it is sound, per thread and then for the block:
//!
//! - A thread records the stage its products in flight read
//!   ([`carry_reads`](CpAsyncRing::carry_reads), by
//!   `wgmma::InFlight::carry`), and clears it once a `wgmma.wait_group`
//!   covers them ([`retire_reads`](CpAsyncRing::retire_reads)). Its wait
//!   for stage `j + 2` refuses (panics) while stage `j` is still recorded:
//!   every thread's asynchronous reads of stage `j` are over before it
//!   arrives at the barrier of wait `j + 2`.
//! - So once a thread has passed that barrier (`waits >= j + 3`), no
//!   thread reads stage `j`; `fill` refills stage `j` (fill `j + STAGES`)
//!   only then: at most `STAGES - 2` fills ahead of the waits, not
//!   `STAGES - 1`.
//! - A ring made by [`CpAsyncRing::new`] refuses to record (its fills may
//!   target the stage right after its next wait).

use super::CpAsyncRing;
use crate::shared::{DynamicShared, SharedElement};

impl<T: SharedElement + Copy, const STAGES: usize> CpAsyncRing<T, STAGES> {
    /// At least 3 stages: two read, one filled.
    const ASYNC_STAGES: () = assert!(
        STAGES >= 3,
        "a ring read asynchronously past its waits has at least 3 stages"
    );

    /// [`new`](Self::new), for stages that `wgmma` may still read after the
    /// next wait (`wgmma::InFlight::carry`): a stage is refilled two waits
    /// after it was handed out, not one, so `fill` runs at most `STAGES -
    /// 2` stages ahead of the waits. Every thread of the block makes the
    /// ring the same way, together: checked as in [`new`](Self::new).
    #[inline(always)]
    #[track_caller]
    pub fn with_async_reads(shared: DynamicShared<T>, stage_rows: usize) -> Self {
        let () = Self::ASYNC_STAGES;
        Self::agreed(shared, stage_rows, 1)
    }

    /// Records that this thread's products in flight read the stage of
    /// wait `index`, until [`retire_reads`](Self::retire_reads). Panics
    /// for a ring made by `new`, or while an older stage is recorded.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn carry_reads(&self, index: u32) {
        self.owner.check("a CpAsyncRing");
        if self.lag == 0 {
            carried_on_a_plain_ring()
        }
        let recorded = self.async_reads.get();
        if recorded != 0 && recorded != index + 1 {
            carried_twice(recorded - 1, index)
        }
        self.async_reads.set(index + 1);
    }

    /// A `wgmma.wait_group` covered every product carried so far (a
    /// `wait_group 1` right after a new product's commit, or `wait_group
    /// 0`): no stage is read asynchronously by this thread any more.
    #[inline(always)]
    pub(crate) fn retire_reads(&self) {
        self.async_reads.set(0)
    }

    /// Before wait `waits`: no stage older than the previous one is still
    /// read by this thread's products.
    #[inline(always)]
    #[track_caller]
    pub(super) fn check_async_reads_over(&self) {
        let recorded = self.async_reads.get();
        // Stage `recorded - 1` may be read through wait `recorded`.
        if recorded != 0 && recorded < self.waits {
            still_read(recorded - 1, self.waits)
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn carried_on_a_plain_ring() -> ! {
    panic!("wgmma::InFlight::carry: the ring was made by CpAsyncRing::new, whose fills may overwrite the stage right after the next wait; make it with CpAsyncRing::with_async_reads to keep products in flight past a wait")
}

#[cold]
#[inline(never)]
#[track_caller]
fn carried_twice(older: u32, index: u32) -> ! {
    panic!("wgmma::InFlight::carry: products of stage {older} are still carried; wait for them (Carried::then or Carried::wait) before carrying stage {index}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn still_read(stage: u32, waits: u32) -> ! {
    panic!("CpAsyncRing: wait {waits} while wgmma products reading stage {stage} may still be in flight: a product is carried past one wait at most (Carried::then or Carried::wait first)")
}
