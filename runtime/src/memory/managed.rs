//! [`ManagedBuffer`]: managed (unified) memory, which kernels and the host
//! both reach in place, with the host's accesses ordered by the tracking.

use super::buffer::byte_len;
use super::direct::DirectAllocation;
use super::tracking::Access;
use super::view::{sealed, DeviceInput, DeviceOutput, RawView};
use crate::backend::{driver, Advice, DevicePtr, Location};
use crate::device::{self, Device};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

/// Why managed memory stays out of graph captures.
const NOT_IN_GRAPHS: &str = "managed memory is read and written by the host between launches, which a graph launched later would race with; use device buffers in the capture";

/// An array in managed (unified) memory (Numba's `cuda.managed_array`,
/// CuPy's `malloc_managed`): one address that kernels and the host both use
/// in place, the driver migrating pages on demand.
///
/// Pass `&buffer` where a kernel reads `&[T]` and `&mut buffer` where it
/// writes, as with a [`DeviceBuffer`](crate::DeviceBuffer). The host reads
/// through [`as_slice`](Self::as_slice) and writes through
/// [`as_mut_slice`](Self::as_mut_slice), which first wait for the device
/// work they would race with (the tracking of every buffer: a read waits
/// for the last kernel writing it, on whatever stream; a write also for
/// those reading it), with no synchronise written by hand. The borrows
/// keep the rest out: no kernel can be queued that writes the buffer while
/// a host slice of it lives, and none that reads it while a writable one
/// does.
///
/// Allocation asks no more than the device has free (`cuMemGetInfo`):
/// unlike CUDA, which lets managed memory oversubscribe the device on
/// Linux, a request past the free memory is [`Error::OutOfMemory`], naming
/// both. The device must support concurrent managed access (every Linux
/// GPU since Pascal does), which makes host access while kernels run on the
/// device sound; otherwise [`Error::ManagedMemoryUnsupported`]. Managed
/// memory is not allowed in graph captures (see [`Error::InCapture`]).
/// Dropping the buffer waits for the device work using it, then frees it
/// (`cuMemFree`); inside a stream callback a release thread does.
///
/// ```no_run
/// use gpu_runtime::{Location, ManagedBuffer, Stream};
/// let stream = Stream::new()?;
/// let mut data = ManagedBuffer::<f32>::from_slice(&[1.0, 2.0, 3.0])?;
/// data.prefetch_to(Location::Device(0), &stream)?;
/// // ... launch kernels with `&mut data` on `stream` ...
/// data.as_mut_slice()?[0] = 10.0; // waits for them first
/// assert_eq!(data.as_slice()?[0], 10.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct ManagedBuffer<T: DeviceCopy> {
    memory: Arc<DirectAllocation>,
    len: usize,
    _element: PhantomData<T>,
}

// SAFETY: the buffer owns its memory; the host reaches it only through
// `&self`/`&mut self` methods that wait for the device's conflicting
// accesses first; the tracker is behind a mutex.
unsafe impl<T: DeviceCopy + Send> Send for ManagedBuffer<T> {}
// SAFETY: `&ManagedBuffer` only reads the memory (host slices after the
// writers finished, kernels that read it).
unsafe impl<T: DeviceCopy + Sync> Sync for ManagedBuffer<T> {}

/// Checks that `ordinal` can hold managed memory as `ManagedBuffer` needs.
fn check_support(ordinal: usize) -> Result<()> {
    let state = device::state(ordinal)?;
    let support = driver()
        .managed_support(ordinal)
        .map_err(|e| state.error(e))?;
    if !support.managed {
        return Err(Error::ManagedMemoryUnsupported {
            device: ordinal,
            reason: "it does not support managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY is 0)",
        });
    }
    if !support.concurrent {
        return Err(Error::ManagedMemoryUnsupported {
            device: ordinal,
            reason: "it does not support concurrent managed access (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0: Windows, or a GPU older than Pascal), so the host could not touch the memory while any kernel runs; use a DeviceBuffer with copies, or a MappedBuffer",
        });
    }
    Ok(())
}

impl<T: DeviceCopy> ManagedBuffer<T> {
    /// `len` zeroed elements of managed memory, for the current device
    /// (Numba's `cuda.managed_array`, attached globally: any stream may use it).
    pub fn new(len: usize) -> Result<Self> {
        ManagedBuffer::zeroed_on(len, Device::current()?)
    }

    /// `len` zeroed elements of managed memory, for `device`.
    pub fn zeroed_on(len: usize, device: Device) -> Result<Self> {
        gpu_device::__private::require_device_align::<T>();
        let ordinal = device.ordinal();
        let state = device::state(ordinal)?;
        check_support(ordinal)?;
        let bytes = byte_len::<T>(len)?;
        let ptr = if bytes == 0 {
            0
        } else {
            let free_memory = || driver().memory_info(ordinal).map_err(|e| state.error(e));
            let (mut free, total) = free_memory()?;
            if bytes > free {
                // Memory the pool keeps cached is free for this: give back
                // what is not in use, then ask again.
                driver()
                    .trim_memory_pool(ordinal, 0)
                    .map_err(|e| state.error(e))?;
                free = free_memory()?.0;
            }
            let refused = |free| Error::OutOfMemory {
                requested: bytes,
                free,
                total,
            };
            if bytes > free {
                // Never oversubscribed: refused before asking the driver.
                return Err(refused(free));
            }
            let ptr = driver().alloc_managed(ordinal, bytes).map_err(|e| {
                if e.is_out_of_memory() {
                    refused(free)
                } else {
                    state.error(e)
                }
            })?;
            // SAFETY: `bytes` bytes of managed memory, just allocated, that no
            // device work touches yet; zero bytes are a valid `T` (`DeviceCopy`).
            unsafe { std::ptr::write_bytes(ptr as usize as *mut u8, 0, bytes) };
            ptr
        };
        Ok(ManagedBuffer {
            memory: DirectAllocation::new(ptr, bytes, ordinal),
            len,
            _element: PhantomData,
        })
    }

