//! Copies between device buffers and ordinary (pageable) host memory, between
//! device buffers, and fills. Every copy is ordered across streams by the
//! buffers' tracking; the `_sync` ones return once the copy has completed on
//! the device.

use super::buffer::{byte_len, DeviceBuffer};
use super::view::{DeviceInput, DeviceView, DeviceViewMut, RawView};
use crate::backend::{driver, DriverError};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::mem::{size_of, MaybeUninit};

/// Checks that a buffer on `buffer_device` can be copied on `stream`, by
/// `operation`.
pub(crate) fn check_device(
    buffer_device: usize,
    stream: &Stream,
    operation: &'static str,
) -> Result<()> {
    stream.device_state(operation)?;
    if buffer_device != stream.device() {
        return Err(Error::DeviceMismatch {
            buffer_device,
            stream_device: stream.device(),
        });
    }
    Ok(())
}

/// Why the `_sync` copies are refused in a capture.
pub(super) const SYNC_IN_CAPTURE: &str = "a `_sync` copy waits for the stream, whose work only runs when the graph is launched, and a graph would read or write the host memory again at every launch; copy before or after the capture (device-to-device copies can be captured)";

/// Why the staged host-to-device copy is refused in a capture.
const STAGED_IN_CAPTURE: &str = "a graph would read the host data again at every launch, after this call has handed it back; copy before the capture, or into a buffer the graph then copies from (device-to-device copies can be captured)";

/// Waits for `stream` after queueing `queued`: the copy is complete when this
/// returns, also when queueing failed after part of the work was queued.
pub(super) fn complete(
    stream: &Stream,
    queued: std::result::Result<(), DriverError>,
) -> Result<()> {
    match queued {
        Ok(()) => stream.synchronize(),
        Err(e) => {
            let _ = stream.synchronize();
            Err(stream.error(e))
        }
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Copies `data` (the same length as the buffer) into the buffer on
    /// `stream`. Blocking: returns once the copy has completed on the device,
    /// so `data` may change at once and work on any stream sees the data.
    pub fn copy_from_host_sync(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        self.view_mut().copy_from_host_sync(data, stream)
    }

    /// Copies `data` (the same length as the buffer) into the buffer, queued
    /// on `stream` after the work that uses the buffer (Numba's
    /// `d_ary.copy_to_device(data, stream=stream)`). `data` may change as
    /// soon as this returns: the copy reads a staging copy of it, released
    /// once the stream has run the copy. Work on other streams that uses the
    /// buffer waits for the copy. Refused in a capture.
    pub fn copy_from_host(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        self.view_mut().copy_from_host(data, stream)
    }

    /// Copies `source` (the same length) into the buffer, queued on `stream`
    /// after the work that writes `source` and the work that uses the buffer.
    /// `source` may be on another device (a peer copy, `cuMemcpyPeerAsync`);
    /// `stream` then belongs to either device, and the ordering across
    /// streams holds across devices too: the stream waits, on the device,
    /// for the source's writer through an event of the other device, and the
    /// call returns at once. Where the hardware has a peer link (NVLink or
    /// PCIe), the copy goes over it directly (the driver's peer access is
    /// enabled for copies on first use); without one, CUDA stages it through
    /// host memory, and the call may wait on the host for the source's writer.
    pub fn copy_from_device(&mut self, source: impl DeviceInput<T>, stream: &Stream) -> Result<()> {
        self.view_mut().copy_from_device(source, stream)
    }

    /// A new buffer on `stream`'s device holding a copy of this one, made on
    /// `stream` (a peer copy when this buffer is on another device): CuPy's
    /// `cp.asarray(a)` under another device. Returns at once; uses of the new
    /// buffer on other streams wait for the copy.
    pub fn clone_on(&self, stream: &Stream) -> Result<DeviceBuffer<T>> {
        // SAFETY: every element is written by the copy below, which the
        // tracking orders before any other use; if the copy fails, the buffer
        // is dropped unread.
        let mut copy = unsafe { DeviceBuffer::uninitialized(self.len(), stream)? };
        copy.copy_from_device(self, stream)?;
        Ok(copy)
    }

    /// Copies the buffer to a new `Vec` after its last writer, on whatever
    /// stream that ran (Numba's `copy_to_host(stream=stream)`). Blocking:
    /// returns once the data has arrived. For copies that return at once, use
    /// [`copy_to_pinned`](Self::copy_to_pinned).
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        self.view().copy_to_host_sync(stream)
    }

    /// Copies the buffer into `out` (the same length) after its last writer.
    /// Blocking: returns once the data has arrived.
    pub fn copy_to_slice_sync(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        self.view().copy_to_slice_sync(out, stream)
    }
}

