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
//!
//! A buffer made with [`PinnedBuffer::new_mapped`] (a [`MappedBuffer`]) is
//! also mapped into the device's address space: kernels read and write it in
//! place through [`PinnedBuffer::device_view`] and
//! [`PinnedBuffer::device_view_mut`], over the bus, without copies (Numba's
//! `mapped_array`). Kernel launches on such a view are tracked like copies.

use crate::device::{self, Device};
use crate::driver;
use crate::error::{Error, Result};
use crate::event::{Event, EventOptions};
use crate::memory::{
    check_device, sealed, DeviceBuffer, DeviceInput, DeviceOutput, DeviceView, DeviceViewMut,
    RawView,
};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Whether a [`PinnedBuffer`] is mapped into the device's address space:
/// [`HostOnly`] or [`Mapped`].
pub trait Mapping: sealed::Sealed + 'static {
    #[doc(hidden)]
    const MAPPED: bool;
}

/// A pinned buffer the device reaches only through copies.
#[derive(Debug)]
pub enum HostOnly {}

/// A pinned buffer that kernels can also read and write in place.
#[derive(Debug)]
pub enum Mapped {}

impl sealed::Sealed for HostOnly {}
impl sealed::Sealed for Mapped {}
impl Mapping for HostOnly {
    const MAPPED: bool = false;
}
impl Mapping for Mapped {
    const MAPPED: bool = true;
}

/// Page-locked host memory that kernels can read and write in place: see
/// [`PinnedBuffer::new_mapped`].
pub type MappedBuffer<T> = PinnedBuffer<T, Mapped>;

/// Page-locked host memory (Numba's `pinned_array`, CuPy's `empty_pinned`):
/// copies to and from it run asynchronously, at full bus speed. Allocate once
/// and reuse; allocation is slow.
///
/// The second parameter says whether the memory is also mapped into the
/// device's address space ([`Mapped`], made by
/// [`new_mapped`](PinnedBuffer::new_mapped)); only then does the buffer have
/// device views.
pub struct PinnedBuffer<T: DeviceCopy, M: Mapping = HostOnly> {
    ptr: NonNull<T>,
    len: usize,
    device: usize,
    /// The device address of the memory (mapped buffers only).
    device_ptr: u64,
    pending: Mutex<Pending>,
    _owns: PhantomData<(T, M)>,
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
unsafe impl<T: DeviceCopy + Send, M: Mapping> Send for PinnedBuffer<T, M> {}
// SAFETY: as above; the pending lists are behind a mutex.
unsafe impl<T: DeviceCopy + Sync, M: Mapping> Sync for PinnedBuffer<T, M> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// `len` zeroed elements of page-locked memory, for the current device.
    pub fn new(len: usize) -> Result<Self> {
        PinnedBuffer::allocate(len)
    }

    /// Page-locked memory holding a copy of `data`.
    pub fn from_slice(data: &[T]) -> Result<Self> {
        PinnedBuffer::allocate_from(data)
    }
}

impl<T: DeviceCopy> PinnedBuffer<T, Mapped> {
    /// `len` zeroed elements of page-locked memory mapped into the current
    /// device's address space (Numba's `mapped_array`): kernels read and
    /// write it in place through [`device_view`](Self::device_view) and
    /// [`device_view_mut`](Self::device_view_mut), each access crossing the
    /// bus. Suits data a kernel touches once; copies suit the rest.
    pub fn new_mapped(len: usize) -> Result<Self> {
        PinnedBuffer::allocate(len)
    }

    /// Mapped page-locked memory holding a copy of `data`.
    pub fn mapped_from_slice(data: &[T]) -> Result<Self> {
        PinnedBuffer::allocate_from(data)
    }

    /// The buffer as a kernel input, read in place over the bus. A launch
    /// with it waits on the device for copies and kernels still writing the
    /// buffer, and the buffer then tracks the launch: the host cannot write
    /// or free it until the kernel has finished.
    pub fn device_view(&self) -> MappedView<'_, T> {
        MappedView {
            raw: self.device_range(),
            pending: &self.pending,
            _element: PhantomData,
        }
    }

    /// The buffer as a kernel output, written in place over the bus. A launch
    /// with it waits on the device for copies and kernels still using the
    /// buffer, and the buffer then tracks the launch: the host cannot read,
    /// write or free it until the kernel has finished.
    pub fn device_view_mut(&mut self) -> MappedViewMut<'_, T> {
        MappedViewMut {
            raw: self.device_range(),
            pending: &self.pending,
            _element: PhantomData,
        }
    }

    /// The whole buffer as device memory (through the mapping).
    fn device_range(&self) -> RawView {
        RawView {
            ptr: self.device_ptr,
            len: self.len,
            device: self.device,
        }
    }
}

