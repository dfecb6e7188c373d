//! Batches of copies between one pinned buffer and device memory, tracked
//! together when the batch ends: one event per stream, after the stream's
//! last copy of the batch, instead of one per copy (each event in a stream
//! costs the device a little time).
//!
//! A batch lives only inside the closure given to
//! [`PinnedBuffer::copies_to_device`] or [`PinnedBuffer::copies_from_device`],
//! which hands it out by shared reference: it cannot be leaked, moved or
//! swapped with another, so its copies are tracked before the call returns
//! or unwinds, while the buffer is still borrowed. Until then no host code
//! can write the buffer (it is borrowed; for copies into it, exclusively),
//! nor free it.

use super::{Mapping, PinnedBuffer};
use crate::error::Result;
use crate::memory::{DeviceView, DeviceViewMut};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::cell::RefCell;
use std::ops::Range;

/// Per stream, the range of the buffer covering the batch's copies on it.
#[derive(Default)]
struct Queued(Vec<(Stream, Option<Range<usize>>)>);

impl Queued {
    /// The range to widen for a copy on `stream`.
    fn of(&mut self, stream: &Stream) -> &mut Option<Range<usize>> {
        let at = match self.0.iter().position(|(s, _)| s == stream) {
            Some(at) => at,
            None => {
                self.0.push((stream.clone(), None));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    /// Tracks every stream's copies on `buffer`; the first error, if any.
    /// Without an event, `track_queued` has waited for the stream instead,
    /// so the copies are accounted for either way.
    fn track<T: DeviceCopy, M: Mapping>(
        &mut self,
        buffer: &PinnedBuffer<T, M>,
        write: bool,
    ) -> Result<()> {
        let mut first_error = Ok(());
        for (stream, range) in self.0.drain(..) {
            if let Some(range) = range {
                first_error = first_error.and(buffer.track_queued(&stream, range, write));
            }
        }
        first_error
    }
}

/// Copies out of a pinned buffer into device memory, queued on any streams
/// and tracked together when the batch ends: see
/// [`PinnedBuffer::copies_to_device`].
pub struct CopiesToDevice<'a, T: DeviceCopy, M: Mapping> {
    source: &'a PinnedBuffer<T, M>,
    queued: RefCell<Queued>,
}

/// Copies from device memory into a pinned buffer, queued on any streams
/// and tracked together when the batch ends: see
/// [`PinnedBuffer::copies_from_device`].
pub struct CopiesFromDevice<'a, T: DeviceCopy, M: Mapping> {
    destination: &'a PinnedBuffer<T, M>,
    queued: RefCell<Queued>,
}

impl<T: DeviceCopy, M: Mapping> PinnedBuffer<T, M> {
    /// Runs `queue`, which queues copies out of this buffer with
    /// [`CopiesToDevice::copy`], then tracks them by one event per stream
    /// used (also when `queue` fails or panics). Returns `queue`'s result, or
    /// its error; then the first tracking error, if any. As with
    /// [`DeviceViewMut::copy_from_pinned`], writing or dropping the buffer
    /// later waits for the copies.
    ///
    /// ```no_run
    /// use gpu_runtime::{DeviceBuffer, PinnedBuffer, Stream};
    /// let streams = [Stream::new()?, Stream::new()?];
    /// let host = PinnedBuffer::from_slice(&[1.0f32; 8192])?;
    /// let mut halves = [DeviceBuffer::<f32>::device_array(4096)?, DeviceBuffer::<f32>::device_array(4096)?];
    /// host.copies_to_device(|copies| {
    ///     for (i, (half, stream)) in halves.iter_mut().zip(&streams).enumerate() {
    ///         copies.copy(i * 4096, half.view_mut(), stream)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn copies_to_device<R>(
        &self,
        queue: impl FnOnce(&CopiesToDevice<'_, T, M>) -> Result<R>,
    ) -> Result<R> {
        let batch = CopiesToDevice {
            source: self,
            queued: RefCell::default(),
        };
        let result = queue(&batch);
        let tracked = batch.queued.borrow_mut().track(self, false);
        let value = result?;
        tracked.map(|()| value)
    }

