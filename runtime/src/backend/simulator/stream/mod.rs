//! Simulated streams: a worker thread per stream runs its operations in order.
//!
//! CUDA's implicit synchronisation is kept: work queued on a device's legacy
//! default stream waits for the work already queued on that device's blocking
//! streams (made without the non-blocking flag, and every per-thread default
//! stream), and work queued on a blocking stream waits for the work already
//! queued on the legacy default stream. Non-blocking streams do neither.
//!
//! So is the rule CUDA derives from it for captures: while a blocking stream
//! of a device captures, any use of the device's legacy default stream (a
//! query, a wait, work queued on it) would synchronise with the capture; CUDA
//! refuses it with `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT` and invalidates the
//! capture, whose end then fails with `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`.
//!
//! # No deadlock
//!
//! Every wait is for a point queued *before* the waiting work: an implicit
//! synchronisation waits for a [`Fence`] pushed onto the other stream at
//! submit time (a snapshot of what it had queued then, pushed only if it
//! had anything: a worker that has exited is never given one); an event wait
//! waits for the event's latest record, which is in its stream's queue
//! before the event names it; a synchronize waits for a fence pushed at its
//! call. As every item waits only for items queued earlier, no cycle of
//! waits can form. The [watchdog](super::watchdog) is the backstop: waits
//! that can never end become errors ([`super::fence`]).
//!
//! # Faults
//!
//! A failed operation is a fault of the stream's device ([`super::fault`]):
//! the device's streams then skip their queued work (as a GPU does after a
//! kernel fault), but still apply markers, so that nothing waiting for a
//! point of them hangs, and call completion callbacks, with the failure.

mod calls;
mod capture;
mod lookup;
mod queue;
#[cfg(test)]
mod tests;

pub(crate) use calls::{
    check_device, create, destroy, device_of, enqueue, enqueue_after, enqueue_mark,
    enqueue_reporting, enqueue_wait, identity, is_idle, name, properties, refuse_implicit, submit,
    synchronize, synchronize_device,
};
pub(crate) use capture::{begin_capture, capture_marker, end_capture, join, membership};
pub(crate) use queue::{host_waiter, Failure};
