//! Borrowed ranges of a [`DeviceBuffer`](super::DeviceBuffer), and the
//! traits by which kernel launchers accept buffers and views.

use super::tracking::{Access, AccessTracker, Tracked};
use crate::backend::DevicePtr;
use crate::error::Result;
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;

/// A device range: address, element count, device.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct RawView {
    /// The device address of the first element.
    pub ptr: DevicePtr,
    /// The number of elements.
    pub len: usize,
    /// The device's ordinal.
    pub device: usize,
}

impl RawView {
    fn slice<T>(self, range: Range<usize>) -> Option<RawView> {
        (range.start <= range.end && range.end <= self.len).then(|| RawView {
            ptr: self.ptr + (range.start * size_of::<T>()) as DevicePtr,
            len: range.end - range.start,
            device: self.device,
        })
    }
}

/// A borrowed, read-only range of a [`DeviceBuffer`](super::DeviceBuffer).
/// Its uses are tracked with the buffer's.
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T: DeviceCopy> {
    raw: RawView,
    tracker: &'a AccessTracker,
    _element: PhantomData<&'a [T]>,
}

/// A borrowed, writable range of a [`DeviceBuffer`](super::DeviceBuffer).
/// Its uses are tracked with the buffer's.
pub struct DeviceViewMut<'a, T: DeviceCopy> {
    raw: RawView,
    tracker: &'a AccessTracker,
    _element: PhantomData<&'a mut [T]>,
}

impl<'a, T: DeviceCopy> DeviceView<'a, T> {
    pub(crate) fn new(raw: RawView, tracker: &'a AccessTracker) -> Self {
        DeviceView {
            raw,
            tracker,
            _element: PhantomData,
        }
    }

    /// Address, length and device, for the copies of other modules.
    pub(crate) fn raw(&self) -> RawView {
        self.raw
    }

    /// Orders a read about to be queued on `stream` (see the tracking).
    pub(crate) fn track_read(&self, stream: &Stream) -> Result<()> {
        self.tracker.access(stream, Access::Read)
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
        Some(DeviceView::new(self.raw.slice::<T>(range)?, self.tracker))
    }
}

impl<'a, T: DeviceCopy> DeviceViewMut<'a, T> {
    pub(crate) fn new(raw: RawView, tracker: &'a AccessTracker) -> Self {
        DeviceViewMut {
            raw,
            tracker,
            _element: PhantomData,
        }
    }

    /// Address, length and device, for the copies of other modules.
    pub(crate) fn raw(&self) -> RawView {
        self.raw
    }

    /// Orders a write about to be queued on `stream` (see the tracking).
    pub(crate) fn track_write(&self, stream: &Stream) -> Result<()> {
        self.tracker.access(stream, Access::Write)
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
        DeviceView::new(self.raw, self.tracker)
    }

    /// A shorter-lived writable view of the same range.
    pub fn reborrow(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut::new(self.raw, self.tracker)
    }

    /// A sub-range, or `None` if it is out of bounds.
    pub fn into_slice(self, range: Range<usize>) -> Option<DeviceViewMut<'a, T>> {
        Some(DeviceViewMut::new(
            self.raw.slice::<T>(range)?,
            self.tracker,
        ))
    }

    /// Splits into `[0, mid)` and `[mid, len)`, or `None` if `mid > len`. The
    /// halves are tracked as one buffer: using them on two streams orders the
    /// second use after the first.
    pub fn split_at(self, mid: usize) -> Option<(DeviceViewMut<'a, T>, DeviceViewMut<'a, T>)> {
        let left = self.raw.slice::<T>(0..mid)?;
        let right = self.raw.slice::<T>(mid..self.raw.len)?;
        Some((
            DeviceViewMut::new(left, self.tracker),
            DeviceViewMut::new(right, self.tracker),
        ))
    }
}

/// Device memory as a graph holds it: kept alive while the graph lives, and
/// tracked at each of its launches.
#[doc(hidden)]
#[derive(Clone)]
pub struct GraphMemory(pub(crate) std::sync::Arc<dyn Tracked>);

