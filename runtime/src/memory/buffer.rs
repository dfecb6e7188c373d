//! [`DeviceBuffer`]: an owned array in device memory, allocated and freed in
//! stream order from the device's memory pool.

use super::lender::Lender;
use super::tracking::{Access, AccessTracker, Accesses, Tracked};
use super::view::{DeviceView, DeviceViewMut, RawView};
use crate::backend::{driver, DevicePtr};
use crate::callback::in_callback;
use crate::capture::{registry, InProgress};
use crate::deferred::defer;
use crate::device;
use crate::error::{Error, Result};
use crate::stream::Stream;
use bytemuck::AnyBitPattern;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;
use std::sync::{Arc, Weak};

/// An array in device memory, like Numba's device arrays and CuPy's `ndarray`.
///
/// Memory comes from the device's pool in stream order (`cuMemAllocAsync`)
/// and goes back to it in stream order when the buffer is dropped
/// (`cuMemFreeAsync`, on the stream that used it last, after its uses on
/// other streams): dropping never waits for the device and never holds up
/// other threads. Uses of the buffer on different streams are ordered
/// automatically (see [the tracking](crate::memory#ordering-across-streams)).
///
/// A buffer starts zeroed or filled from host data; [`DeviceBuffer::empty`]
/// skips the zeroing for element types valid for every bit pattern.
///
/// A [`Graph`](crate::Graph) whose work uses the buffer keeps its memory
/// alive: dropping the buffer then frees the memory when the last graph
/// using it is dropped.
pub struct DeviceBuffer<T: DeviceCopy> {
    memory: Arc<Allocation>,
    len: usize,
    _element: PhantomData<T>,
}

/// Device memory from the pool, freed in stream order when the last owner
/// (a buffer, graphs using it) lets go of it.
pub(crate) struct Allocation {
    ptr: DevicePtr,
    device: usize,
    /// The stream it was allocated on.
    stream: Stream,
    tracker: AccessTracker,
    /// For memory another owner lent (a raw pointer, a DLPack tensor): what
    /// gives it back, called instead of freeing it to the pool.
    lender: Option<Lender>,
}

impl Tracked for Allocation {
    fn tracker(&self) -> &AccessTracker {
        &self.tracker
    }
}

// SAFETY: the buffer owns device memory, reachable from the host only through
// `&self`/`&mut self` methods that go through the driver; the tracker is
// behind a mutex.
unsafe impl<T: DeviceCopy + Send> Send for DeviceBuffer<T> {}
// SAFETY: `&DeviceBuffer` only reads device memory, through the driver.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceBuffer<T> {}

