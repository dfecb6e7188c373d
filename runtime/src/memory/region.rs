//! 2-D regions of device memory with a row pitch and a column step (CuPy's
//! `a[0::2, 0::2]`), and their copies to and from the host and between
//! regions, as 2-D copies (`cuMemcpy2DAsync`) ordered by the tracking.

use super::copy::check_device;
use super::tracking::{Access, AccessTracker};
use super::DeviceBuffer;
use crate::backend::{driver, Copy2d, DevicePtr, DriverError, End2d, Memory2d};
use crate::error::{Error, Result};
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::{Bound, Range, RangeBounds};

/// The largest row pitch a 2-D copy takes (`CU_DEVICE_ATTRIBUTE_MAX_PITCH`
/// of current GPUs; the simulator holds to it too).
pub(crate) const MAX_PITCH: usize = i32::MAX as usize;

/// Where a region's elements are: the first at `ptr`, row `r` column `c` at
/// `ptr + r * row_pitch + c * col_step * size_of::<T>()`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout2d {
    pub(crate) ptr: DevicePtr,
    pub(crate) device: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// Bytes from one row's start to the next's.
    pub(crate) row_pitch: usize,
    /// Elements from one column to the next.
    pub(crate) col_step: usize,
}

impl Layout2d {
    /// The byte offsets of the first element and past the last, from `ptr`.
    fn span(&self, element: usize) -> Range<u64> {
        if self.rows == 0 || self.cols == 0 {
            return self.ptr..self.ptr;
        }
        let last = (self.rows - 1) * self.row_pitch + (self.cols - 1) * self.col_step * element;
        self.ptr..self.ptr + (last + element) as u64
    }

    /// Rows `rows` every `row_step`-th and columns `cols` every
    /// `col_step`-th of this region.
    fn strided(
        self,
        rows: impl RangeBounds<usize>,
        row_step: usize,
        cols: impl RangeBounds<usize>,
        col_step: usize,
        element: usize,
    ) -> Result<Layout2d> {
        let rows = resolve(rows, self.rows, "rows")?;
        let cols = resolve(cols, self.cols, "columns")?;
        if row_step == 0 || col_step == 0 {
            return Err(Error::InvalidCopy2d {
                reason: format!("a step of 0 (rows every {row_step}, columns every {col_step}); steps start at 1"),
            });
        }
        let (new_rows, new_cols) = (rows.len().div_ceil(row_step), cols.len().div_ceil(col_step));
        // With two rows or more, `row_step` is at most the rows spanned, so
        // the product stays within the region's bytes (likewise columns);
        // with one, the pitch is never used and a huge step must not overflow.
        let row_pitch = if new_rows > 1 {
            self.row_pitch * row_step
        } else {
            self.row_pitch
        };
        let col_step = if new_cols > 1 {
            self.col_step * col_step
        } else {
            self.col_step
        };
        Ok(Layout2d {
            ptr: self.ptr
                + (rows.start * self.row_pitch + cols.start * self.col_step * element) as u64,
            device: self.device,
            rows: new_rows,
            cols: new_cols,
            row_pitch,
            col_step,
        })
    }
}

/// `range` within `0..len`, or an error naming both.
fn resolve(range: impl RangeBounds<usize>, len: usize, axis: &str) -> Result<Range<usize>> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok(s..e),
        _ => Err(Error::InvalidCopy2d {
            reason: format!(
                "{axis} {:?}..{:?} lie outside the region's {len} {axis}",
                range.start_bound(),
                range.end_bound()
            ),
        }),
    }
}

/// A read-only 2-D region of device memory: `rows x cols` elements, rows a
/// pitch apart, columns a step apart. Made by [`DeviceBuffer::region_2d`]
/// or [`PitchedBuffer::region`](crate::PitchedBuffer::region), narrowed by
/// [`strided`](Self::strided); copied to the host or into another region
/// on a stream. Its uses are tracked with its buffer's.
///
/// ```no_run
/// # use gpu_runtime::{DeviceBuffer, Stream};
/// # let stream = Stream::new()?;
/// let a = DeviceBuffer::<i32>::from_host_sync(&(0..48).collect::<Vec<_>>())?;
/// // CuPy's `a.reshape(6, 8)[0::2, 0::2].get(stream)`:
/// let every_other = a.region_2d(6, 8)?.strided(.., 2, .., 2)?;
/// assert_eq!(every_other.extents(), (3, 4));
/// let host = every_other.copy_to_host_sync(&stream)?;
/// assert_eq!(&host[..4], &[0, 2, 4, 6]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Region2d<'a, T: DeviceCopy> {
    layout: Layout2d,
    tracker: &'a AccessTracker,
    _element: PhantomData<&'a [T]>,
}