impl<T: DeviceCopy> DeviceView<'_, T> {
    /// See [`DeviceBuffer::copy_to_host_sync`].
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        let len = self.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        self.copy_raw_to_host(out.as_mut_ptr(), len, stream)?;
        // SAFETY: the copy wrote all `len` elements from device memory holding
        // `T` values (every buffer starts zeroed, filled from the host, or
        // `empty` of a type valid for any bytes) and has completed.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// See [`DeviceBuffer::copy_to_slice_sync`].
    pub fn copy_to_slice_sync(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::LengthMismatch {
                operation: "copy to host",
                destination: out.len(),
                source: self.len(),
            });
        }
        self.copy_raw_to_host(out.as_mut_ptr(), out.len(), stream)
    }

    /// Copies into `dst` (room for `len` elements) and waits for the copy.
    fn copy_raw_to_host(&self, dst: *mut T, len: usize, stream: &Stream) -> Result<()> {
        check_device(self.raw().device, stream, "a copy to the host")?;
        stream.refuse_in_capture("copy_to_host_sync", SYNC_IN_CAPTURE)?;
        if len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        self.track_read(stream)?;
        // SAFETY: `dst` has room for `len` elements and is neither read nor
        // freed before `complete` has waited for the copy; the source is
        // borrowed device memory of `len` elements, kept until the copy ran
        // (its buffer's drop frees in stream order after tracked uses).
        let queued = unsafe {
            driver().copy_to_host_async(
                dst.cast(),
                self.raw().ptr,
                len * size_of::<T>(),
                stream.handle(),
            )
        };
        complete(stream, queued)
    }
}

