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
//! Outside the model: device memory reached through raw pointers
//! ([`DeviceBuffer::as_raw`](super::DeviceBuffer::as_raw)) or by other
//! libraries on their streams, and events the user records; those need
//! explicit `wait_event`s, as in CUDA.

use crate::error::Result;
use crate::stream::Stream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Whether an access reads or writes the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A buffer's tracked accesses.
pub(crate) struct AccessTracker {
    /// The id of the stream that wrote the buffer last and is the only one
    /// to have used it since, or 0. An access on that stream needs no wait
    /// and changes nothing, so it reads only this (no lock): the common case
    /// of a buffer that stays on one stream.
    sole: AtomicU64,
    accesses: Mutex<Accesses>,
}

impl AccessTracker {
    /// A buffer whose first access (its allocation, in stream order) was a
    /// write on `stream`.
    pub(crate) fn written_on(stream: &Stream) -> Self {
        AccessTracker {
            sole: AtomicU64::new(stream.id()),
            accesses: Mutex::new(Accesses {
                writer: Some(stream.clone()),
                readers: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Accesses> {
        self.accesses.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Orders an access about to be queued on `stream` after the conflicting
    /// accesses on other streams, and records it (see the module docs).
    #[inline]
    pub(crate) fn access(&self, stream: &Stream, access: Access) -> Result<()> {
        if self.sole.load(Ordering::Acquire) == stream.id() {
            return Ok(());
        }
        self.access_slow(stream, access)
    }

    fn access_slow(&self, stream: &Stream, access: Access) -> Result<()> {
        let mut accesses = self.lock();
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
        let sole = match &accesses.writer {
            Some(writer) if accesses.readers.is_empty() => writer.id(),
            _ => 0,
        };
        self.sole.store(sole, Ordering::Release);
        Ok(())
    }

    /// The accesses, for releasing the memory after them.
    pub(crate) fn take(&mut self) -> Accesses {
        *self.sole.get_mut() = 0;
        std::mem::take(self.accesses.get_mut().unwrap_or_else(|e| e.into_inner()))
    }
}
