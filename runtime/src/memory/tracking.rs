//! Automatic ordering of device memory across streams.
//!
//! Every [`DeviceBuffer`](super::DeviceBuffer) (and every view of it, which
//! shares the buffer's tracker) knows the stream of its last writer and the
//! streams that read it since. Before an access is queued on a stream:
//!
//! - a **read** waits, on the device, for the last writer if it ran on
//!   another stream;
//! - a **write** waits for the last writer and for every reader on other
//!   streams (all of them: one read event, as cudarc keeps, would miss the
//!   other readers).
//!
//! The wait is an untimed event recorded on the other stream at that moment
//! (so it covers everything queued there so far, the conflicting access
//! among it), then `cuStreamWaitEvent`: the host never blocks. Nothing is
//! recorded while a buffer stays on one stream. Reading to the host is a read
//! on the copy's stream followed by a wait for that stream, so it waits for
//! the last writer wherever it ran.
//!
//! The access is recorded before its work is queued, which is sound because
//! Rust's borrows serialise the host side: a write needs `&mut` of the buffer,
//! so no other access of the buffer is being queued at the same time, and a
//! write can only start after every earlier call that queued an access has
//! returned.
//!
//! A per-thread default stream of another thread cannot be recorded on from
//! this one (CUDA's handle for it means "the calling thread's"); the wait then
//! goes through the device's legacy default stream, whose work waits for all
//! earlier work of the blocking streams, per-thread ones included.
//!
//! # In a graph capture
//!
//! An access queued on a capturing stream runs only when the graph is
//! launched, perhaps many times, long after. So it is not recorded as the
//! buffer's real access: the buffer's accesses *inside the capture* are kept
//! apart (ordering them among the capture's streams makes graph edges), and
//! the capture keeps the buffer alive and remembers whether the graph reads
//! or writes it. Each launch of the graph is then one tracked access on the
//! launching stream, ordered after the buffer's real accesses on other
//! streams, as a kernel launch is. Memory allocated on a capturing stream
//! belongs to the graph (a graph allocation): it is usable by the capture's
//! streams only, and must be freed inside the capture.
//!
//! Outside the model: device memory reached through raw pointers
//! ([`DeviceBuffer::as_raw`](super::DeviceBuffer::as_raw)) or by other
//! libraries on their streams, and events the user records; those need
//! explicit `wait_event`s, as in CUDA.

use crate::backend::GraphNodeHandle;
use crate::error::{Error, Result};
use crate::stream::{CaptureRecord, Stream};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Whether an access reads or writes the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Access {
    Read,
    Write,
}

/// The streams that touched a buffer: its last writer and the readers since.
#[derive(Default)]
pub(crate) struct Accesses {
    pub(crate) writer: Option<Stream>,
    pub(crate) readers: Vec<Stream>,
}

impl Accesses {
    /// Every stream with a tracked access, the writer first.
    pub(crate) fn streams(&self) -> impl Iterator<Item = &Stream> {
        self.writer.iter().chain(&self.readers)
    }
}

/// Device memory with tracked accesses, which a graph can keep alive.
pub(crate) trait Tracked: Send + Sync {
    /// The memory's tracker.
    fn tracker(&self) -> &AccessTracker;
}

/// Memory a graph keeps alive, and whether the graph writes it.
pub(crate) type GraphUse = (Arc<dyn Tracked>, Access);

/// The memory tracking's part of a capture's record: the memory its work
/// uses, with each buffer's accesses inside the capture, and the graph
/// allocations made in it.
#[derive(Default)]
struct CaptureUses {
    /// Per buffer, by its tracker's address.
    buffers: HashMap<usize, InCapture>,
    allocated: Vec<Weak<dyn Tracked>>,
    /// Per kernel node: the buffers its launch used.
    per_node: HashMap<GraphNodeHandle, Vec<GraphUse>>,
}