/// The byte size of `len` elements of `T`, or an error naming the overflow.
pub(crate) fn byte_len<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or(Error::SizeOverflow {
        len,
        element_bytes: size_of::<T>(),
    })
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` elements on `stream`'s device, usable on `stream` in
    /// stream order (and on other streams after it, through the tracking),
    /// without initialising them.
    fn alloc_on(len: usize, stream: &Stream) -> Result<Self> {
        // Allocations are 256-aligned, on both backends: `T` may ask no more.
        gpu_device::__private::require_device_align::<T>();
        let state = stream.device_state("a device allocation")?;
        let bytes = byte_len::<T>(len)?;
        let out_of_memory = || {
            let (free, total) = driver()
                .memory_info(state.ordinal)
                .unwrap_or((0, state.total_memory));
            Error::OutOfMemory {
                requested: bytes,
                free,
                total,
            }
        };
        let capturing = stream.active_capture().is_some();
        let ptr = if bytes == 0 {
            0
        } else if bytes > state.total_memory {
            // More than the device has: refused without asking the driver.
            return Err(out_of_memory());
        } else {
            match driver().alloc_async(bytes, stream.handle()) {
                Ok(ptr) => ptr,
                // (Not in a capture on this device, another thread's
                // included, where waiting for the device is not possible.)
                Err(e)
                    if e.is_out_of_memory()
                        && !capturing
                        && registry::refuse_device_wide(state.ordinal, "an allocation's retry")
                            .is_ok() =>
                {
                    // Buffers freed on streams that have not reached the free
                    // yet still hold memory: wait for them once, and retry.
                    driver()
                        .synchronize_device(state.ordinal)
                        .map_err(|e| state.error(e))?;
                    driver().alloc_async(bytes, stream.handle()).map_err(|e| {
                        if e.is_out_of_memory() {
                            out_of_memory()
                        } else {
                            stream.error(e)
                        }
                    })?
                }
                Err(e) => return Err(stream.error(e)),
            }
        };
        Ok(DeviceBuffer::from_allocation(ptr, len, stream, None))
    }

    /// A buffer of `len` elements at `ptr` on `stream`'s device, last written
    /// on `stream`: the pool's memory, or (with a `lender`) memory lent by
    /// another owner, given back through it.
    pub(super) fn from_allocation(
        ptr: DevicePtr,
        len: usize,
        stream: &Stream,
        lender: Option<Lender>,
    ) -> Self {
        let memory = Arc::new_cyclic(|owner: &Weak<Allocation>| Allocation {
            ptr,
            device: stream.device(),
            stream: stream.clone(),
            tracker: AccessTracker::written_on(stream, owner.clone() as Weak<dyn Tracked>),
            lender,
        });
        DeviceBuffer {
            memory,
            len,
            _element: PhantomData,
        }
    }

    /// A zeroed buffer of `len` elements on the current device, made on the
    /// current stream (Numba's `cuda.device_array`, which leaves memory
    /// uninitialised; here it is zeroed, so nothing can read stale bytes:
    /// [`empty`](Self::empty) skips that for types valid for any bytes).
    /// Returns at once; uses on other streams wait for the zeroing.
    pub fn device_array(len: usize) -> Result<Self> {
        DeviceBuffer::zeroed_on(len, &crate::current_stream()?)
    }

    /// A buffer of `len` elements zeroed on `stream`: work queued on `stream`
    /// afterwards sees zeros, and so does work on other streams, which the
    /// tracking orders after the zeroing.
    pub fn zeroed_on(len: usize, stream: &Stream) -> Result<Self> {
        let mut buffer = DeviceBuffer::alloc_on(len, stream)?;
        buffer.zero(stream)?;
        Ok(buffer)
    }

    /// A buffer of `len` elements on `stream`'s device whose contents are left
    /// as the allocator found them.
    ///
    /// # Safety
    /// Every element must be written (by a kernel or a copy ordered before any
    /// read) before it is read, on the device or by copying to the host;
    /// otherwise the read may see bytes that are not a valid `T`. For element
    /// types valid for every bit pattern, [`empty_on`](Self::empty_on) is the
    /// safe form.
    pub unsafe fn uninitialized(len: usize, stream: &Stream) -> Result<Self> {
        DeviceBuffer::alloc_on(len, stream)
    }

    /// Copies `data` into a new buffer on the current stream (CuPy's
    /// `cp.asarray(data)`). Returns once the copy has completed on the device.
    /// For copies that return at once, use a [`PinnedBuffer`](crate::PinnedBuffer).
    pub fn from_host_sync(data: &[T]) -> Result<Self> {
        DeviceBuffer::to_device_sync(data, &crate::current_stream()?)
    }

    /// Copies the buffer to a new `Vec` on the current stream (CuPy's
    /// `cp.asnumpy(buffer)`). Waits for the buffer's last writer (wherever it
    /// ran), then for the copy.
    pub fn to_host_sync(&self) -> Result<Vec<T>> {
        self.copy_to_host_sync(&crate::current_stream()?)
    }

    /// Copies `data` into a new buffer on `stream`'s device, queued on
    /// `stream` (Numba's `cuda.to_device(data, stream=stream)`). `data` may
    /// change as soon as this returns, and the copy is ordered on `stream`:
    /// work queued there afterwards sees the data, and work on any other
    /// stream that uses the buffer waits for the copy (the buffer's
    /// tracking). The copy reads a staging copy of `data`, released once the
    /// stream has run it. Refused in a capture
    /// ([`Error::InCapture`](crate::Error::InCapture)).
    ///
    /// ```no_run
    /// use gpu_runtime::{DeviceBuffer, Stream};
    /// # fn main() -> gpu_runtime::Result<()> {
    /// let stream = Stream::new()?;
    /// let mut data = vec![1.0f32; 1024];
    /// let on_device = DeviceBuffer::to_device(&data, &stream)?;
    /// data.fill(2.0); // the copy already has its own
    /// assert_eq!(on_device.copy_to_host_sync(&stream)?, vec![1.0f32; 1024]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_device(data: &[T], stream: &Stream) -> Result<Self> {
        // SAFETY: every element is written by the copy below, which the
        // tracking orders before any other use; if it fails, the buffer is
        // dropped unread.
        let mut buffer = unsafe { DeviceBuffer::uninitialized(data.len(), stream)? };
        buffer.copy_from_host(data, stream)?;
        Ok(buffer)
    }

    /// Copies `data` into a new buffer on `stream`'s device and waits for the
    /// copy: unlike [`to_device`](Self::to_device), the copy has completed on
    /// the device when this returns, so the data is there for any stream, on
    /// any thread, also for work the buffer's tracking does not see (another
    /// library handed its address, a kernel timed alone).
    pub fn to_device_sync(data: &[T], stream: &Stream) -> Result<Self> {
        let mut buffer = DeviceBuffer::alloc_on(data.len(), stream)?;
        buffer.copy_from_host_sync(data, stream)?;
        Ok(buffer)
    }

    /// Sets every element to zero, queued on `stream`.
    pub fn zero(&mut self, stream: &Stream) -> Result<()> {
        let bytes = self.len * size_of::<T>();
        self.view_mut().queue_write(stream, |dst| {
            // SAFETY: `dst` is this buffer's memory of `bytes` bytes, borrowed
            // mutably; zero bytes are a valid `T` (`DeviceCopy`).
            unsafe { driver().memset_async(dst.ptr, 0, bytes, stream.handle()) }
        })
    }

    /// Sets every element to `value`, queued on `stream`, without
    /// reallocating (CuPy's `a.fill(value)`): one element is copied from the
    /// host, then doubled by device-to-device copies.
    pub fn fill(&mut self, value: T, stream: &Stream) -> Result<()> {
        self.view_mut().fill(value, stream)
    }

    /// Frees the buffer now, in the synchronous way: queues the free on the
    /// stream that used it last, then waits until that stream has reached it
    /// (so the memory is back in the pool, for
    /// [`Device::release_pool_memory`](crate::Device::release_pool_memory)). Plain dropping never waits.
    /// Memory that a [`Graph`](crate::Graph) still uses is freed when the
    /// last such graph is dropped instead.
    ///
    /// Inside a stream callback, where CUDA calls are forbidden, this is
    /// [`Error::CalledFromCallback`]; the buffer is dropped, and its release
    /// thread frees it as for any drop there.
    pub fn free_sync(self) -> Result<()> {
        if in_callback() {
            return Err(Error::CalledFromCallback);
        }
        let Ok(mut memory) = Arc::try_unwrap(self.memory) else {
            return Ok(());
        };
        let accesses = memory.tracker.take();
        // The drop that follows finds nothing to free.
        let ptr = std::mem::replace(&mut memory.ptr, 0);
        let what = Freed::new(ptr, memory.lender.take());
        match release(what, memory.device, graph_state(&memory.tracker), &accesses)? {
            Some(stream) => stream.synchronize(),
            None => Ok(()),
        }
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
        self.memory.device
    }

    /// The stream the buffer was allocated on (CuPy's allocation stream of a
    /// memory block): the pool handed its memory out in that stream's order.
    /// Its later uses may be on any stream; the drop frees it on the stream
    /// that used it last.
    pub fn allocation_stream(&self) -> &Stream {
        &self.memory.stream
    }

    /// The device address of the first element (0 for an empty buffer).
    /// Work queued through this address (another library, raw driver calls)
    /// is outside the buffer's tracking: order it with events yourself.
    pub fn as_raw(&self) -> DevicePtr {
        self.memory.ptr
    }

    /// The whole buffer as a read-only view.
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView::new(self.raw(), &self.memory.tracker)
    }

    /// The whole buffer as a writable view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        let raw = self.raw();
        DeviceViewMut::new(raw, &self.memory.tracker)
    }

    /// Elements `range` as a read-only view, or `None` if the range is out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<DeviceView<'_, T>> {
        self.view().slice(range)
    }

    /// Elements `range` as a writable view, or `None` if the range is out of bounds.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Option<DeviceViewMut<'_, T>> {
        self.view_mut().into_slice(range)
    }

    pub(crate) fn raw(&self) -> RawView {
        RawView {
            ptr: self.memory.ptr,
            len: self.len,
            device: self.memory.device,
        }
    }

    /// Records an access queued through other means than the buffer's own
    /// methods (orders it after conflicting accesses on other streams).
    pub(crate) fn track(&self, stream: &Stream, access: Access) -> Result<()> {
        self.memory.tracker.access(stream, access)
    }

    /// The tracker of the buffer's accesses.
    pub(crate) fn tracker(&self) -> &AccessTracker {
        &self.memory.tracker
    }

    /// The memory, for a graph that keeps it alive.
    pub(crate) fn memory(&self) -> Arc<dyn Tracked> {
        Arc::clone(&self.memory) as Arc<dyn Tracked>
    }
}