impl<T: DeviceCopy> DeviceViewMut<'_, T> {
    /// The checks of a copy of `data` from the host into this view, by
    /// `operation` (refused in a capture for `reason`): `false` when there
    /// are no bytes to copy.
    fn host_copy_checked(
        &self,
        data: &[T],
        stream: &Stream,
        operation: &'static str,
        reason: &'static str,
    ) -> Result<bool> {
        if data.len() != self.len() {
            return Err(Error::LengthMismatch {
                operation: "copy to device",
                destination: self.len(),
                source: data.len(),
            });
        }
        check_device(self.raw().device, stream, "a copy to the device")?;
        stream.refuse_in_capture(operation, reason)?;
        Ok(!data.is_empty() && size_of::<T>() != 0)
    }

    /// See [`DeviceBuffer::copy_from_host_sync`].
    pub fn copy_from_host_sync(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        if !self.host_copy_checked(data, stream, "copy_from_host_sync", SYNC_IN_CAPTURE)? {
            return Ok(());
        }
        self.track_write(stream)?;
        // SAFETY: the destination is borrowed device memory of `len` elements;
        // `data` is read before `complete` returns (it waits for the copy).
        let queued = unsafe {
            driver().copy_to_device_async(
                self.raw().ptr,
                data.as_ptr().cast(),
                std::mem::size_of_val(data),
                stream.handle(),
            )
        };
        complete(stream, queued)
    }

    /// See [`DeviceBuffer::copy_from_host`].
    pub fn copy_from_host(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        if !self.host_copy_checked(data, stream, "copy_from_host", STAGED_IN_CAPTURE)? {
            return Ok(());
        }
        // The copy reads a staging copy of `data`, kept until the stream has
        // run the copy: `data` is the caller's again when this returns.
        let bytes = std::mem::size_of_val(data);
        let mut staged: Box<[MaybeUninit<u8>]> = Box::new_uninit_slice(bytes);
        // SAFETY: both ranges are `bytes` long and do not overlap; bytes as
        // `MaybeUninit<u8>` may be anything, padding included.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr().cast::<MaybeUninit<u8>>(),
                staged.as_mut_ptr(),
                bytes,
            )
        };
        self.track_write(stream)?;
        // SAFETY: the destination is borrowed device memory of `len` elements,
        // ordered after its other uses; `staged` holds their bytes and is
        // dropped only by the callback queued after the copy on `stream`
        // (or below, once the stream has finished, if queueing it failed).
        let queued = unsafe {
            driver().copy_to_device_async(
                self.raw().ptr,
                staged.as_ptr().cast(),
                bytes,
                stream.handle(),
            )
        };
        if let Err(e) = queued {
            let _ = stream.synchronize();
            return Err(stream.error(e));
        }
        // The callback holds one handle, this call the other: if queueing
        // the callback fails (its closure dropped), the staging copy stays
        // alive here until the stream has run the copy.
        let staged = std::sync::Arc::new(staged);
        let held = std::sync::Arc::clone(&staged);
        if let Err(e) = stream.add_callback(move || drop(held)) {
            let _ = stream.synchronize();
            drop(staged);
            return Err(e);
        }
        Ok(())
    }

    /// See [`DeviceBuffer::copy_from_device`].
    pub fn copy_from_device(&mut self, source: impl DeviceInput<T>, stream: &Stream) -> Result<()> {
        let src = source.raw_view();
        if src.len != self.len() {
            return Err(Error::LengthMismatch {
                operation: "device-to-device copy",
                destination: self.len(),
                source: src.len,
            });
        }
        let dst = self.raw();
        if dst.device == src.device {
            check_device(dst.device, stream, "a device-to-device copy")?;
        } else if stream.device() != dst.device && stream.device() != src.device {
            return Err(Error::PeerCopyOnOtherDevice {
                source_device: src.device,
                destination_device: dst.device,
                stream_device: stream.device(),
            });
        }
        if self.is_empty() || size_of::<T>() == 0 {
            return Ok(());
        }
        if dst.device != src.device {
            // The other device than the stream's: copies reach it directly
            // where the hardware can, queued without waiting on the host.
            let other = if stream.device() == dst.device {
                src.device
            } else {
                dst.device
            };
            crate::peer::prepare_copy_path(stream.device(), other)?;
        }
        source.before_device_access(stream)?;
        self.track_write(stream)?;
        stream.device_state("a device-to-device copy")?;
        let bytes = self.len() * size_of::<T>();
        // SAFETY: both ranges are device memory of `len` elements (of their
        // devices), borrowed for this call and ordered after their conflicting
        // uses, on any device; buffers free in stream order after their
        // tracked uses (mapped host memory: its own tracking, told below).
        unsafe {
            if dst.device == src.device {
                driver().copy_device_async(dst.ptr, src.ptr, bytes, stream.handle())
            } else {
                driver().copy_peer_async(
                    dst.ptr,
                    dst.device,
                    src.ptr,
                    src.device,
                    bytes,
                    stream.handle(),
                )
            }
        }
        .map_err(|e| stream.error(e))?;
        match source.after_access_hook() {
            Some(hook) => hook.after_access(stream),
            None => Ok(()),
        }
    }

    /// Sets every element to `value`, queued on `stream`: one element is
    /// copied from the host (as bytes, padding included, never read as
    /// values), then doubled by device-to-device copies.
    pub fn fill(&mut self, value: T, stream: &Stream) -> Result<()> {
        check_device(self.raw().device, stream, "fill")?;
        stream.refuse_in_capture(
            "fill",
            "fill copies its value from host memory, which a graph would read again at every launch; fill with a kernel in the capture (`gpu_kernels::fill`), or before it",
        )?;
        let len = self.len();
        if len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let bytes = byte_len::<T>(len)?;
        let element = size_of::<T>();
        self.track_write(stream)?;
        let dst = self.raw();
        // SAFETY: `value` lives until this returns, and a pageable source is
        // read before the copy call returns; the destination is this view's
        // memory, borrowed mutably.
        unsafe {
            driver().copy_to_device_async(
                dst.ptr,
                (&value as *const T).cast(),
                element,
                stream.handle(),
            )
        }
        .map_err(|e| stream.error(e))?;
        let mut filled = element;
        while filled < bytes {
            let chunk = filled.min(bytes - filled);
            // SAFETY: both ranges lie in this view's memory and do not overlap
            // (`[0, chunk)` and `[filled, filled + chunk)`, `chunk <= filled`).
            unsafe {
                driver().copy_device_async(dst.ptr + filled as u64, dst.ptr, chunk, stream.handle())
            }
            .map_err(|e| stream.error(e))?;
            filled += chunk;
        }
        Ok(())
    }

    /// Queues a write of this view's memory on `stream` by `queue`, after
    /// checking the device and ordering it after conflicting uses.
    pub(crate) fn queue_write(
        &mut self,
        stream: &Stream,
        queue: impl FnOnce(RawView) -> std::result::Result<(), DriverError>,
    ) -> Result<()> {
        check_device(self.raw().device, stream, "a copy to the device")?;
        if self.is_empty() || size_of::<T>() == 0 {
            return Ok(());
        }
        self.track_write(stream)?;
        queue(self.raw()).map_err(|e| stream.error(e))
    }
}
