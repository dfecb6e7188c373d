//! Page-locked host memory and asynchronous copies that are safe without
//! `unsafe`.
//!
//! A copy between a [`PinnedBuffer`] and device memory returns as soon as it
//! is queued; the driver reads or writes the pinned memory later. The buffer
//! keeps track of those copies (an event recorded after each) and every host
//! access waits for the ones it would race with:
//!
//! - [`PinnedBuffer::as_slice`] waits for copies *into* the buffer;
//! - [`PinnedBuffer::as_mut_slice`] and dropping the buffer wait for all;
//! - a copy into the buffer takes `&mut PinnedBuffer`, so no host slice of it
//!   can be alive while it is queued;
//! - two copies on different streams that touch the buffer in conflicting
//!   ways are ordered on the device (`wait_event`), without blocking the host.
//!
//! Tracking in the buffer, rather than a guard returned by the copy, keeps
//! this sound when a value is leaked with `mem::forget`, and lets a pipeline
//! queue many copies without holding borrows across them.

use crate::device::{self, Device};
use crate::driver;
use crate::error::{Error, Result};
use crate::event::{Event, EventOptions};
use crate::memory::{check_device, DeviceBuffer, DeviceView, DeviceViewMut};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Page-locked host memory (Numba's `pinned_array`, CuPy's `empty_pinned`):
/// copies to and from it run asynchronously, at full bus speed. Allocate once
/// and reuse; allocation is slow.
pub struct PinnedBuffer<T: DeviceCopy> {
    ptr: NonNull<T>,
    len: usize,
    device: usize,
    pending: Mutex<Pending>,
    _owns: PhantomData<T>,
}

/// Copies in flight that touch the buffer: the element range each touches
/// and an event recorded after it.
#[derive(Default)]
struct Pending {
    /// Copies from the buffer to the device (the device reads it).
    reads: Vec<(Range<usize>, Event)>,
    /// Copies from the device into the buffer (the device writes it).
    writes: Vec<(Range<usize>, Event)>,
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

// SAFETY: the buffer owns its allocation; host access goes through `&self` /
// `&mut self` methods that first wait for the device's accesses.
unsafe impl<T: DeviceCopy + Send> Send for PinnedBuffer<T> {}
// SAFETY: as above; the pending lists are behind a mutex.
unsafe impl<T: DeviceCopy + Sync> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// `len` zeroed elements of page-locked memory, for the current device.
    pub fn new(len: usize) -> Result<Self> {
        let device = Device::current()?;
        device.state()?;
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::OutOfMemory {
            requested: usize::MAX,
            free: 0,
            total: 0,
        })?;
        let ptr = if bytes == 0 {
            NonNull::dangling()
        } else {
            match driver::host_alloc(bytes) {
                (driver::SUCCESS, p) => {
                    // SAFETY: the allocation holds `bytes` bytes; zero is a valid `T` (`DeviceCopy`).
                    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
                    NonNull::new(p.cast::<T>())
                        .expect("the driver returns non-null memory on success")
                }
                (driver::ERROR_OUT_OF_MEMORY, _) => {
                    return Err(Error::OutOfMemory {
                        requested: bytes,
                        free: 0,
                        total: 0,
                    })
                }
                (code, _) => return Err(device.state()?.error("cuMemHostAlloc", code)),
            }
        };
        Ok(PinnedBuffer {
            ptr,
            len,
            device: device.ordinal(),
            pending: Mutex::new(Pending::default()),
            _owns: PhantomData,
        })
    }

    /// Page-locked memory holding a copy of `data`.
    pub fn from_slice(data: &[T]) -> Result<Self> {
        let mut buffer = PinnedBuffer::new(data.len())?;
        buffer.as_mut_slice()?.copy_from_slice(data);
        Ok(buffer)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The contents, once every copy into the buffer has completed.
    pub fn as_slice(&self) -> Result<&[T]> {
        let writes = std::mem::take(&mut self.lock().writes);
        wait_all(writes)?;
        // SAFETY: `len` initialised elements; no device write is pending, and
        // new ones need `&mut self`, which this borrow excludes.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }

    /// The contents, writable, once every copy from or into the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        let pending = std::mem::take(&mut *self.lock());
        wait_all(pending.reads)?;
        wait_all(pending.writes)?;
        // SAFETY: `len` initialised elements, exclusively borrowed; no device
        // access is pending, and new ones need `&self` or `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }

    /// Whether no copy touching the buffer is still in flight.
    pub fn is_idle(&self) -> Result<bool> {
        let pending = self.lock();
        for (_, event) in pending.reads.iter().chain(&pending.writes) {
            if !event.is_done()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn range(&self, at: usize, len: usize) -> Result<(*mut T, Range<usize>)> {
        match at.checked_add(len) {
            Some(end) if end <= self.len => Ok((self.ptr.as_ptr().wrapping_add(at), at..end)),
            _ => Err(Error::LengthMismatch {
                operation: "pinned range",
                destination: self.len,
                source: at.saturating_add(len),
            }),
        }
    }
    /// Makes `stream` wait for the in-flight copies that conflict with a new
    /// one on `range` (writes conflict with reads and writes, reads with
    /// writes), queues the copy with `enqueue`, and tracks it.
    fn track(
        &self,
        stream: &Stream,
        range: Range<usize>,
        write: bool,
        enqueue: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let mut pending = self.lock();
        // Completed copies need no more tracking.
        pending.reads.retain(|(_, e)| !e.is_done().unwrap_or(false));
        pending
            .writes
            .retain(|(_, e)| !e.is_done().unwrap_or(false));
        let reads = if write { &pending.reads[..] } else { &[][..] };
        for (other, event) in reads.iter().chain(&pending.writes) {
            if overlaps(other, &range) {
                stream.wait_event(event)?;
            }
        }
        enqueue()?;
        let marker = Event::with_options(EventOptions::new().timing(false))?;
        marker.record_on(stream)?;
        if write {
            pending.writes.push((range, marker));
        } else {
            pending.reads.push((range, marker));
        }
        Ok(())
    }
}

fn wait_all(events: Vec<(Range<usize>, Event)>) -> Result<()> {
    for (_, event) in events {
        event.synchronize()?;
    }
    Ok(())
}

impl<T: DeviceCopy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        let pending = std::mem::take(&mut *self.lock());
        // If waiting fails (a lost context), the driver no longer runs copies.
        let _ = wait_all(pending.reads);
        let _ = wait_all(pending.writes);
        if self.len > 0 && size_of::<T>() > 0 && device::state(self.device).is_ok() {
            // SAFETY: allocated by `host_alloc`; no copy uses it any more.
            let _ = unsafe { driver::host_free(self.ptr.as_ptr().cast()) };
        }
    }
}

impl<T: DeviceCopy> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PinnedBuffer<{}>[{}]",
            std::any::type_name::<T>(),
            self.len
        )
    }
}