impl<T: DeviceCopy, M: Mapping> PinnedBuffer<T, M> {
    fn allocate(len: usize) -> Result<Self> {
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
            match driver::host_alloc(bytes, M::MAPPED) {
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
        let mut buffer = PinnedBuffer {
            ptr,
            len,
            device: device.ordinal(),
            device_ptr: 0,
            pending: Mutex::new(Pending::default()),
            _owns: PhantomData,
        };
        if M::MAPPED {
            buffer.device_ptr = if bytes == 0 {
                // Like empty device buffers: an aligned, never dereferenced address.
                std::mem::align_of::<T>() as u64
            } else {
                match driver::host_device_pointer(buffer.ptr.as_ptr().cast()) {
                    (driver::SUCCESS, d) => d,
                    // Dropping `buffer` frees the allocation.
                    (code, _) => {
                        return Err(device.state()?.error("cuMemHostGetDevicePointer", code))
                    }
                }
            };
        }
        Ok(buffer)
    }

    fn allocate_from(data: &[T]) -> Result<Self> {
        let mut buffer = PinnedBuffer::allocate(data.len())?;
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
        lock(&self.pending)
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
    /// Tracks the device accesses to `range` (reads, or writes when `write`)
    /// queued on `stream` so far, by one event: for batches of copies queued
    /// with the `_untracked` forms.
    pub(crate) fn track_queued(
        &self,
        stream: &Stream,
        range: Range<usize>,
        write: bool,
    ) -> Result<()> {
        self.lock().push_after(stream, range, write)
    }
}

fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pending {
    /// Makes `stream` wait for the in-flight device accesses that conflict
    /// with a new one on `range` (writes conflict with reads and writes,
    /// reads with writes).
    fn order_before(&mut self, stream: &Stream, range: &Range<usize>, write: bool) -> Result<()> {
        // Completed accesses need no more tracking.
        self.reads.retain(|(_, e)| !e.is_done().unwrap_or(false));
        self.writes.retain(|(_, e)| !e.is_done().unwrap_or(false));
        let reads = if write { &self.reads[..] } else { &[][..] };
        for (other, event) in reads.iter().chain(&self.writes) {
            if overlaps(other, range) {
                stream.wait_event(event)?;
            }
        }
        Ok(())
    }

    /// Tracks an access to `range` just queued on `stream`, by an event after it.
    fn push_after(&mut self, stream: &Stream, range: Range<usize>, write: bool) -> Result<()> {
        let marker = Event::with_options(EventOptions::new().timing(false))?;
        marker.record_on(stream)?;
        if write {
            self.writes.push((range, marker));
        } else {
            self.reads.push((range, marker));
        }
        Ok(())
    }
}

/// A [`MappedBuffer`] as a kernel input, read in place: from
/// [`PinnedBuffer::device_view`].
pub struct MappedView<'a, T: DeviceCopy> {
    raw: RawView,
    pending: &'a Mutex<Pending>,
    _element: PhantomData<&'a [T]>,
}

/// A [`MappedBuffer`] as a kernel output, written in place: from
/// [`PinnedBuffer::device_view_mut`].
pub struct MappedViewMut<'a, T: DeviceCopy> {
    raw: RawView,
    pending: &'a Mutex<Pending>,
    _element: PhantomData<&'a mut [T]>,
}

impl<T: DeviceCopy> MappedView<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }
}

impl<T: DeviceCopy> MappedViewMut<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }
}

impl<T: DeviceCopy> sealed::Sealed for MappedView<'_, T> {}
impl<T: DeviceCopy> sealed::Sealed for MappedViewMut<'_, T> {}

impl<T: DeviceCopy> DeviceInput<T> for MappedView<'_, T> {
    fn raw_view(&self) -> RawView {
        self.raw
    }

    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).order_before(stream, &(0..self.raw.len), false)
    }

    fn after_device_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).push_after(stream, 0..self.raw.len, false)
    }
}