    /// Managed memory holding a copy of `data`, for the current device.
    pub fn from_slice(data: &[T]) -> Result<Self> {
        let mut buffer = ManagedBuffer::new(data.len())?;
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

    /// The ordinal of the device the memory was allocated for.
    pub fn device(&self) -> usize {
        self.memory.device
    }

    /// The address of the first element, the same on the host and the
    /// devices (0 for an empty buffer). Work through it is outside the
    /// tracking.
    pub fn as_raw(&self) -> DevicePtr {
        self.memory.ptr
    }

    /// The contents, once the kernels writing the buffer have finished.
    pub fn as_slice(&self) -> Result<&[T]> {
        if self.memory.bytes == 0 {
            // SAFETY: no bytes: `len` zero-sized values, or none.
            return Ok(unsafe {
                std::slice::from_raw_parts(NonNull::dangling().as_ptr(), self.len)
            });
        }
        self.memory.tracker.wait_on_host(Access::Read)?;
        // SAFETY: `len` initialised elements (zeroed or written since);
        // no device write is pending, and new ones need `&mut self`, which
        // this borrow excludes; kernels reading meanwhile are fine, the
        // device allowing concurrent managed access (checked at allocation).
        Ok(unsafe { std::slice::from_raw_parts(self.memory.ptr as usize as *const T, self.len) })
    }

    /// The contents, writable, once the device work using the buffer has
    /// finished.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        if self.memory.bytes == 0 {
            // SAFETY: no bytes: `len` zero-sized values, or none.
            return Ok(unsafe {
                std::slice::from_raw_parts_mut(NonNull::dangling().as_ptr(), self.len)
            });
        }
        self.memory.tracker.wait_on_host(Access::Write)?;
        // SAFETY: `len` initialised elements, exclusively borrowed; no device
        // access is pending, and new ones need `&self` or `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.memory.ptr as usize as *mut T, self.len) })
    }

    /// Migrates the memory to `to` (a device's memory, or the host's), queued
    /// on `stream` after the kernels writing it (CuPy's
    /// `ManagedMemory.prefetch`, CUDA's `cuMemPrefetchAsync`). Contents do
    /// not change; later accesses there do not fault.
    pub fn prefetch_to(&self, to: Location, stream: &Stream) -> Result<()> {
        stream.device_state("a managed memory prefetch")?;
        stream.refuse_in_capture("prefetch_to", NOT_IN_GRAPHS)?;
        if let Location::Device(ordinal) = to {
            check_support(ordinal)?;
        }
        if self.memory.bytes == 0 {
            return Ok(());
        }
        self.memory.tracker.access(stream, Access::Read)?;
        // SAFETY: the whole allocation, kept until the stream reaches the
        // prefetch (the drop waits for tracked uses, this one among them).
        unsafe { driver().prefetch_async(self.memory.ptr, self.memory.bytes, to, stream.handle()) }
            .map_err(|e| stream.error(e))
    }

    /// Gives the driver `advice` about the whole buffer (CuPy's
    /// `ManagedMemory.advise`, CUDA's `cuMemAdvise`): where its pages
    /// should live and who maps them. Contents do not change.
    pub fn advise(&self, advice: Advice) -> Result<()> {
        self.set_advice(advice, true)
    }

    /// Withdraws `advice` given by [`advise`](Self::advise).
    pub fn clear_advice(&self, advice: Advice) -> Result<()> {
        self.set_advice(advice, false)
    }

    fn set_advice(&self, advice: Advice, set: bool) -> Result<()> {
        let state = device::state(self.memory.device)?;
        if let Advice::PreferredLocation(Location::Device(d))
        | Advice::AccessedBy(Location::Device(d)) = advice
        {
            check_support(d)?;
        }
        if self.memory.bytes == 0 {
            return Ok(());
        }
        // SAFETY: the whole allocation, alive while `self` is.
        unsafe {
            driver().advise(
                self.memory.device,
                self.memory.ptr,
                self.memory.bytes,
                advice,
                set,
            )
        }
        .map_err(|e| state.error(e))
    }

    fn raw(&self) -> RawView {
        RawView {
            ptr: self.memory.ptr,
            len: self.len,
            device: self.memory.device,
        }
    }

    fn track(&self, stream: &Stream, access: Access) -> Result<()> {
        stream.refuse_in_capture(
            match access {
                Access::Read => "a kernel or copy reading managed memory",
                Access::Write => "a kernel writing managed memory",
            },
            NOT_IN_GRAPHS,
        )?;
        self.memory.tracker.access(stream, access)
    }
}

impl<T: DeviceCopy> std::fmt::Debug for ManagedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ManagedBuffer<{}>[{}] for device {}",
            std::any::type_name::<T>(),
            self.len,
            self.memory.device
        )
    }
}

impl<T: DeviceCopy> sealed::Sealed for &ManagedBuffer<T> {}
impl<T: DeviceCopy> sealed::Sealed for &mut ManagedBuffer<T> {}

impl<T: DeviceCopy> DeviceInput<T> for &ManagedBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Read)
    }
}
impl<T: DeviceCopy> DeviceInput<T> for &mut ManagedBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Read)
    }
}
impl<T: DeviceCopy> DeviceOutput<T> for &mut ManagedBuffer<T> {
    fn raw_view(&mut self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Write)
    }
}
