//! Every thread of the block makes the same ring: checked once, when it is
//! made.
//!
//! Each thread has its own [`CpAsyncRing`](super::CpAsyncRing) over the
//! block's dynamic shared memory, and the ring's soundness rests on all of
//! them agreeing on which stage is where and which is filled next: the
//! stage count, the rows of a stage, how far fills run ahead of the waits
//! (a plain ring or one [`with_async_reads`](super::CpAsyncRing::with_async_reads)),
//! and the element size. Threads that made the ring differently (those
//! values chosen by thread index) would fill a stage that others read.
//!
//! So making the ring is a collective of the block, on the ring's own
//! barrier (`PIPELINE_BARRIER`, which nothing but the ring uses), as
//! [`block_agreement`](crate::block_agreement) describes: thread 0 writes its
//! ring's parameters into the first 16 bytes of stage 0 (no fill has run:
//! every fill comes after the collective), every thread compares them with
//! its own between two passes of the barrier, and a difference is a panic
//! naming both (a trap on the GPU, a report on the simulator). Thread 0
//! not reaching the barrier (it exited) is a panic too, since the record
//! would be stale; the second pass keeps every read before the first fill
//! of stage 0.
//!
//! The record is written by thread 0 of this block in this construction
//! before anyone reads it, so shared memory left by an earlier block is
//! never compared. Every thread passes the barrier exactly twice here, so a
//! thread's first two arrivals are its construction's, and its `k`-th
//! `wait` is its arrival `k + 2` (the waits' argument in the module
//! documentation is unchanged). A thread that never makes the ring leaves
//! the others at the barrier: a hang on the GPU, a report on the simulator.
//!
//! The cost, once per ring and block: two barriers, one 16-byte store by
//! thread 0 and one 16-byte load by each thread.

use crate::arch;
use crate::block_agreement;
use crate::race_check;

/// What every thread's ring must agree on: stages, rows of a stage, waits
/// a stage may be read past its `Ready` (0 plain, 1 with async reads), and
/// the element's size.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct RingShape {
    pub(super) stages: u32,
    pub(super) stage_rows: u32,
    pub(super) lag: u32,
    pub(super) element_bytes: u32,
}

impl RingShape {
    fn words(self) -> [u32; 4] {
        [self.stages, self.stage_rows, self.lag, self.element_bytes]
    }

    fn from_words([stages, stage_rows, lag, element_bytes]: [u32; 4]) -> Self {
        RingShape {
            stages,
            stage_rows,
            lag,
            element_bytes,
        }
    }
}

impl core::fmt::Display for RingShape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let kind = match self.lag {
            0 => "CpAsyncRing::new",
            1 => "CpAsyncRing::with_async_reads",
            _ => "an unknown kind of ring",
        };
        write!(
            f,
            "{} stages of {} rows of {}-byte elements, made by {kind}",
            self.stages, self.stage_rows, self.element_bytes
        )
    }
}

/// The collective of the [module](self), over the ring's memory at `base`
/// (16-byte aligned, at least 16 bytes that no fill has touched yet).
#[inline(always)]
#[track_caller]
pub(super) fn agree(base: *mut u8, mine: RingShape) {
    // Four words, each read and written on its own: an aggregate volatile
    // access would go through local memory.
    let record = base.cast::<u32>();
    let publish = || {
        race_check::write_range(record, 4);
        let [a, b, c, d] = mine.words();
        // SAFETY: the first 16 bytes of the ring's memory (aligned, in
        // bounds: `new` checked both), written by thread 0 alone; no other
        // thread touches them before the barrier after this, and no fill
        // has run.
        unsafe {
            record.write(a);
            record.add(1).write(b);
            record.add(2).write(c);
            record.add(3).write(d);
        }
    };
    let read = || {
        race_check::read_range(record, 4);
        // SAFETY: as above; thread 0 wrote it before the barrier, and
        // nothing writes it until every thread has passed the next one.
        RingShape::from_words(unsafe {
            [
                record.read(),
                record.add(1).read(),
                record.add(2).read(),
                record.add(3).read(),
            ]
        })
    };
    // Scalars: an aggregate argument would be passed through local memory.
    let pack = |r: RingShape| {
        (
            u64::from(r.stages) << 32 | u64::from(r.stage_rows),
            u64::from(r.lag) << 32 | u64::from(r.element_bytes),
        )
    };
    block_agreement::agree(
        arch::PIPELINE_BARRIER,
        mine,
        publish,
        read,
        || thread_0_absent(),
        |theirs| {
            let ((m0, m1), (t0, t1)) = (pack(mine), pack(theirs));
            disagree(m0, m1, t0, t1)
        },
    );
}

#[cold]
#[inline(never)]
#[track_caller]
fn disagree(m0: u64, m1: u64, t0: u64, t1: u64) -> ! {
    block_agreement::wait_for_a_differing_thread(arch::PIPELINE_BARRIER, (m0, m1) == (t0, t1));
    let unpack = |a: u64, b: u64| RingShape {
        stages: (a >> 32) as u32,
        stage_rows: a as u32,
        lag: (b >> 32) as u32,
        element_bytes: b as u32,
    };
    let (mine, theirs) = (unpack(m0, m1), unpack(t0, t1));
    panic!(
        "CpAsyncRing: thread {} of the block made the ring as {mine}, but thread 0 as {theirs}: every thread of the block makes the one ring the same way (the same STAGES, stage_rows, element type and constructor), or a thread would fill a stage another reads",
        crate::thread_rank()
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn thread_0_absent() -> ! {
    panic!(
        "CpAsyncRing: thread {} of the block made the ring, but thread 0 did not (it exited first): every thread of the block makes the ring together",
        crate::thread_rank()
    )
}
