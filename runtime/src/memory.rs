//! Device memory: owned buffers, borrowed views, and the traits by which
//! kernel launchers accept them.

use crate::device::{self, Device};
use crate::driver::{self, CUdeviceptr};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;

/// An array in device memory, like Numba's device arrays and CuPy's `ndarray`.
///
/// Buffers start zeroed or filled from host data. Dropping one frees it with
/// `cuMemFree`, which waits for the device (as `cudaFree` does), so no kernel
/// still using it can see the memory reused.
pub struct DeviceBuffer<T: DeviceCopy> {
    ptr: CUdeviceptr,
    len: usize,
    device: usize,
    _element: PhantomData<T>,
}

// SAFETY: the buffer owns device memory, reachable from the host only through
// `&self`/`&mut self` methods that go through the driver.
unsafe impl<T: DeviceCopy + Send> Send for DeviceBuffer<T> {}
// SAFETY: `&DeviceBuffer` only reads device memory, through the driver.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceBuffer<T> {}

fn byte_len<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or(Error::OutOfMemory {
        requested: usize::MAX,
        free: 0,
        total: 0,
    })
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` elements on `device` without initialising them.
    fn alloc(len: usize, device: Device) -> Result<Self> {
        device.state()?;
        let bytes = byte_len::<T>(len)?;
        if bytes == 0 {
            return Ok(DeviceBuffer {
                ptr: 0,
                len,
                device: device.ordinal(),
                _element: PhantomData,
            });
        }
        match driver::mem_alloc(bytes) {
            (driver::SUCCESS, ptr) => Ok(DeviceBuffer {
                ptr,
                len,
                device: device.ordinal(),
                _element: PhantomData,
            }),
            (driver::ERROR_OUT_OF_MEMORY, _) => {
                let (free, total) = driver::mem_info().unwrap_or((0, 0));
                Err(Error::OutOfMemory {
                    requested: bytes,
                    free,
                    total,
                })
            }
            (code, _) => Err(device.state()?.error("cuMemAlloc", code)),
        }
    }

    /// A zeroed buffer of `len` elements on the current device (Numba's
    /// `cuda.device_array`, which leaves memory uninitialised; here it is
    /// zeroed, so no host read can see stale bytes). Returns once the memory is
    /// zeroed, so it can be used on any stream.
    pub fn device_array(len: usize) -> Result<Self> {
        Device::current()?;
        let stream = Stream::null();
        let buffer = DeviceBuffer::zeroed_on(len, &stream)?;
        stream.synchronize()?;
        Ok(buffer)
    }

    /// Copies `data` into a new buffer on the current stream (CuPy's
    /// `cp.asarray(data)`). Synchronous with respect to the host: returns once
    /// `data` has been read, so it may be dropped or changed at once. For
    /// copies that return at once, use a [`PinnedBuffer`](crate::PinnedBuffer).
    pub fn from_host_sync(data: &[T]) -> Result<Self> {
        DeviceBuffer::to_device_sync(data, &crate::current_stream()?)
    }

    /// Copies the buffer to a new `Vec` on the current stream (CuPy's
    /// `cp.asnumpy(buffer)`). Synchronous: waits for the work queued on the
    /// stream so far, then for the copy.
    pub fn to_host_sync(&self) -> Result<Vec<T>> {
        self.copy_to_host_sync(&crate::current_stream()?)
    }

    /// A buffer of `len` elements zeroed on `stream`: work queued on `stream`
    /// afterwards sees zeros; other streams must wait for `stream` first.
    pub fn zeroed_on(len: usize, stream: &Stream) -> Result<Self> {
        let buffer = DeviceBuffer::alloc(len, Device::get(stream.device())?)?;
        if buffer.len > 0 {
            // SAFETY: the allocation is `len * size_of::<T>()` bytes and is
            // owned by `buffer`, whose drop waits for queued work.
            let code = unsafe {
                driver::memset_async(buffer.ptr, 0, buffer.len * size_of::<T>(), stream.as_raw())
            };
            if code != driver::SUCCESS {
                return Err(stream.error("cuMemsetD8Async", code));
            }
        }
        Ok(buffer)
    }

    /// A buffer of `len` elements on `stream`'s device whose contents are left
    /// as the allocator found them, for outputs a kernel overwrites entirely
    /// (zeroing would cost a full extra pass over memory).
    ///
    /// # Safety
    /// Every element must be written (by a kernel or a copy ordered before any
    /// read) before it is read, on the device or by copying to the host.
    pub unsafe fn uninitialized(len: usize, stream: &Stream) -> Result<Self> {
        DeviceBuffer::alloc(len, Device::get(stream.device())?)
    }

    /// Copies `data` into a new buffer on `stream`'s device (Numba's
    /// `cuda.to_device(data, stream=stream)`). Synchronous with respect to the
    /// host, as Numba's is for ordinary memory: returns once `data` has been
    /// read, so it may be dropped or changed at once.
    pub fn to_device_sync(data: &[T], stream: &Stream) -> Result<Self> {
        let mut buffer = DeviceBuffer::alloc(data.len(), Device::get(stream.device())?)?;
        buffer.copy_from_host_sync(data, stream)?;
        Ok(buffer)
    }

    /// Copies `data` (the same length as the buffer) into the buffer on
    /// `stream`. Synchronous with respect to the host: returns once `data` has
    /// been read, so it may be dropped or changed at once.
    pub fn copy_from_host_sync(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        self.view_mut().copy_from_host_sync(data, stream)
    }

    /// Copies `source` (the same length, on the same device) into the buffer,
    /// queued on `stream`.
    pub fn copy_from_device(&mut self, source: impl DeviceInput<T>, stream: &Stream) -> Result<()> {
        let src = source.raw_view();
        if src.len != self.len {
            return Err(Error::LengthMismatch {
                operation: "device-to-device copy",
                destination: self.len,
                source: src.len,
            });
        }
        check_device(self.device, stream)?;
        check_device(src.device, stream)?;
        if self.len == 0 {
            return Ok(());
        }
        source.before_device_access(stream)?;
        // SAFETY: both ranges are device memory of `len` elements, borrowed for
        // this call; the buffers' drops wait for queued work before freeing
        // (mapped host memory: its tracking, told below).
        let code = unsafe {
            driver::memcpy_dtod_async(
                self.ptr,
                src.ptr,
                self.len * size_of::<T>(),
                stream.as_raw(),
            )
        };
        if code != driver::SUCCESS {
            return Err(stream.error("cuMemcpyDtoDAsync", code));
        }
        source.after_device_access(stream)
    }

    /// Copies the buffer to a new `Vec` after the work queued on `stream` so
    /// far (Numba's `copy_to_host(stream=stream)`). Synchronous: returns once
    /// the data has arrived. For copies that return at once, use
    /// [`copy_to_pinned`](Self::copy_to_pinned).
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        self.view().copy_to_host_sync(stream)
    }

    /// Copies the buffer into `out` (the same length) after the work queued on
    /// `stream` so far. Synchronous: returns once the data has arrived.
    pub fn copy_to_slice_sync(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        self.view().copy_to_slice_sync(out, stream)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ordinal of the device holding the buffer.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The device address of the first element (0 for an empty buffer).
    pub fn as_raw(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The whole buffer as a read-only view.
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView {
            raw: self.raw(),
            _borrow: PhantomData,
        }
    }

    /// The whole buffer as a writable view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut {
            raw: self.raw(),
            _borrow: PhantomData,
        }
    }

    /// Elements `range` as a read-only view, or `None` if the range is out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<DeviceView<'_, T>> {
        self.view().slice(range)
    }

    /// Elements `range` as a writable view, or `None` if the range is out of bounds.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Option<DeviceViewMut<'_, T>> {
        self.view_mut().into_slice(range)
    }

    fn raw(&self) -> RawView {
        RawView {
            ptr: self.ptr,
            len: self.len,
            device: self.device,
        }
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 && device::state(self.device).is_ok() {
            // cuMemFree waits for work using the memory. A failure means the
            // context is already lost, and with it the memory.
            let _ = driver::mem_free(self.ptr);
        }
    }
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>[{}] on device {}",
            std::any::type_name::<T>(),
            self.len,
            self.device
        )
    }
}

/// A device range: address, element count, device.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct RawView {
    pub ptr: CUdeviceptr,
    pub len: usize,
    pub device: usize,
}

impl RawView {
    fn slice<T>(self, range: Range<usize>) -> Option<RawView> {
        (range.start <= range.end && range.end <= self.len).then(|| RawView {
            ptr: self.ptr + (range.start * size_of::<T>()) as CUdeviceptr,
            len: range.end - range.start,
            device: self.device,
        })
    }
}

/// A borrowed, read-only range of a [`DeviceBuffer`].
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T: DeviceCopy> {
    raw: RawView,
    _borrow: PhantomData<&'a DeviceBuffer<T>>,
}

/// A borrowed, writable range of a [`DeviceBuffer`].
pub struct DeviceViewMut<'a, T: DeviceCopy> {
    raw: RawView,
    _borrow: PhantomData<&'a mut DeviceBuffer<T>>,
}

impl<'a, T: DeviceCopy> DeviceView<'a, T> {
    /// Address, length and device, for the copies of other modules.
    pub(crate) fn raw(&self) -> RawView {
        self.raw
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    /// A sub-range, or `None` if it is out of bounds.
    pub fn slice(self, range: Range<usize>) -> Option<DeviceView<'a, T>> {
        Some(DeviceView {
            raw: self.raw.slice::<T>(range)?,
            _borrow: PhantomData,
        })
    }

    /// See [`DeviceBuffer::copy_to_host_sync`].
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        let mut out: Vec<T> = Vec::with_capacity(self.raw.len);
        self.copy_raw_to_host(out.as_mut_ptr(), self.raw.len, stream)?;
        // SAFETY: the copy wrote all `len` elements as `T` values that a kernel
        // or host copy stored (`DeviceCopy`), and has completed.
        unsafe { out.set_len(self.raw.len) };
        Ok(out)
    }

    /// See [`DeviceBuffer::copy_to_slice_sync`].
    pub fn copy_to_slice_sync(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        if out.len() != self.raw.len {
            return Err(Error::LengthMismatch {
                operation: "copy to host",
                destination: out.len(),
                source: self.raw.len,
            });
        }
        self.copy_raw_to_host(out.as_mut_ptr(), out.len(), stream)
    }

    /// Copies into `dst` (room for `len` elements) and waits for the copy.
    fn copy_raw_to_host(&self, dst: *mut T, len: usize, stream: &Stream) -> Result<()> {
        check_device(self.raw.device, stream)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: `dst` has room for `len` elements and is neither read nor
        // freed before the stream synchronisation below returns; the source
        // is borrowed device memory of `len` elements.
        let code = unsafe {
            driver::memcpy_dtoh_async(
                dst.cast(),
                self.raw.ptr,
                len * size_of::<T>(),
                stream.as_raw(),
            )
        };
        if code != driver::SUCCESS {
            // Wait anyway: the copy may have been queued before the error.
            let _ = stream.synchronize();
            return Err(stream.error("cuMemcpyDtoHAsync", code));
        }
        stream.synchronize()
    }
}

impl<'a, T: DeviceCopy> DeviceViewMut<'a, T> {
    /// Address, length and device, for the copies of other modules.
    pub(crate) fn raw(&self) -> RawView {
        self.raw
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    /// A read-only view of the same range.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView {
            raw: self.raw,
            _borrow: PhantomData,
        }
    }

    /// A shorter-lived writable view of the same range.
    pub fn reborrow(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut {
            raw: self.raw,
            _borrow: PhantomData,
        }
    }

    /// A sub-range, or `None` if it is out of bounds.
    pub fn into_slice(self, range: Range<usize>) -> Option<DeviceViewMut<'a, T>> {
        Some(DeviceViewMut {
            raw: self.raw.slice::<T>(range)?,
            _borrow: PhantomData,
        })
    }

    /// Splits into `[0, mid)` and `[mid, len)`, or `None` if `mid > len`.
    pub fn split_at(self, mid: usize) -> Option<(DeviceViewMut<'a, T>, DeviceViewMut<'a, T>)> {
        let left = self.raw.slice::<T>(0..mid)?;
        let right = self.raw.slice::<T>(mid..self.raw.len)?;
        Some((
            DeviceViewMut {
                raw: left,
                _borrow: PhantomData,
            },
            DeviceViewMut {
                raw: right,
                _borrow: PhantomData,
            },
        ))
    }

    /// See [`DeviceBuffer::copy_from_host_sync`].
    pub fn copy_from_host_sync(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        if data.len() != self.raw.len {
            return Err(Error::LengthMismatch {
                operation: "copy to device",
                destination: self.raw.len,
                source: data.len(),
            });
        }
        check_device(self.raw.device, stream)?;
        if data.is_empty() {
            return Ok(());
        }
        let src = data.as_ptr().cast();
        // SAFETY: the destination is borrowed device memory of `len` elements.
        // The source is read before this returns: from pageable memory the
        // driver copies into a staging buffer before returning, and for
        // page-locked memory (which the driver reads later) we wait below.
        let code = unsafe {
            driver::memcpy_htod_async(
                self.raw.ptr,
                src,
                std::mem::size_of_val(data),
                stream.as_raw(),
            )
        };
        if code != driver::SUCCESS {
            let _ = stream.synchronize();
            return Err(stream.error("cuMemcpyHtoDAsync", code));
        }
        if driver::is_page_locked(src) {
            stream.synchronize()?;
        }
        Ok(())
    }
}

/// Checks that a buffer on `buffer_device` can be copied on `stream`.
pub(crate) fn check_device(buffer_device: usize, stream: &Stream) -> Result<()> {
    stream.device_state()?;
    if buffer_device != stream.device() {
        return Err(Error::DeviceMismatch {
            buffer_device,
            stream_device: stream.device(),
        });
    }
    Ok(())
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// What a launcher accepts where the kernel reads `&[T]`: a `&DeviceBuffer<T>`,
/// a `&mut DeviceBuffer<T>` or a view.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed where the kernel reads `&[{T}]`",
    label = "expected a device buffer of `{T}`",
    note = "pass `&buffer` for a `DeviceBuffer<{T}>`, or a `DeviceView<{T}>`"
)]
pub trait DeviceInput<T: DeviceCopy>: sealed::Sealed {
    #[doc(hidden)]
    fn raw_view(&self) -> RawView;

    /// Orders `stream` after device work the access must not overlap (for
    /// memory the host tracks: mapped pinned memory).
    #[doc(hidden)]
    fn before_device_access(&self, _stream: &Stream) -> Result<()> {
        Ok(())
    }

    /// Tracks the access just queued on `stream`.
    #[doc(hidden)]
    fn after_device_access(&self, _stream: &Stream) -> Result<()> {
        Ok(())
    }
}

/// What a launcher accepts where the kernel writes (`DisjointSlice<T>`,
/// `&[DeviceAtomic<T>]`): a `&mut DeviceBuffer<T>` or a writable view. The
/// exclusive borrow keeps the same buffer out of every other argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed where the kernel writes `{T}` elements",
    label = "expected `&mut DeviceBuffer<{T}>`",
    note = "outputs are borrowed mutably: pass `&mut buffer` for a `DeviceBuffer<{T}>`, or a `DeviceViewMut<{T}>`"
)]
pub trait DeviceOutput<T: DeviceCopy>: sealed::Sealed {
    #[doc(hidden)]
    fn raw_view(&mut self) -> RawView;

    /// As [`DeviceInput::before_device_access`], for a write.
    #[doc(hidden)]
    fn before_device_access(&self, _stream: &Stream) -> Result<()> {
        Ok(())
    }

    /// As [`DeviceInput::after_device_access`], for a write.
    #[doc(hidden)]
    fn after_device_access(&self, _stream: &Stream) -> Result<()> {
        Ok(())
    }
}

impl<T: DeviceCopy> sealed::Sealed for &DeviceBuffer<T> {}
impl<T: DeviceCopy> sealed::Sealed for &mut DeviceBuffer<T> {}
impl<T: DeviceCopy> sealed::Sealed for DeviceView<'_, T> {}
impl<T: DeviceCopy> sealed::Sealed for DeviceViewMut<'_, T> {}

impl<T: DeviceCopy> DeviceInput<T> for &DeviceBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
}
impl<T: DeviceCopy> DeviceInput<T> for &mut DeviceBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceView<'_, T> {
    fn raw_view(&self) -> RawView {
        self.raw
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceViewMut<'_, T> {
    fn raw_view(&self) -> RawView {
        self.raw
    }
}
impl<T: DeviceCopy> DeviceOutput<T> for &mut DeviceBuffer<T> {
    fn raw_view(&mut self) -> RawView {
        self.raw()
    }
}
impl<T: DeviceCopy> DeviceOutput<T> for DeviceViewMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.raw
    }
}