impl<T: DeviceCopy> DeviceViewMut<'_, T> {
    /// Queues a copy of `source[at..at + self.len()]` into this view on
    /// `stream` and returns; `source` tracks the copy (see the module docs).
    pub fn copy_from_pinned(
        &mut self,
        source: &PinnedBuffer<T>,
        at: usize,
        stream: &Stream,
    ) -> Result<()> {
        let (dst, len, device) = self.raw_parts();
        let (src, range) = source.range(at, len)?;
        check_device(device, stream)?;
        if len == 0 {
            return Ok(());
        }
        source.track(stream, range, false, || {
            // SAFETY: the destination is borrowed device memory of `len`
            // elements (its drop waits for queued work); the source range is
            // in bounds and kept alive and unwritten until the copy completes
            // by the buffer's tracking.
            let code = unsafe {
                driver::memcpy_htod_async(dst, src.cast(), len * size_of::<T>(), stream.as_raw())
            };
            if code == driver::SUCCESS {
                Ok(())
            } else {
                Err(stream.error("cuMemcpyHtoDAsync", code))
            }
        })
    }
}

impl<T: DeviceCopy> DeviceView<'_, T> {
    /// Queues a copy of this view into `destination[at..at + self.len()]` on
    /// `stream` and returns; `destination` tracks the copy (see the module docs).
    pub fn copy_to_pinned(
        &self,
        destination: &mut PinnedBuffer<T>,
        at: usize,
        stream: &Stream,
    ) -> Result<()> {
        let (src, len, device) = self.raw_parts();
        let (dst, range) = destination.range(at, len)?;
        check_device(device, stream)?;
        if len == 0 {
            return Ok(());
        }
        destination.track(stream, range, true, || {
            // SAFETY: the source is borrowed device memory of `len` elements;
            // the destination range is in bounds, and no host access can happen
            // until the copy completes (tracking; `&mut` excludes live slices).
            let code = unsafe {
                driver::memcpy_dtoh_async(dst.cast(), src, len * size_of::<T>(), stream.as_raw())
            };
            if code == driver::SUCCESS {
                Ok(())
            } else {
                Err(stream.error("cuMemcpyDtoHAsync", code))
            }
        })
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Queues a copy of all of `source` (the same length) into the buffer.
    pub fn copy_from_pinned(&mut self, source: &PinnedBuffer<T>, stream: &Stream) -> Result<()> {
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
    pub fn copy_to_pinned(&self, destination: &mut PinnedBuffer<T>, stream: &Stream) -> Result<()> {
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
