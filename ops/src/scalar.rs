//! [`DeviceScalar`]: one value in device memory, CuPy's 0-d array.

use gpu_device::DeviceCopy;
use gpu_runtime::{DeviceBuffer, DeviceView, Result, Stream};

/// One value in device memory: what a reduction returns (CuPy's 0-d array).
/// In arithmetic it broadcasts to every element of the arrays it meets.
pub struct DeviceScalar<T: DeviceCopy> {
    /// The value is element 0; a reduction keeps its scratch space behind it.
    storage: DeviceBuffer<T>,
}

impl<T: DeviceCopy> DeviceScalar<T> {
    /// The scalar stored in element 0 of `storage`; `None` for an empty buffer.
    pub fn from_buffer(storage: DeviceBuffer<T>) -> Option<Self> {
        (!storage.is_empty()).then_some(DeviceScalar { storage })
    }

    /// A device scalar holding `value`, copied on `stream`.
    pub fn from_value(value: T, stream: &Stream) -> Result<Self> {
        Ok(DeviceScalar {
            storage: DeviceBuffer::to_device_sync(&[value], stream)?,
        })
    }

    /// The value as a one-element view, for kernel arguments.
    pub fn view(&self) -> DeviceView<'_, T> {
        self.storage
            .slice(0..1)
            .expect("a DeviceScalar's storage is never empty")
    }

    /// The value, copied to the host after the work queued on `stream` so far.
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<T> {
        Ok(self.view().copy_to_host_sync(stream)?[0])
    }

    /// The value, copied to the host on the current stream (CuPy's `cp.asnumpy(b)`).
    pub fn to_host_sync(&self) -> Result<T> {
        self.copy_to_host_sync(&gpu_runtime::current_stream()?)
    }
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceScalar<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceScalar<{}> on device {}",
            std::any::type_name::<T>(),
            self.storage.device()
        )
    }
}
