//! One element of a device buffer read or written from the host, for
//! debugging (Numba's `darr[0] = 10`, CuPy's `a[i].get()`).

use super::buffer::DeviceBuffer;
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// The element at `index`, read on `stream` after the buffer's last
    /// writer (on any stream). Blocking, and slow: one copy and one wait for
    /// the device per element. For debugging and tests; copy whole buffers
    /// ([`copy_to_host_sync`](Self::copy_to_host_sync)) otherwise. An index
    /// past the end is an [`Error::IndexOutOfRange`] naming it and the length.
    ///
    /// ```no_run
    /// use gpu_runtime::{DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let mut x = DeviceBuffer::to_device_sync(&[1.0f32, 2.0, 3.0], &stream)?;
    /// x.set(1, 20.0, &stream)?;
    /// assert_eq!(x.get(1, &stream)?, 20.0);
    /// assert!(x.get(3, &stream).is_err());
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn get(&self, index: usize, stream: &Stream) -> Result<T> {
        let element = self
            .slice(index..index.saturating_add(1))
            .ok_or_else(|| self.out_of_range("DeviceBuffer::get", index))?;
        let values = element.copy_to_host_sync(stream)?;
        Ok(values[0])
    }

    /// Writes `value` at `index` on `stream`, after the buffer's earlier uses
    /// (on any stream); later uses on other streams wait for it. Blocking,
    /// and slow, as [`get`](Self::get): for debugging and tests; copy whole
    /// buffers ([`copy_from_host_sync`](Self::copy_from_host_sync)) or launch
    /// a kernel otherwise. An index past the end is an
    /// [`Error::IndexOutOfRange`] naming it and the length.
    pub fn set(&mut self, index: usize, value: T, stream: &Stream) -> Result<()> {
        let len = self.len();
        let mut element =
            self.slice_mut(index..index.saturating_add(1))
                .ok_or(Error::IndexOutOfRange {
                    operation: "DeviceBuffer::set",
                    index,
                    len,
                })?;
        element.copy_from_host_sync(&[value], stream)
    }

    fn out_of_range(&self, operation: &'static str, index: usize) -> Error {
        Error::IndexOutOfRange {
            operation,
            index,
            len: self.len(),
        }
    }
}
