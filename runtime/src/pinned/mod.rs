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
//! this sound when a value is leaked with `mem::forget`. Many copies queued
//! together can share their events: [`PinnedBuffer::copies_to_device`] and
//! [`PinnedBuffer::copies_from_device`] track a batch by one event per stream
//! when it ends.
//!
//! A buffer made with [`PinnedBuffer::new_mapped`] (a [`MappedBuffer`]) is
//! also mapped into the device's address space: kernels read and write it in
//! place through [`PinnedBuffer::device_view`] and
//! [`PinnedBuffer::device_view_mut`], over the bus, without copies (Numba's
//! `mapped_array`). Kernel launches on such a view are tracked like copies.

mod batch;
mod copy;
mod mapped;
mod tracking;

pub use batch::{CopiesFromDevice, CopiesToDevice};
pub use mapped::{MappedView, MappedViewMut};

use crate::backend::driver;
use crate::callback::in_callback;
use crate::deferred::defer;
use crate::device::{self, Device};
use crate::error::{Error, Result};
use crate::memory::{byte_len, sealed};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Mutex;
use std::sync::MutexGuard;
use tracking::{lock, Pending};

/// Why pinned memory stays out of graph captures.
const NOT_IN_GRAPHS: &str = "pinned memory is tracked by events the host waits for, which a graph cannot record at each launch; copy to and from pinned memory outside the capture, and use device buffers in it";

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

impl<T: DeviceCopy, M: Mapping> PinnedBuffer<T, M> {
    fn allocate(len: usize) -> Result<Self> {
        let device = Device::current()?;
        device.state()?;
        let bytes = byte_len::<T>(len)?;
        let ptr = if bytes == 0 {
            NonNull::dangling()
        } else {
            match driver().host_alloc(device.ordinal(), bytes, M::MAPPED) {
                Ok(p) => {
                    // SAFETY: the allocation holds `bytes` bytes; zero is a valid `T` (`DeviceCopy`).
                    unsafe { std::ptr::write_bytes(p, 0, bytes) };
                    NonNull::new(p.cast::<T>())
                        .expect("the driver returns non-null memory on success")
                }
                Err(e) if e.is_out_of_memory() => {
                    return Err(Error::OutOfMemory {
                        requested: bytes,
                        free: 0,
                        total: 0,
                    })
                }
                Err(e) => return Err(device.state()?.error(e)),
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
                match driver().host_device_pointer(device.ordinal(), buffer.ptr.as_ptr().cast()) {
                    Ok(d) => d,
                    // Dropping `buffer` frees the allocation.
                    Err(e) => return Err(device.state()?.error(e)),
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

    /// The contents, once every copy into the buffer has completed.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.lock().wait_for_writes()?;
        // SAFETY: `len` initialised elements; no device write is pending, and
        // new ones need `&mut self`, which this borrow excludes.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) })
    }

    /// The contents, writable, once every copy from or into the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.lock().wait_for_all()?;
        // SAFETY: `len` initialised elements, exclusively borrowed; no device
        // access is pending, and new ones need `&self` or `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }

    /// Whether no copy touching the buffer is still in flight.
    pub fn is_idle(&self) -> Result<bool> {
        self.lock().is_idle()
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
}

impl<T: DeviceCopy, M: Mapping> Drop for PinnedBuffer<T, M> {
    fn drop(&mut self) {
        let pending = std::mem::take(&mut *self.lock());
        let allocated = self.len > 0 && size_of::<T>() > 0;
        let (address, device) = (self.ptr.as_ptr() as usize, self.device);
        let release = move || {
            let mut pending = pending;
            // If waiting fails (a lost context), the driver no longer runs copies.
            let _ = pending.wait_for_all();
            if allocated && device::state(device).is_ok() {
                // SAFETY: allocated by `host_alloc`; no copy uses it any more.
                let _ = unsafe { driver().host_free(device, address as *mut u8) };
            }
        };
        if in_callback() {
            // CUDA calls are forbidden here: the release thread waits and frees.
            defer(Box::new(release));
        } else {
            release();
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

impl<T: DeviceCopy, M: Mapping> PinnedBuffer<T, M> {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    /// Tracks the device accesses to `range` (reads, or writes when `write`)
    /// queued on `stream` so far, by one event: for copies queued with the
    /// `_untracked` forms (one copy, or a batch).
    fn track_queued(&self, stream: &Stream, range: Range<usize>, write: bool) -> Result<()> {
        self.lock().push_after(stream, range, write)
    }
}