/// A buffer used in a capture: its accesses inside the capture (ordering
/// them among the capture's streams makes graph edges), and the memory,
/// kept alive for the graph, with whether the graph writes it.
struct InCapture {
    accesses: Accesses,
    used: GraphUse,
}

/// What a capture's graph uses: all its memory, and each kernel node's.
pub(crate) struct CapturedMemory {
    /// Every buffer the graph uses (kernels, copies, memsets), each with
    /// whether it writes it.
    pub(crate) all: Vec<GraphUse>,
    /// Per kernel node, the buffers its launch used.
    pub(crate) per_node: HashMap<GraphNodeHandle, Vec<GraphUse>>,
    /// How many graph allocations outlived the capture.
    pub(crate) escaped: usize,
}

/// Records the buffers the launch that made kernel node `node` of
/// `capture` used.
pub(crate) fn note_node_memory(
    capture: &CaptureRecord,
    node: GraphNodeHandle,
    memory: Vec<GraphUse>,
) {
    capture.memory(|uses: &mut CaptureUses| uses.per_node.insert(node, memory));
}

/// What `capture` used (see [`CapturedMemory`]), once it has ended. Graph
/// allocations still alive are from now on unusable (their capture has
/// ended): their memory belongs to a graph that is discarded.
pub(crate) fn end_of_capture(capture: &CaptureRecord) -> CapturedMemory {
    let uses: CaptureUses = capture.take_memory();
    let escaped = uses.allocated.iter().filter_map(Weak::upgrade).count();
    CapturedMemory {
        all: uses
            .buffers
            .into_values()
            .map(|buffer| buffer.used)
            .collect(),
        per_node: uses.per_node,
        escaped,
    }
}

/// A buffer's tracked accesses.
pub(crate) struct AccessTracker {
    /// The id of the stream that wrote the buffer last and is the only one
    /// to have used it since, or 0. An access on that stream needs no wait
    /// and changes nothing, so it reads only this (no lock): the common case
    /// of a buffer that stays on one stream.
    sole: AtomicU64,
    accesses: Mutex<Accesses>,
    /// The memory this tracker belongs to, for captures that keep it alive.
    owner: Weak<dyn Tracked>,
    /// For a graph allocation: the capture that made it. Outliving the
    /// capture, it has no memory.
    graph_allocation: Option<Arc<CaptureRecord>>,
}

impl AccessTracker {
    /// The tracker of memory `owner`, whose first access (its allocation,
    /// in stream order) was a write on `stream`. Made on a capturing stream,
    /// the memory is a graph allocation of that capture.
    pub(crate) fn written_on(stream: &Stream, owner: Weak<dyn Tracked>) -> Self {
        let graph_allocation = stream.active_capture();
        if let Some(capture) = &graph_allocation {
            capture.memory(|uses: &mut CaptureUses| uses.allocated.push(owner.clone()));
        }
        AccessTracker {
            sole: AtomicU64::new(stream.id()),
            accesses: Mutex::new(Accesses {
                writer: Some(stream.clone()),
                readers: Vec::new(),
            }),
            owner,
            graph_allocation,
        }
    }

    /// The tracker of memory `owner` that no stream has used yet (memory
    /// allocated outside stream order: managed, pitched).
    pub(crate) fn unused(owner: Weak<dyn Tracked>) -> Self {
        AccessTracker {
            sole: AtomicU64::new(0),
            accesses: Mutex::new(Accesses::default()),
            owner,
            graph_allocation: None,
        }
    }

    /// Waits on the host until the device work a host `access` of the memory
    /// conflicts with has completed (a read: the last writer; a write: the
    /// writer and every reader), and forgets it: it is done. Memory whose
    /// host accesses go through this must never be used in a capture (its
    /// graph's launches would touch it behind the host's borrows).
    pub(crate) fn wait_on_host(&self, access: Access) -> Result<()> {
        let mut accesses = self.lock();
        if let Some(writer) = &accesses.writer {
            writer.wait_on_host()?;
        }
        accesses.writer = None;
        if access == Access::Write {
            for reader in &accesses.readers {
                reader.wait_on_host()?;
            }
            accesses.readers.clear();
        }
        // No stream is the sole user now.
        self.sole.store(0, Ordering::Release);
        Ok(())
    }