    /// Runs `queue`, which queues copies into this buffer with
    /// [`CopiesFromDevice::copy`], then tracks them by one event per stream
    /// used (also when `queue` fails or panics). Returns `queue`'s result, or
    /// its error; then the first tracking error, if any. As with
    /// [`DeviceView::copy_to_pinned`], reading the buffer later waits for the
    /// copies.
    pub fn copies_from_device<R>(
        &mut self,
        queue: impl FnOnce(&CopiesFromDevice<'_, T, M>) -> Result<R>,
    ) -> Result<R> {
        // Borrowed exclusively for the whole batch: no host slice of the
        // buffer is alive while copies write it, and none can be made.
        let destination: &PinnedBuffer<T, M> = self;
        let batch = CopiesFromDevice {
            destination,
            queued: RefCell::default(),
        };
        let result = queue(&batch);
        let tracked = batch.queued.borrow_mut().track(destination, true);
        let value = result?;
        tracked.map(|()| value)
    }
}

impl<T: DeviceCopy, M: Mapping> CopiesToDevice<'_, T, M> {
    /// Queues a copy of `source[at..at + destination.len()]` (the batch's
    /// buffer) into `destination` on `stream`, after the destination's
    /// other uses, and returns.
    pub fn copy(
        &self,
        at: usize,
        mut destination: DeviceViewMut<'_, T>,
        stream: &Stream,
    ) -> Result<()> {
        let mut queued = self.queued.borrow_mut();
        let range = queued.of(stream);
        // SAFETY: the batch tracks the copy on `stream`, for a range covering
        // `*range`, when it ends: after this copy in stream order, before
        // `copies_to_device` returns or unwinds, while `source` is still
        // borrowed, so the host cannot write or free it before then (the
        // batch cannot be leaked: it is only lent to the closure).
        unsafe { destination.copy_from_pinned_untracked(self.source, at, stream, range) }
    }
}

impl<T: DeviceCopy, M: Mapping> CopiesFromDevice<'_, T, M> {
    /// Queues a copy of `source` into `destination[at..at + source.len()]`
    /// (the batch's buffer) on `stream`, after the source's writers, and
    /// returns.
    pub fn copy(&self, source: DeviceView<'_, T>, at: usize, stream: &Stream) -> Result<()> {
        let mut queued = self.queued.borrow_mut();
        let range = queued.of(stream);
        // SAFETY: `copies_from_device` borrows the buffer exclusively for the
        // whole batch, so no host slice of it is alive; the batch tracks the
        // copy on `stream`, for a range covering `*range`, when it ends,
        // before that borrow ends (as in `CopiesToDevice::copy`).
        unsafe { source.copy_to_pinned_untracked(self.destination, at, stream, range) }
    }
}

impl<T: DeviceCopy, M: Mapping> Drop for CopiesToDevice<'_, T, M> {
    fn drop(&mut self) {
        // Only after a panic in the batch's closure: the normal end has
        // tracked everything already. Errors are dropped; the copies are
        // accounted for (see `Queued::track`).
        let _ = self.queued.get_mut().track(self.source, false);
    }
}

impl<T: DeviceCopy, M: Mapping> Drop for CopiesFromDevice<'_, T, M> {
    fn drop(&mut self) {
        // As for `CopiesToDevice`.
        let _ = self.queued.get_mut().track(self.destination, true);
    }
}

impl<T: DeviceCopy, M: Mapping> std::fmt::Debug for CopiesToDevice<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopiesToDevice")
            .field("source", self.source)
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy, M: Mapping> std::fmt::Debug for CopiesFromDevice<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopiesFromDevice")
            .field("destination", self.destination)
            .finish_non_exhaustive()
    }
}