/// A writable 2-D region of device memory: as [`Region2d`], from
/// [`DeviceBuffer::region_2d_mut`] or
/// [`PitchedBuffer::region_mut`](crate::PitchedBuffer::region_mut).
pub struct Region2dMut<'a, T: DeviceCopy> {
    layout: Layout2d,
    tracker: &'a AccessTracker,
    _element: PhantomData<&'a mut [T]>,
}

impl<'a, T: DeviceCopy> Region2d<'a, T> {
    /// A region laid out as `layout`, within memory `tracker` tracks.
    pub(crate) fn new(layout: Layout2d, tracker: &'a AccessTracker) -> Self {
        Region2d {
            layout,
            tracker,
            _element: PhantomData,
        }
    }

    /// `(rows, cols)`.
    pub fn extents(&self) -> (usize, usize) {
        (self.layout.rows, self.layout.cols)
    }

    /// Rows `rows`, every `row_step`-th, and columns `cols`, every
    /// `col_step`-th (NumPy's `a[r0:r1:row_step, c0:c1:col_step]`); an
    /// error naming the range or step that does not fit.
    pub fn strided(
        self,
        rows: impl RangeBounds<usize>,
        row_step: usize,
        cols: impl RangeBounds<usize>,
        col_step: usize,
    ) -> Result<Self> {
        let layout = self
            .layout
            .strided(rows, row_step, cols, col_step, size_of::<T>())?;
        Ok(Region2d::new(layout, self.tracker))
    }

    /// Copies the region to a new `Vec`, row after row (CuPy's `get`),
    /// after the kernels writing it, on whatever stream. Blocking: returns
    /// once the data has arrived (pageable host memory, as every `_sync` copy).
    pub fn copy_to_host_sync(&self, stream: &Stream) -> Result<Vec<T>> {
        let len = self.layout.rows * self.layout.cols;
        let mut out: Vec<T> = Vec::with_capacity(len);
        self.copy_raw_to_host(out.as_mut_ptr(), stream)?;
        // SAFETY: the copy wrote all `len` elements from device memory
        // holding `T` values and has completed.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies the region into `out` (`rows * cols` elements, row after row),
    /// as [`copy_to_host_sync`](Self::copy_to_host_sync). `out` may be a
    /// pinned buffer's slice ([`PinnedBuffer::as_mut_slice`](crate::PinnedBuffer::as_mut_slice)),
    /// which the copy reaches at full bus speed.
    pub fn copy_to_slice_sync(&self, out: &mut [T], stream: &Stream) -> Result<()> {
        let len = self.layout.rows * self.layout.cols;
        if out.len() != len {
            return Err(Error::LengthMismatch {
                operation: "2-D copy to host",
                destination: out.len(),
                source: len,
            });
        }
        self.copy_raw_to_host(out.as_mut_ptr(), stream)
    }

    fn copy_raw_to_host(&self, dst: *mut T, stream: &Stream) -> Result<()> {
        check_device(self.layout.device, stream, "a 2-D copy to the host")?;
        stream.refuse_in_capture("Region2d::copy_to_host_sync", super::copy::SYNC_IN_CAPTURE)?;
        if self.layout.rows == 0 || self.layout.cols == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        self.tracker.access(stream, Access::Read)?;
        let (rows, cols) = (self.layout.rows, self.layout.cols);
        let copies = plan::<T>(
            device_end::<T>(&self.layout),
            host_end(dst, cols),
            rows,
            cols,
        )?;
        // SAFETY: `dst` has room for `rows * cols` elements, packed, and is
        // neither read nor freed before `complete` has waited for the copy;
        // the region lies in its buffer (checked when made), kept alive by
        // this borrow and freed after tracked uses.
        let queued = unsafe { queue(&copies, stream) };
        super::copy::complete(stream, queued)
    }
}

impl<'a, T: DeviceCopy> Region2dMut<'a, T> {
    /// A writable region laid out as `layout`, within memory `tracker` tracks.
    pub(crate) fn new(layout: Layout2d, tracker: &'a AccessTracker) -> Self {
        Region2dMut {
            layout,
            tracker,
            _element: PhantomData,
        }
    }

    /// `(rows, cols)`.
    pub fn extents(&self) -> (usize, usize) {
        (self.layout.rows, self.layout.cols)
    }