impl AccessTracker {
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.owner().map(GraphMemory)
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The tracking of an access once it is queued on a stream, for memory that
/// needs one ([`DeviceInput::after_access_hook`]): a kernel launch or a
/// collective calls it after queueing the work that uses the memory.
#[doc(hidden)]
pub trait AfterAccess {
    /// Tracks the access just queued on `stream`.
    fn after_access(&self, stream: &Stream) -> Result<()>;
}

/// What a launcher accepts where the kernel reads `&[T]`: a `&DeviceBuffer<T>`,
/// a `&mut DeviceBuffer<T>` or a view.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory of `{T}`: the kernel reads its `&[{T}]` on the device",
    label = "expected a device buffer of `{T}`",
    note = "pass `&buffer` for a `DeviceBuffer<{T}>`, or a `DeviceView<{T}>`; data on the host goes to the device first: `let buffer = DeviceBuffer::to_device_sync(&data, &stream)?;`"
)]
pub trait DeviceInput<T: DeviceCopy>: sealed::Sealed {
    #[doc(hidden)]
    fn raw_view(&self) -> RawView;

    /// Orders a read about to be queued on `stream` after the device work it
    /// must not overlap, and records it.
    #[doc(hidden)]
    fn before_device_access(&self, stream: &Stream) -> Result<()>;

    /// What tracks the access once it is queued, where the memory needs it
    /// (mapped pinned memory): `None` for device memory.
    #[doc(hidden)]
    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        None
    }

    /// The memory, for a graph kernel node that will use it; `None` for
    /// memory graphs cannot hold (mapped pinned memory).
    #[doc(hidden)]
    fn graph_memory(&self) -> Option<GraphMemory> {
        None
    }
}

/// What a launcher accepts where the kernel writes (`DisjointSlice<T>`,
/// `&[DeviceAtomic<T>]`): a `&mut DeviceBuffer<T>` or a writable view. The
/// exclusive borrow keeps the same buffer out of every other argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not writable device memory of `{T}`: the kernel writes `{T}` elements on the device",
    label = "expected `&mut DeviceBuffer<{T}>`",
    note = "outputs are borrowed mutably: pass `&mut buffer` for a `DeviceBuffer<{T}>`, or a `DeviceViewMut<{T}>`; for results on the host, write into `DeviceBuffer::<{T}>::zeroed_on(len, &stream)?` and copy them back after the launch (`buffer.copy_to_host_sync(&stream)?`)"
)]
pub trait DeviceOutput<T: DeviceCopy>: sealed::Sealed {
    #[doc(hidden)]
    fn raw_view(&mut self) -> RawView;

    /// As [`DeviceInput::before_device_access`], for a write.
    #[doc(hidden)]
    fn before_device_access(&self, stream: &Stream) -> Result<()>;

    /// As [`DeviceInput::after_access_hook`], for a write.
    #[doc(hidden)]
    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        None
    }

    /// As [`DeviceInput::graph_memory`].
    #[doc(hidden)]
    fn graph_memory(&self) -> Option<GraphMemory> {
        None
    }
}

use super::DeviceBuffer;

impl<T: DeviceCopy> sealed::Sealed for &DeviceBuffer<T> {}
impl<T: DeviceCopy> sealed::Sealed for &mut DeviceBuffer<T> {}
impl<T: DeviceCopy> sealed::Sealed for DeviceView<'_, T> {}
impl<T: DeviceCopy> sealed::Sealed for DeviceViewMut<'_, T> {}

impl<T: DeviceCopy> DeviceInput<T> for &DeviceBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Read)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        Some(GraphMemory(self.memory()))
    }
}
impl<T: DeviceCopy> DeviceInput<T> for &mut DeviceBuffer<T> {
    fn raw_view(&self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Read)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        Some(GraphMemory(self.memory()))
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceView<'_, T> {
    fn raw_view(&self) -> RawView {
        self.raw
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track_read(stream)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.tracker.graph_memory()
    }
}
impl<T: DeviceCopy> DeviceInput<T> for DeviceViewMut<'_, T> {
    fn raw_view(&self) -> RawView {
        self.raw
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.tracker.access(stream, Access::Read)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.tracker.graph_memory()
    }
}
impl<T: DeviceCopy> DeviceOutput<T> for &mut DeviceBuffer<T> {
    fn raw_view(&mut self) -> RawView {
        self.raw()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track(stream, Access::Write)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        Some(GraphMemory(self.memory()))
    }
}
impl<T: DeviceCopy> DeviceOutput<T> for DeviceViewMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.raw
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.track_write(stream)
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.tracker.graph_memory()
    }
}
