//! Device memory shared with other libraries (cudarc, PyTorch through
//! DLPack, raw driver calls): memory another owner lends to a
//! [`DeviceBuffer`], and a buffer's address handed to another library
//! together with the stream its work must be queued on.
//!
//! Lent memory joins the tracking as any buffer's: its uses on different
//! streams are ordered, and when the buffer is dropped the [`Lender`] is
//! called on the runtime's release thread once the work queued on the
//! buffer so far has finished, never before. An address handed out is
//! ordered on the stream it is handed out for: that stream first waits for
//! the buffer's conflicting work, and the buffer's later uses wait for the
//! work queued on that stream up to then.

use super::buffer::byte_len;
use super::lender::Lender;
use super::tracking::Access;
use super::DeviceBuffer;
use crate::backend::{driver, DevicePtr};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::mem::{align_of, size_of};

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// A buffer over `len` elements of device memory at `ptr`, which another
    /// owner lends: `lender` is called when the buffer is released and its
    /// work has finished. `stream` is where the memory was last written (or
    /// any stream of its device, if that work has finished): the buffer's
    /// uses on other streams wait for it.
    ///
    /// Checked, with an error naming what was wrong (the lender is then
    /// dropped, which gives the memory back): `stream`'s device is usable and
    /// not capturing; `ptr` is not null and is aligned for `T`; the driver
    /// knows `ptr` as device memory (not host memory) of `stream`'s device;
    /// the `len` elements end inside the allocation holding `ptr`, where the
    /// driver tells its extent.
    ///
    /// # Safety
    /// - The memory holds `len` valid values of `T` (for types not valid for
    ///   every bit pattern), initialised by work that has finished or was
    ///   queued on `stream`.
    /// - It stays allocated until `lender` is called (with
    ///   [`Lender::none`], for as long as the buffer and the work it queued).
    /// - Nothing but this buffer uses it until then, except work ordered
    ///   with the buffer's uses by events, or through
    ///   [`as_raw_on`](Self::as_raw_on) and [`as_raw_mut_on`](Self::as_raw_mut_on):
    ///   the tracking orders only the uses it sees.
    pub unsafe fn from_raw_parts(
        ptr: DevicePtr,
        len: usize,
        stream: &Stream,
        lender: Lender,
    ) -> Result<Self> {
        gpu_device::__private::require_device_align::<T>();
        let refuse = |reason: String| Error::InvalidArgument {
            operation: "DeviceBuffer::from_raw_parts",
            reason,
        };
        let state = stream.device_state("DeviceBuffer::from_raw_parts")?;
        if stream.active_capture().is_some() {
            return Err(refuse(
                "the stream is capturing a graph: lend the memory on a stream that is not".into(),
            ));
        }
        let bytes = byte_len::<T>(len)?;
        if bytes > 0 {
            if ptr == 0 {
                return Err(refuse(format!("a null address for {len} elements")));
            }
            if !ptr.is_multiple_of(align_of::<T>() as u64) {
                return Err(refuse(format!(
                    "address {ptr:#x} is not aligned for `{}` ({} bytes)",
                    std::any::type_name::<T>(),
                    align_of::<T>()
                )));
            }
            let device = stream.device();
            let range = driver()
                .memory_range(device, ptr)
                .map_err(|e| state.error(e))?
                .ok_or_else(|| {
                    refuse(format!(
                        "address {ptr:#x} is not device memory (host memory, or an address the driver does not know)"
                    ))
                })?;
            if range.device != device {
                return Err(refuse(format!(
                    "address {ptr:#x} is memory of device {}, and the stream is on device {device}",
                    range.device
                )));
            }
            if let Some((start, size)) = range.extent {
                let end = start.saturating_add(size as u64);
                if ptr.saturating_add(bytes as u64) > end {
                    return Err(refuse(format!(
                        "{len} elements of {} bytes from {ptr:#x} pass the end of its allocation ({size} bytes from {start:#x})",
                        size_of::<T>()
                    )));
                }
            }
        }
        Ok(DeviceBuffer::from_allocation(
            ptr,
            len,
            stream,
            Some(lender),
        ))
    }

    /// The buffer's device address, for another library to read it with
    /// work queued on `stream`: `stream` waits (on the device) for the
    /// buffer's last write on another stream, and the buffer records a read
    /// on `stream`, so its next write, on any stream, waits for the work
    /// queued on `stream` by then.
    ///
    /// The address is valid while the buffer lives. The other library's work
    /// must be queued on `stream` (or ordered after it) before the buffer is
    /// next written or dropped, and must only read.
    pub fn as_raw_on(&self, stream: &Stream) -> Result<DevicePtr> {
        self.check_stream(stream, "DeviceBuffer::as_raw_on")?;
        self.track(stream, Access::Read)?;
        Ok(self.as_raw())
    }

    /// As [`as_raw_on`](Self::as_raw_on), for work that writes: `stream`
    /// waits for the buffer's last write and every read since on other
    /// streams, and the buffer records a write on `stream`, so every later
    /// use waits for the work queued on `stream` by then.
    pub fn as_raw_mut_on(&mut self, stream: &Stream) -> Result<DevicePtr> {
        self.check_stream(stream, "DeviceBuffer::as_raw_mut_on")?;
        self.track(stream, Access::Write)?;
        Ok(self.as_raw())
    }

    fn check_stream(&self, stream: &Stream, operation: &'static str) -> Result<()> {
        stream.device_state(operation)?;
        if stream.device() != self.device() {
            return Err(Error::InvalidArgument {
                operation,
                reason: format!(
                    "the stream is on device {}, and the buffer on device {}",
                    stream.device(),
                    self.device()
                ),
            });
        }
        Ok(())
    }
}