    /// A read-only view of the same region.
    pub fn as_region(&self) -> Region2d<'_, T> {
        Region2d::new(self.layout, self.tracker)
    }

    /// A shorter-lived writable view of the same region.
    pub fn reborrow(&mut self) -> Region2dMut<'_, T> {
        Region2dMut::new(self.layout, self.tracker)
    }

    /// As [`Region2d::strided`].
    pub fn strided(
        self,
        rows: impl RangeBounds<usize>,
        row_step: usize,
        cols: impl RangeBounds<usize>,
        col_step: usize,
    ) -> Result<Self> {
        let layout = self
            .layout
            .strided(rows, row_step, cols, col_step, size_of::<T>())?;
        Ok(Region2dMut::new(layout, self.tracker))
    }

    /// Copies `data` (`rows * cols` elements, row after row) into the region
    /// (CuPy's `set`), after the device work using it. Blocking: returns once
    /// the copy has completed, so `data` may change at once.
    pub fn copy_from_host_sync(&mut self, data: &[T], stream: &Stream) -> Result<()> {
        let len = self.layout.rows * self.layout.cols;
        if data.len() != len {
            return Err(Error::LengthMismatch {
                operation: "2-D copy to device",
                destination: len,
                source: data.len(),
            });
        }
        check_device(self.layout.device, stream, "a 2-D copy to the device")?;
        stream.refuse_in_capture(
            "Region2dMut::copy_from_host_sync",
            super::copy::SYNC_IN_CAPTURE,
        )?;
        if len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        self.tracker.access(stream, Access::Write)?;
        let (rows, cols) = (self.layout.rows, self.layout.cols);
        let host = host_end(data.as_ptr().cast_mut(), cols);
        let copies = plan::<T>(host, device_end::<T>(&self.layout), rows, cols)?;
        // SAFETY: `data` holds `rows * cols` elements, only read (the copy's
        // source), before `complete` returns; the region lies in its buffer,
        // borrowed mutably.
        let queued = unsafe { queue(&copies, stream) };
        super::copy::complete(stream, queued)
    }

    /// Copies `source` (the same extents) into the region, queued on
    /// `stream` after the work writing `source` and the work using this
    /// region; returns at once. Both on `stream`'s device.
    pub fn copy_from(&mut self, source: Region2d<'_, T>, stream: &Stream) -> Result<()> {
        let (src, dst) = (source.layout, self.layout);
        if (src.rows, src.cols) != (dst.rows, dst.cols) {
            return Err(Error::InvalidCopy2d {
                reason: format!(
                    "the source is {} x {} and the destination {} x {}",
                    src.rows, src.cols, dst.rows, dst.cols
                ),
            });
        }
        check_device(src.device, stream, "a 2-D device-to-device copy")?;
        check_device(dst.device, stream, "a 2-D device-to-device copy")?;
        let element = size_of::<T>();
        let (a, b) = (src.span(element), dst.span(element));
        if a.start < b.end && b.start < a.end {
            return Err(Error::InvalidCopy2d {
                reason: format!(
                    "the source (bytes {:#x}..{:#x}) and the destination ({:#x}..{:#x}) overlap",
                    a.start, a.end, b.start, b.end
                ),
            });
        }
        if dst.rows == 0 || dst.cols == 0 || element == 0 {
            return Ok(());
        }
        let copies = plan::<T>(
            device_end::<T>(&src),
            device_end::<T>(&dst),
            dst.rows,
            dst.cols,
        )?;
        source.tracker.access(stream, Access::Read)?;
        self.tracker.access(stream, Access::Write)?;
        // SAFETY: both regions lie in their buffers (checked when made),
        // borrowed for this call and freed after tracked uses; they do not
        // overlap (checked above).
        unsafe { queue(&copies, stream) }.map_err(|e| stream.error(e))
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// The buffer's first `rows * cols` elements as a row-major `rows x cols`
    /// region, for 2-D copies (narrow it with [`Region2d::strided`]); an
    /// error naming the sizes when they do not fit.
    pub fn region_2d(&self, rows: usize, cols: usize) -> Result<Region2d<'_, T>> {
        let layout = packed::<T>(self.raw(), rows, cols)?;
        Ok(Region2d::new(layout, self.tracker()))
    }

    /// As [`region_2d`](Self::region_2d), writable.
    pub fn region_2d_mut(&mut self, rows: usize, cols: usize) -> Result<Region2dMut<'_, T>> {
        let layout = packed::<T>(self.raw(), rows, cols)?;
        Ok(Region2dMut::new(layout, self.tracker()))
    }
}

