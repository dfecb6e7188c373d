//! The checks a slice argument passes before a launch: its device, and the
//! address an empty slice gets.

use crate::abi::SliceArg;
use crate::error::{Error, Result};
use crate::launch::KernelFunction;
use crate::memory::RawView;

impl SliceArg {
    /// Checks the device (see [`crate::peer`]): the slice lives on the
    /// stream's device, or on one it has peer access to. A slice with no
    /// bytes (empty, or of a zero-sized element type) gets a non-null,
    /// aligned dangling address (as Rust's empty slices have), since the
    /// device side builds a slice from the pointer without a branch, and a
    /// zero-sized allocation has no address.
    #[inline]
    pub(crate) fn checked<T>(
        view: RawView,
        stream_device: usize,
        kernel: &KernelFunction,
        parameter: &'static str,
    ) -> Result<SliceArg> {
        if view.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(SliceArg {
                ptr: std::mem::align_of::<T>() as u64,
                len: view.len,
            });
        }
        if !crate::peer::is_enabled(stream_device, view.device) {
            return Err(Error::WrongDevice {
                kernel: kernel.name(),
                parameter,
                buffer_device: view.device,
                stream_device,
            });
        }
        Ok(SliceArg {
            ptr: view.ptr,
            len: view.len,
        })
    }
}
