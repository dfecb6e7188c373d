//! CUDA graphs: work queued on streams, captured once and launched many
//! times for a fraction of the cost of queueing it again.
//!
//! - [`Stream::capture`](crate::Stream::capture) (a closure) or
//!   [`Stream::begin_capture`](crate::Stream::begin_capture) and
//!   [`Capture::end`] record the work queued on a stream, and on the streams
//!   it forks to by events, into a [`Graph`]: launches, device copies and
//!   fills by memset, event records and waits, allocations and frees;
//! - [`Graph::instantiate`] makes a [`GraphExec`], launched on any stream of
//!   the device with [`GraphExec::launch`];
//! - [`GraphExec::set_kernel_args`] gives a kernel node new arguments built by
//!   the same typed launcher as `launch!` (`kernel_args!`), so a wrong
//!   argument type is a compile error.
//!
//! # Soundness
//!
//! A graph's kernels read and write device buffers long after the capture,
//! at each launch. So a graph keeps alive every buffer its work uses (a
//! dropped buffer's memory is freed after the last graph using it is
//! dropped), and each launch is ordered like one kernel launch: after the
//! buffers' conflicting accesses on other streams, and before later ones
//! (see the memory module's tracking). Inside the capture, accesses of a
//! buffer on the capture's streams are ordered among themselves, which makes
//! graph edges. Memory allocated in the capture belongs to the graph (it is
//! allocated and freed at each launch) and must be dropped inside the
//! capture; a buffer that outlives it is an error, and unusable. What cannot
//! be captured is refused with an error naming the capture: waits for the
//! host (`synchronize`, `_sync` copies, `Event::synchronize`), callbacks,
//! pinned and mapped memory, `fill` (its value comes from host memory).
//!
//! Captures use CUDA's relaxed capture mode: no call of another thread fails
//! because a capture is in progress (as the global mode would make it), and
//! the runtime refuses what cannot be captured itself, naming the capture,
//! rather than leaving it to the driver.

mod capture;
mod exec;

pub use capture::Capture;
pub use exec::{Graph, GraphExec, KernelNode};