impl<T: DeviceCopy + AnyBitPattern> DeviceBuffer<T> {
    /// `len` elements on the current device, made on the current stream, left
    /// as the allocator found them (CuPy's `cp.empty`, Numba's
    /// `cuda.device_array`): for element types every bit pattern is a valid
    /// value of (bytemuck's `AnyBitPattern`: numbers, arrays and plain structs
    /// of them; not `bool`), so reading an element nothing wrote yields some
    /// value, never undefined behaviour. Other types use
    /// [`device_array`](Self::device_array), which zeroes.
    pub fn empty(len: usize) -> Result<Self> {
        DeviceBuffer::empty_on(len, &crate::current_stream()?)
    }

    /// [`empty`](Self::empty) on `stream`.
    pub fn empty_on(len: usize, stream: &Stream) -> Result<Self> {
        DeviceBuffer::alloc_on(len, stream)
    }
}

/// For a graph allocation, the capture that made it; and whether it outlived it.
type GraphState = (Option<Arc<crate::stream::CaptureRecord>>, bool);

fn graph_state(tracker: &AccessTracker) -> GraphState {
    let (capture, escaped) = tracker.graph_allocation();
    (capture.cloned(), escaped)
}

/// What a buffer's release gives back.
enum Freed {
    /// The pool's memory at this address.
    Pool(DevicePtr),
    /// Memory another owner lent, given back through its lender.
    Lent(Lender),
}