    /// The memory this tracker belongs to, while it lives.
    pub(crate) fn owner(&self) -> Option<Arc<dyn Tracked>> {
        self.owner.upgrade()
    }

    /// The capture whose graph allocation this is, and whether it outlived it.
    pub(crate) fn graph_allocation(&self) -> (Option<&Arc<CaptureRecord>>, bool) {
        let capture = self.graph_allocation.as_ref();
        (capture, capture.is_some_and(|c| c.has_ended()))
    }

    fn lock(&self) -> MutexGuard<'_, Accesses> {
        self.accesses.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Orders an access about to be queued on `stream` after the conflicting
    /// accesses on other streams, and records it (see the module docs); in a
    /// capture, among the capture's accesses, keeping the memory alive for
    /// the graph.
    #[inline]
    pub(crate) fn access(&self, stream: &Stream, access: Access) -> Result<()> {
        // The common case: the buffer stays on one stream, outside captures.
        if self.sole.load(Ordering::Acquire) == stream.id()
            && self.graph_allocation.is_none()
            && stream.active_capture().is_none()
        {
            return Ok(());
        }
        self.access_slow(stream, access)
    }

    fn access_slow(&self, stream: &Stream, access: Access) -> Result<()> {
        let capture = stream.active_capture();
        if let Some(owner) = &self.graph_allocation {
            // Once the capture has ended no stream's capture is it.
            let inside = capture.as_ref().is_some_and(|c| Arc::ptr_eq(c, owner));
            if !inside {
                return Err(Error::BufferOfCapture { capture: owner.id });
            }
            // Only the capture's streams use it: its accesses are the real ones.
            return order(&mut self.lock(), stream, access);
        }
        let Some(capture) = capture else {
            let mut accesses = self.lock();
            order(&mut accesses, stream, access)?;
            let sole = match &accesses.writer {
                Some(writer) if accesses.readers.is_empty() => writer.id(),
                _ => 0,
            };
            self.sole.store(sole, Ordering::Release);
            return Ok(());
        };
        let Some(owner) = self.owner.upgrade() else {
            // Memory being dropped is not used by new work.
            return order(&mut Accesses::default(), stream, access);
        };
        // The capture's record holds the buffer's accesses inside it, and the
        // buffer for its graph. (Its lock is held while ordering: the waits
        // are recorded into the capture, never for the device.)
        let key = self as *const AccessTracker as usize;
        capture.memory(|uses: &mut CaptureUses| {
            let buffer = uses.buffers.entry(key).or_insert_with(|| InCapture {
                accesses: Accesses::default(),
                used: (owner, access),
            });
            order(&mut buffer.accesses, stream, access)?;
            buffer.used.1 = buffer.used.1.max(access);
            Ok(())
        })
    }

    /// The accesses, for releasing the memory after them.
    pub(crate) fn take(&mut self) -> Accesses {
        *self.sole.get_mut() = 0;
        std::mem::take(self.accesses.get_mut().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Orders an access about to be queued on `stream` after the conflicting
/// ones among `accesses`, and records it there.
fn order(accesses: &mut Accesses, stream: &Stream, access: Access) -> Result<()> {
    if let Some(writer) = &accesses.writer {
        if writer != stream {
            stream.wait_for(writer)?;
        }
    }
    match access {
        Access::Read => {
            let known = accesses.streams().any(|s| s == stream);
            if !known {
                accesses.readers.push(stream.clone());
            }
        }
        Access::Write => {
            for reader in &accesses.readers {
                if reader != stream {
                    stream.wait_for(reader)?;
                }
            }
            accesses.readers.clear();
            accesses.writer = Some(stream.clone());
        }
    }
    Ok(())
}