impl<T: DeviceCopy> DeviceOutput<T> for MappedViewMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.raw
    }

    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).order_before(stream, &(0..self.raw.len), true)
    }

    fn after_device_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).push_after(stream, 0..self.raw.len, true)
    }
}

fn wait_all(events: Vec<(Range<usize>, Event)>) -> Result<()> {
    for (_, event) in events {
        event.synchronize()?;
    }
    Ok(())
}

impl<T: DeviceCopy, M: Mapping> Drop for PinnedBuffer<T, M> {
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

impl<T: DeviceCopy, M: Mapping> std::fmt::Debug for PinnedBuffer<T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if M::MAPPED {
            "MappedBuffer"
        } else {
            "PinnedBuffer"
        };
        write!(f, "{name}<{}>[{}]", std::any::type_name::<T>(), self.len)
    }
}

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
    /// `device` is borrowed device memory that outlives the copy (its drop
    /// waits for queued work), borrowed exclusively when the copy writes it
    /// ([`Direction::ToDevice`]).
    /// Before the host can touch the pinned range again (reads too, when the
    /// copy writes it), the caller tracks the copy with
    /// [`track_queued`](Self::track_queued) on `stream` after it, for a range
    /// covering `*queued`; no host slice of the buffer is alive when the copy
    /// writes it.
    unsafe fn queue_copy(
        &self,
        direction: Direction,
        device: RawView,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        let (host, range) = self.range(at, device.len)?;
        check_device(device.device, stream)?;
        if range.is_empty() {
            return Ok(());
        }
        let writes_host = direction == Direction::FromDevice;
        self.lock().order_before(stream, &range, writes_host)?;
        let bytes = range.len() * size_of::<T>();
        // SAFETY: both ranges are in bounds and stay valid and unused by the
        // host until the copy completes (the caller's contract).
        let (code, call) = unsafe {
            match direction {
                Direction::ToDevice => (
                    driver::memcpy_htod_async(device.ptr, host.cast(), bytes, stream.as_raw()),
                    "cuMemcpyHtoDAsync",
                ),
                Direction::FromDevice => (
                    driver::memcpy_dtoh_async(host.cast(), device.ptr, bytes, stream.as_raw()),
                    "cuMemcpyDtoHAsync",
                ),
            }
        };
        if code != driver::SUCCESS {
            return Err(stream.error(call, code));
        }
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
        // SAFETY: this view is device memory borrowed exclusively for the
        // call; the copy is tracked before this returns.
        unsafe { source.queue_tracked_copy(Direction::ToDevice, device, at, stream) }
    }

    /// [`copy_from_pinned`](Self::copy_from_pinned) without the event after
    /// the copy, for batches of copies tracked together: widens `*queued` to
    /// cover the copy's range.
    ///
    /// # Safety
    /// Before the host can write or free `source`, the caller records the
    /// copy: [`PinnedBuffer::track_queued`] on `stream` with a range covering
    /// `*queued`, after the copy in stream order.
    pub(crate) unsafe fn copy_from_pinned_untracked<M: Mapping>(
        &mut self,
        source: &PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        let device = self.raw();
        // SAFETY: this view is device memory borrowed exclusively for the
        // call; the tracking is the caller's.
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
        // SAFETY: `&mut` excludes host slices of the destination; the copy is
        // tracked before this returns.
        unsafe { destination.queue_tracked_copy(Direction::FromDevice, self.raw(), at, stream) }
    }

    /// [`copy_to_pinned`](Self::copy_to_pinned) without the event after the
    /// copy, for batches of copies tracked together: widens `*queued` to
    /// cover the copy's range.
    ///
    /// # Safety
    /// No host slice of `destination` may be alive, and before the host can
    /// read, write or free it, the caller records the copy:
    /// [`PinnedBuffer::track_queued`] on `stream` with a range covering
    /// `*queued`, after the copy in stream order.
    pub(crate) unsafe fn copy_to_pinned_untracked<M: Mapping>(
        &self,
        destination: &PinnedBuffer<T, M>,
        at: usize,
        stream: &Stream,
        queued: &mut Option<Range<usize>>,
    ) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { destination.queue_copy(Direction::FromDevice, self.raw(), at, stream, queued) }
    }
}

/// Widens `queued` to cover `range` too.
fn widen(queued: &mut Option<Range<usize>>, range: Range<usize>) {
    *queued = Some(match queued.take() {
        Some(q) => q.start.min(range.start)..q.end.max(range.end),
        None => range,
    });
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