impl Freed {
    /// The pool's memory at `ptr`, or the `lender`'s: `None` for nothing to
    /// free (an empty buffer of the pool).
    fn new(ptr: DevicePtr, lender: Option<Lender>) -> Option<Freed> {
        match lender {
            Some(lender) => Some(Freed::Lent(lender)),
            None if ptr == 0 => None,
            None => Some(Freed::Pool(ptr)),
        }
    }
}

/// Frees `what` (of `device`, a graph allocation per `graph`) in stream order
/// after `accesses`: on the stream of the device's last access (its readers'
/// last, else its writer), made to wait for the others, on any device.
/// Returns that stream, or `None` when there was nothing to free, the context
/// is gone (with it, the memory; a lender is then called at once), or the
/// free waits for a capture to end.
fn release(
    what: Option<Freed>,
    device: usize,
    (graph_allocation, escaped): GraphState,
    accesses: &Accesses,
) -> Result<Option<Stream>> {
    let Some(what) = what else {
        return Ok(None);
    };
    if device::state(device).is_err() {
        // Dropping a lender gives the memory back.
        return Ok(None);
    }
    if escaped {
        // A graph allocation that outlived its capture: the memory was the
        // discarded graph's.
        return Ok(None);
    }
    // The free goes on a stream of the buffer's own device (kernels and
    // copies of other devices may have used it: peer access, peer copies),
    // the one that used it last; another thread's per-thread default stream
    // cannot be queued on from here, and the legacy default stream is
    // ordered after it.
    let usable = |s: &&Stream| s.device() == device && s.is_usable_here();
    let on = accesses
        .readers
        .iter()
        .rev()
        .find(usable)
        .or(accesses.writer.as_ref().filter(usable))
        .cloned()
        .unwrap_or_else(|| Stream::legacy_on(device).clone());
    if graph_allocation.is_none() {
        // The legacy default stream cannot be used while a blocking stream
        // of its device captures.
        let blocking = || match on.kind() {
            crate::StreamKind::LegacyDefault => registry::legacy_blocker(device),
            _ => None,
        };
        let capture = on
            .active_capture()
            .map(|c| c as Arc<dyn InProgress>)
            .or_else(blocking);
        if let Some(capture) = capture {
            // Memory the graph does not own cannot be freed in it: free it
            // once the capture has ended, after the real work on the stream.
            let accesses = Accesses {
                writer: accesses.writer.clone(),
                readers: accesses.readers.clone(),
            };
            capture.after_end(Box::new(move || {
                let _ = free_after(what, &on, &accesses);
            }));
            return Ok(None);
        }
    }
    free_after(what, &on, accesses)?;
    Ok(Some(on))
}

