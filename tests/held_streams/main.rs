//! Tests that hold a stream with a host callback and assert what waits
//! behind the hold: that a wait took as long as the hold, or that work
//! queued behind it is still pending (the tracking's waits, events' timing,
//! futures, the legacy default stream's implicit waits, pinned memory and
//! its batches, the pipeline).
//!
//! A binary of its own: on a GPU, a synchronous free anywhere in the process
//! (`cuMemFree`, `cuMemFreeHost`) waits for every stream, the held one
//! included, and holds up the holding test's own driver calls until the hold
//! ends, so that the work behind it is no longer pending when the test looks.
//! Here these tests share the process only with each other, and those that
//! hold take turns (`common::one_at_a_time`). `scripts/sanitize.sh` leaves
//! the timed ones out under the tools that make queued work wait.

#[path = "../common/mod.rs"]
mod common;

mod events;
mod futures;
mod pinned;
mod pipeline;
mod stream_semantics;
mod tracking;
