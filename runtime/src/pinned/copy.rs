//! Asynchronous copies between pinned memory and device memory, tracked by
//! the pinned buffer (see the parent module).

use super::tracking::widen;
use super::{Mapping, PinnedBuffer};
use crate::backend::driver;
use crate::error::{Error, Result};
use crate::memory::{check_device, DeviceBuffer, DeviceView, DeviceViewMut, RawView};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::mem::size_of;
use std::ops::Range;

/// Which way a copy between pinned and device memory goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Pinned memory to the device: the device reads the pinned buffer.
    ToDevice,
    /// The device to pinned memory: the device writes the pinned buffer.
    FromDevice,
}

impl<T: DeviceCopy, M: Mapping> PinnedBuffer<T, M> {
    /// Waits on `stream` for conflicting accesses to `self[at..at + len]`,
    /// queues a copy between it and `device` (a device range of `len`
    /// elements), and widens `*queued` to cover the range. Does not track it.
    ///
    /// # Safety
    /// - `device` is borrowed device memory that outlives the copy (its drop
    ///   waits for queued work), borrowed exclusively when the copy writes it
    ///   ([`Direction::ToDevice`]).
    /// - No host slice of the buffer is alive when the copy writes it
    ///   ([`Direction::FromDevice`]).
    /// - Before the host can write the pinned range again, or read it after a
    ///   copy that writes it, the caller tracks the copy with
    ///   [`track_queued`](Self::track_queued) on `stream`, after the copy,
    ///   for a range covering `*queued`.
    unsafe fn queue_copy(
        &self,
        direction: Direction,
        device: RawView,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        let (host, range) = self.range(at, device.len)?;
        check_device(device.device, stream, "a pinned copy")?;
        stream.refuse_in_capture(
            "a copy between pinned and device memory",
            super::NOT_IN_GRAPHS,
        )?;
        if range.is_empty() {
            return Ok(());
        }
        let writes_host = direction == Direction::FromDevice;
        self.lock().order_before(stream, &range, writes_host)?;
        let bytes = range.len() * size_of::<T>();
        // SAFETY: both ranges are in bounds and stay valid and unused by the
        // host until the copy completes (the caller's contract).
        let copied = unsafe {
            match direction {
                Direction::ToDevice => {
                    driver().copy_to_device_async(device.ptr, host.cast(), bytes, stream.handle())
                }
                Direction::FromDevice => {
                    driver().copy_to_host_async(host.cast(), device.ptr, bytes, stream.handle())
                }
            }
        };
        copied.map_err(|e| stream.error(e))?;
        widen(queued, range);
        Ok(())
    }

    /// [`queue_copy`](Self::queue_copy), then an event after the copy that
    /// tracks it.
    ///
    /// # Safety
    /// As `queue_copy`, but for the tracking, which this does.
    unsafe fn queue_tracked_copy(
        &self,
        direction: Direction,
        device: RawView,
        at: usize,
        stream: &Stream,
    ) -> Result<()> {
        let mut queued = None;
        // SAFETY: forwarded to the caller; tracked below.
        unsafe { self.queue_copy(direction, device, at, stream, &mut queued)? };
        match queued {
            Some(range) => self.track_queued(stream, range, direction == Direction::FromDevice),
            None => Ok(()),
        }
    }
}

impl<T: DeviceCopy> DeviceViewMut<'_, T> {
    /// Queues a copy of `source[at..at + self.len()]` into this view on
    /// `stream` and returns; `source` tracks the copy (see the module docs).
    pub fn copy_from_pinned<M: Mapping>(
        &mut self,
        source: &PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
    ) -> Result<()> {
        let device = self.raw();
        self.track_write(stream)?;
        // SAFETY: this view is device memory borrowed exclusively for the
        // call, ordered after its other uses; the copy is tracked before this
        // returns.
        unsafe { source.queue_tracked_copy(Direction::ToDevice, device, at, stream) }
    }

    /// [`copy_from_pinned`](Self::copy_from_pinned) without the event after
    /// the copy, for batches of copies tracked together
    /// ([`CopiesToDevice`](super::CopiesToDevice)): widens `*queued` to cover
    /// the copy's range.
    ///
    /// # Safety
    /// Before the host can write or free `source`, the caller records the
    /// copy: [`PinnedBuffer::track_queued`] on `stream` with a range covering
    /// `*queued`, after the copy in stream order.
    pub(super) unsafe fn copy_from_pinned_untracked<M: Mapping>(
        &mut self,
        source: &PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        let device = self.raw();
        self.track_write(stream)?;
        // SAFETY: this view is device memory borrowed exclusively for the
        // call, ordered after its other uses; the pinned side's tracking is
        // the caller's.
        unsafe { source.queue_copy(Direction::ToDevice, device, at, stream, queued) }
    }
}

impl<T: DeviceCopy> DeviceView<'_, T> {
    /// Queues a copy of this view into `destination[at..at + self.len()]` on
    /// `stream` and returns; `destination` tracks the copy (see the module docs).
    pub fn copy_to_pinned<M: Mapping>(
        &self,
        destination: &mut PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.track_read(stream)?;
        // SAFETY: `&mut` excludes host slices of the destination; the device
        // side is ordered after its writers; the copy is tracked before this
        // returns.
        unsafe { destination.queue_tracked_copy(Direction::FromDevice, self.raw(), at, stream) }
    }

    /// [`copy_to_pinned`](Self::copy_to_pinned) without the event after the
    /// copy, for batches of copies tracked together
    /// ([`CopiesFromDevice`](super::CopiesFromDevice)): widens `*queued` to
    /// cover the copy's range.
    ///
    /// # Safety
    /// No host slice of `destination` may be alive, and before the host can
    /// read, write or free it, the caller records the copy:
    /// [`PinnedBuffer::track_queued`] on `stream` with a range covering
    /// `*queued`, after the copy in stream order.
    pub(super) unsafe fn copy_to_pinned_untracked<M: Mapping>(
        &self,
        destination: &PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        self.track_read(stream)?;
        // SAFETY: forwarded to the caller; the device side is ordered after
        // its writers.
        unsafe { destination.queue_copy(Direction::FromDevice, self.raw(), at, stream, queued) }
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Queues a copy of all of `source` (the same length) into the buffer.
    pub fn copy_from_pinned<M: Mapping>(
        &mut self,
        source: &PinnedBuffer<T, M>,
        stream: &Stream,
    ) -> Result<()> {
        if source.len() != self.len() {
            return Err(Error::LengthMismatch {
                operation: "copy from pinned memory",
                destination: self.len(),
                source: source.len(),
            });
        }
        self.view_mut().copy_from_pinned(source, 0, stream)
    }

    /// Queues a copy of the buffer into all of `destination` (the same length).
    pub fn copy_to_pinned<M: Mapping>(
        &self,
        destination: &mut PinnedBuffer<T, M>,
        stream: &Stream,
    ) -> Result<()> {
        if destination.len() != self.len() {
            return Err(Error::LengthMismatch {
                operation: "copy to pinned memory",
                destination: destination.len(),
                source: self.len(),
            });
        }
        self.view().copy_to_pinned(destination, 0, stream)
    }
}
