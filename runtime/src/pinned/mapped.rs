//! Mapped page-locked memory: kernels read and write a
//! [`MappedBuffer`](super::MappedBuffer) in place, through views whose
//! launches the buffer tracks like copies.

use super::tracking::{lock, Pending};
use super::{Mapped, PinnedBuffer};
use crate::error::Result;
use crate::memory::{sealed, AfterAccess, DeviceInput, DeviceOutput, RawView};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::sync::Mutex;

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

/// A [`MappedBuffer`](super::MappedBuffer) as a kernel input, read in place: from
/// [`PinnedBuffer::device_view`].
pub struct MappedView<'a, T: DeviceCopy> {
    raw: RawView,
    pending: &'a Mutex<Pending>,
    _element: PhantomData<&'a [T]>,
}

/// A [`MappedBuffer`](super::MappedBuffer) as a kernel output, written in place: from
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
        stream.refuse_in_capture("a kernel reading mapped memory", super::NOT_IN_GRAPHS)?;
        lock(self.pending).order_before(stream, &(0..self.raw.len), false)
    }

    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        Some(self)
    }
}

impl<T: DeviceCopy> AfterAccess for MappedView<'_, T> {
    fn after_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).push_after(stream, 0..self.raw.len, false)
    }
}

impl<T: DeviceCopy> DeviceOutput<T> for MappedViewMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.raw
    }

    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        stream.refuse_in_capture("a kernel writing mapped memory", super::NOT_IN_GRAPHS)?;
        lock(self.pending).order_before(stream, &(0..self.raw.len), true)
    }

    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        Some(self)
    }
}

impl<T: DeviceCopy> AfterAccess for MappedViewMut<'_, T> {
    fn after_access(&self, stream: &Stream) -> Result<()> {
        lock(self.pending).push_after(stream, 0..self.raw.len, true)
    }
}