/// The row-major `rows x cols` layout of `raw`'s first elements.
fn packed<T>(raw: super::RawView, rows: usize, cols: usize) -> Result<Layout2d> {
    let row_bytes = cols.checked_mul(size_of::<T>());
    match (rows.checked_mul(cols), row_bytes) {
        (Some(n), Some(row_pitch)) if n <= raw.len => Ok(Layout2d {
            ptr: raw.ptr,
            device: raw.device,
            rows,
            cols,
            row_pitch,
            col_step: 1,
        }),
        _ => Err(Error::InvalidShape {
            reason: format!(
                "a {rows} x {cols} region needs more elements than the buffer's {}",
                raw.len
            ),
        }),
    }
}

/// One end of a region copy: its first element, and the bytes between rows
/// and between elements of a row.
#[derive(Clone, Copy)]
struct Strided {
    at: Memory2d,
    row_pitch: usize,
    element_pitch: usize,
}

impl Strided {
    fn offset(self, bytes: usize) -> Memory2d {
        match self.at {
            Memory2d::Host(p) => Memory2d::Host(p.wrapping_add(bytes)),
            Memory2d::Device(d) => Memory2d::Device(d + bytes as u64),
        }
    }
}

fn device_end<T>(layout: &Layout2d) -> Strided {
    Strided {
        at: Memory2d::Device(layout.ptr),
        row_pitch: layout.row_pitch,
        element_pitch: layout.col_step * size_of::<T>(),
    }
}

fn host_end<T>(ptr: *mut T, cols: usize) -> Strided {
    Strided {
        at: Memory2d::Host(ptr.cast()),
        row_pitch: cols * size_of::<T>(),
        element_pitch: size_of::<T>(),
    }
}

/// The pitch error, if `pitch` is past what a 2-D copy takes.
fn check_pitch(pitch: usize) -> Result<()> {
    if pitch > MAX_PITCH {
        return Err(Error::InvalidCopy2d {
            reason: format!("a pitch of {pitch} bytes, past the {MAX_PITCH} a 2-D copy takes"),
        });
    }
    Ok(())
}

/// The 2-D copies that move `rows x cols` elements from `src` to `dst`: one
/// where both ends' rows are contiguous, else one per row (or per column,
/// when there are fewer), each element a row of the copy; an error naming a
/// pitch past what a copy takes.
fn plan<T>(src: Strided, dst: Strided, rows: usize, cols: usize) -> Result<Vec<Copy2d>> {
    let element = size_of::<T>();
    let copy = |src: Memory2d, src_pitch, dst: Memory2d, dst_pitch, width_bytes, rows| {
        // One row's pitch is never used: the row's width keeps it in range.
        let (src_pitch, dst_pitch) = if rows <= 1 {
            (width_bytes, width_bytes)
        } else {
            (src_pitch, dst_pitch)
        };
        check_pitch(src_pitch)?;
        check_pitch(dst_pitch)?;
        Ok(Copy2d {
            src: End2d {
                at: src,
                pitch: src_pitch,
            },
            dst: End2d {
                at: dst,
                pitch: dst_pitch,
            },
            width_bytes,
            rows,
        })
    };
    if src.element_pitch == element && dst.element_pitch == element {
        Ok(vec![copy(
            src.at,
            src.row_pitch,
            dst.at,
            dst.row_pitch,
            cols * element,
            rows,
        )?])
    } else if rows <= cols {
        (0..rows)
            .map(|r| {
                copy(
                    src.offset(r * src.row_pitch),
                    src.element_pitch,
                    dst.offset(r * dst.row_pitch),
                    dst.element_pitch,
                    element,
                    cols,
                )
            })
            .collect()
    } else {
        (0..cols)
            .map(|c| {
                copy(
                    src.offset(c * src.element_pitch),
                    src.row_pitch,
                    dst.offset(c * dst.element_pitch),
                    dst.row_pitch,
                    element,
                    rows,
                )
            })
            .collect()
    }
}

/// Queues `copies` on `stream`.
///
/// # Safety
/// Each copy's ends hold its rows at their pitches, allocated (and untouched
/// by the host) until the copies have completed, and do not overlap.
unsafe fn queue(copies: &[Copy2d], stream: &Stream) -> std::result::Result<(), DriverError> {
    for copy in copies {
        // SAFETY: forwarded to the caller.
        unsafe { driver().copy_2d_async(copy, stream.handle()) }?;
    }
    Ok(())
}
