//! [`PitchedBuffer`]: a matrix in device memory whose rows start at a pitch
//! the driver picks (`cuMemAllocPitch`), copied as 2-D regions.

use super::direct::DirectAllocation;
use super::region::{Layout2d, Region2d, Region2dMut};
use super::tracking::Access;
use crate::backend::{driver, DevicePtr};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::sync::Arc;

/// A `rows x cols` matrix in device memory, each row starting a pitch
/// (bytes, at least a row's) after the one before, as `cuMemAllocPitch`
/// (CUDA's `cudaMallocPitch`) lays it out for coalesced row accesses.
/// Copies to and from the host or other regions go through
/// [`region`](Self::region) and [`region_mut`](Self::region_mut) (2-D
/// copies, `cuMemcpy2DAsync`), ordered across streams by the tracking like
/// every buffer's.
///
/// The allocation is not stream-ordered: it is made at once, and dropping
/// the buffer waits for the device work using it before freeing it
/// (`cuMemFree`; on the release thread inside a stream callback).
///
/// ```no_run
/// # use gpu_runtime::{PitchedBuffer, Stream};
/// # let stream = Stream::new()?;
/// let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
/// let image = PitchedBuffer::from_host_sync(&data, 3, 4, &stream)?;
/// assert!(image.pitch_bytes() >= 4 * 4);
/// // Rows 1..3, columns 1..3, to the host:
/// let corner = image.region().strided(1..3, 1, 1..3, 1)?.copy_to_host_sync(&stream)?;
/// assert_eq!(corner, [5.0, 6.0, 9.0, 10.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct PitchedBuffer<T: DeviceCopy> {
    memory: Arc<DirectAllocation>,
    rows: usize,
    cols: usize,
    pitch: usize,
    _element: PhantomData<T>,
}

// SAFETY: the buffer owns device memory, reachable from the host only
// through the driver, ordered by the tracker (behind a mutex).
unsafe impl<T: DeviceCopy + Send> Send for PitchedBuffer<T> {}
// SAFETY: `&PitchedBuffer` only reads device memory, through the driver.
unsafe impl<T: DeviceCopy + Sync> Sync for PitchedBuffer<T> {}

impl<T: DeviceCopy> PitchedBuffer<T> {
    /// A zeroed `rows x cols` matrix on `stream`'s device, zeroed on
    /// `stream` (uses on other streams wait for the zeroing).
    pub fn zeroed_on(rows: usize, cols: usize, stream: &Stream) -> Result<Self> {
        gpu_device::__private::require_device_align::<T>();
        let state = stream.device_state("a pitched allocation")?;
        stream.refuse_in_capture(
            "PitchedBuffer::zeroed_on",
            "a pitched allocation is not stream-ordered: its zeroing would run only when the graph is launched, and the memory would be read unzeroed before; allocate before the capture",
        )?;
        let element = size_of::<T>();
        let width = cols.checked_mul(element).ok_or(Error::SizeOverflow {
            len: cols,
            element_bytes: element,
        })?;
        let (ptr, pitch) = if width == 0 || rows == 0 {
            (0, width)
        } else {
            // What the driver's alignment hint takes: 4, 8 or 16 bytes.
            let access = match element {
                ..=4 => 4,
                5..=8 => 8,
                _ => 16,
            };
            let too_big = |free| Error::OutOfMemory {
                requested: width.saturating_mul(rows),
                free,
                total: state.total_memory,
            };
            if width.saturating_mul(rows) > state.total_memory {
                return Err(too_big(0));
            }
            driver()
                .alloc_pitch(state.ordinal, width, rows, access)
                .map_err(|e| {
                    if e.is_out_of_memory() {
                        let free = driver().memory_info(state.ordinal).map_or(0, |(f, _)| f);
                        too_big(free)
                    } else {
                        state.error(e)
                    }
                })?
        };
        let bytes = pitch * rows;
        let buffer = PitchedBuffer {
            memory: DirectAllocation::new(ptr, bytes, state.ordinal),
            rows,
            cols,
            pitch,
            _element: PhantomData,
        };
        if pitch % align_of::<T>() != 0 {
            return Err(Error::InvalidCopy2d {
                reason: format!(
                    "the driver's pitch of {pitch} bytes does not keep rows of `{}` aligned to {}",
                    std::any::type_name::<T>(),
                    align_of::<T>()
                ),
            });
        }
        if bytes > 0 {
            buffer.memory.tracker.access(stream, Access::Write)?;
            // SAFETY: the allocation's `bytes` bytes, alive until its tracked
            // uses (this one) complete; zero bytes are a valid `T`.
            unsafe { driver().memset_async(ptr, 0, bytes, stream.handle()) }
                .map_err(|e| stream.error(e))?;
        }
        Ok(buffer)
    }

    /// A `rows x cols` matrix holding `data` (row after row), copied on
    /// `stream`. Blocking: returns once the copy has completed.
    pub fn from_host_sync(data: &[T], rows: usize, cols: usize, stream: &Stream) -> Result<Self> {
        let mut buffer = PitchedBuffer::zeroed_on(rows, cols, stream)?;
        buffer.region_mut().copy_from_host_sync(data, stream)?;
        Ok(buffer)
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of elements in a row.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The bytes from one row's start to the next's (at least a row's bytes).
    pub fn pitch_bytes(&self) -> usize {
        self.pitch
    }

    /// The ordinal of the device holding the matrix.
    pub fn device(&self) -> usize {
        self.memory.device
    }

    /// The device address of the first row (0 when empty). Work through it
    /// is outside the tracking.
    pub fn as_raw(&self) -> DevicePtr {
        self.memory.ptr
    }

    /// The whole matrix as a read-only region.
    pub fn region(&self) -> Region2d<'_, T> {
        Region2d::new(self.layout(), &self.memory.tracker)
    }

    /// The whole matrix as a writable region.
    pub fn region_mut(&mut self) -> Region2dMut<'_, T> {
        Region2dMut::new(self.layout(), &self.memory.tracker)
    }

    /// Copies the matrix to a new `Vec`, row after row. Blocking.
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        self.region().copy_to_host_sync(stream)
    }

    fn layout(&self) -> Layout2d {
        Layout2d {
            ptr: self.memory.ptr,
            device: self.memory.device,
            rows: self.rows,
            cols: self.cols,
            row_pitch: self.pitch,
            col_step: 1,
        }
    }
}

impl<T: DeviceCopy> std::fmt::Debug for PitchedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PitchedBuffer<{}>[{} x {}, pitch {} bytes] on device {}",
            std::any::type_name::<T>(),
            self.rows,
            self.cols,
            self.pitch,
            self.memory.device
        )
    }
}
