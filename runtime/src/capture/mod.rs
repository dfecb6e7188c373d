//! Graph capture's one record, which every kind of stream work asks: is
//! this stream capturing, and into which capture ([`Link`], held by each
//! stream)? Record this kernel, this buffer's use or allocation, this event
//! as captured ([`Record`], [`Mark`], held by each event); may this device's
//! legacy default stream be used, or a device-wide wait run, while captures
//! are under way ([`registry`])?
//!
//! One [`Record`] per capture, from its begin to its end: its streams, the
//! kernel launches that made its nodes, the memory its work uses (the memory
//! tracking's part, typed there) and the work that waits for its end. It is
//! generic over the stream type and knows the memory only as a part, so
//! that this module lies below the stream, memory and device modules that
//! ask it. Captures are relaxed-mode (`CU_STREAM_CAPTURE_MODE_RELAXED`),
//! the only mode the backends begin.

mod link;
mod record;
pub(crate) mod registry;

pub(crate) use link::{event_wait, EventWait, Link, Mark};
pub(crate) use record::{CapturedKernel, InProgress, Record};