/// Queues the free of `what` on `on` after every stream of `accesses`.
fn free_after(what: Freed, on: &Stream, accesses: &Accesses) -> Result<()> {
    for other in accesses.streams() {
        on.wait_for(other)?;
    }
    on.device_state("a device buffer's free")?;
    match what {
        Freed::Pool(ptr) => {
            // SAFETY: `ptr` was allocated by `alloc_on` on this device and is
            // freed once (its allocation is gone); `on` waits for every
            // tracked use of it, and no later work can use it (nothing holds
            // the allocation any more: graphs that used it hold it too).
            unsafe { driver().free_async(ptr, on.handle()) }.map_err(|e| on.error(e))
        }
        // Given back once `on` reaches this point, on the release thread
        // (the lender may call CUDA, which a callback must not). Should the
        // callback not be queued, the closure is dropped here, and with it
        // the lender, which gives the memory back at once.
        Freed::Lent(lender) => on.add_callback(move || defer(Box::new(move || drop(lender)))),
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        let Some(what) = Freed::new(self.ptr, self.lender.take()) else {
            return;
        };
        let accesses = self.tracker.take();
        let (device, graph) = (self.device, graph_state(&self.tracker));
        if in_callback() {
            // CUDA calls are forbidden here: the release thread frees it.
            defer(Box::new(move || {
                if let Err(e) = release(Some(what), device, graph, &accesses) {
                    // Nobody waits for this release: say why the memory stays.
                    crate::diagnostics::report(
                        crate::diagnostics::Level::Warn,
                        &format!("a buffer dropped in a stream callback could not be freed: {e}"),
                    );
                }
            }));
        } else {
            // A failure means the context is lost, and the memory with it.
            let _ = release(Some(what), device, graph, &accesses);
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
            self.memory.device
        )
    }
}
