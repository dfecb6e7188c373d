//! Two- and three-dimensional writable views of device memory: what a
//! launcher takes where a kernel writes a `DisjointSlice2d<T>`, a
//! `DisjointSlice2dU32<T>` (a matrix of at most `u32::MAX` elements, which
//! the launcher checks: [`u32_extents`]) or a `DisjointSlice3d<T>`.
//!
//! A view is a [`DeviceViewMut`] (so every hook of a writable view, such as
//! tracking, applies) with extents whose product fits in it.

use crate::error::{Error, Result};
use crate::memory::{
    sealed, AfterAccess, DeviceBuffer, DeviceOutput, DeviceViewMut, GraphMemory, RawView,
};
use crate::stream::Stream;
use gpu_device::DeviceCopy;

/// A writable row-major `rows x cols` view of device memory: the first
/// `rows * cols` elements of the buffer or view it was made from. Pass it
/// where a kernel takes a `DisjointSlice2d<T>` or a `DisjointSlice2dU32<T>`
/// (for which the launch refuses a matrix of more than `u32::MAX` elements).
///
/// ```no_run
/// # use gpu_runtime::{DeviceBuffer, Result};
/// # fn f(out: &mut DeviceBuffer<f32>) -> Result<()> {
/// let view = out.view_2d_mut(480, 640)?; // 480 rows of 640 elements
/// assert_eq!(view.extents(), (480, 640));
/// # Ok(()) }
/// ```
pub struct DeviceView2dMut<'a, T: DeviceCopy> {
    view: DeviceViewMut<'a, T>,
    rows: usize,
    cols: usize,
}

/// A writable `depth x rows x cols` view of device memory, row-major (x
/// fastest): the first `depth * rows * cols` elements. Pass it where a
/// kernel takes a `DisjointSlice3d<T>`.
pub struct DeviceView3dMut<'a, T: DeviceCopy> {
    view: DeviceViewMut<'a, T>,
    depth: usize,
    rows: usize,
    cols: usize,
}

/// The prefix of `view` holding `extents`' product, or an error naming the
/// extents and the length.
fn prefix<'a, T: DeviceCopy>(
    view: DeviceViewMut<'a, T>,
    extents: &[usize],
) -> Result<DeviceViewMut<'a, T>> {
    let shape = extents
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" x ");
    let len = view.len();
    let needed = extents.iter().try_fold(1usize, |n, &e| n.checked_mul(e));
    match needed {
        Some(n) if n <= len => Ok(view
            .into_slice(0..n)
            .expect("a prefix no longer than the view")),
        Some(n) => Err(Error::InvalidShape {
            reason: format!("a {shape} view needs {n} elements, but the buffer holds {len}"),
        }),
        None => Err(Error::InvalidShape {
            reason: format!("a {shape} view has more elements than a usize can count"),
        }),
    }
}

impl<'a, T: DeviceCopy> DeviceViewMut<'a, T> {
    /// This view as a `rows x cols` matrix (its first `rows * cols`
    /// elements); an error naming the sizes when they do not fit.
    pub fn into_2d(self, rows: usize, cols: usize) -> Result<DeviceView2dMut<'a, T>> {
        Ok(DeviceView2dMut {
            view: prefix(self, &[rows, cols])?,
            rows,
            cols,
        })
    }

    /// This view as a `depth x rows x cols` grid; an error naming the sizes
    /// when they do not fit.
    pub fn into_3d(self, depth: usize, rows: usize, cols: usize) -> Result<DeviceView3dMut<'a, T>> {
        Ok(DeviceView3dMut {
            view: prefix(self, &[depth, rows, cols])?,
            depth,
            rows,
            cols,
        })
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// The buffer as a writable `rows x cols` matrix (its first `rows * cols`
    /// elements), for a kernel's `DisjointSlice2d<T>`; an error naming the
    /// sizes when they do not fit.
    pub fn view_2d_mut(&mut self, rows: usize, cols: usize) -> Result<DeviceView2dMut<'_, T>> {
        self.view_mut().into_2d(rows, cols)
    }

    /// The buffer as a writable `depth x rows x cols` grid, for a kernel's
    /// `DisjointSlice3d<T>`; an error naming the sizes when they do not fit.
    pub fn view_3d_mut(
        &mut self,
        depth: usize,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceView3dMut<'_, T>> {
        self.view_mut().into_3d(depth, rows, cols)
    }
}

impl<'a, T: DeviceCopy> DeviceView2dMut<'a, T> {
    /// `(rows, cols)`.
    pub fn extents(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// A shorter-lived view of the same matrix, to pass to one launch and
    /// keep this one.
    pub fn reborrow(&mut self) -> DeviceView2dMut<'_, T> {
        DeviceView2dMut {
            view: self.view.reborrow(),
            rows: self.rows,
            cols: self.cols,
        }
    }

    /// The elements as a flat writable view.
    pub fn into_flat(self) -> DeviceViewMut<'a, T> {
        self.view
    }
}

impl<'a, T: DeviceCopy> DeviceView3dMut<'a, T> {
    /// `(depth, rows, cols)`.
    pub fn extents(&self) -> (usize, usize, usize) {
        (self.depth, self.rows, self.cols)
    }

    /// A shorter-lived view of the same grid.
    pub fn reborrow(&mut self) -> DeviceView3dMut<'_, T> {
        DeviceView3dMut {
            view: self.view.reborrow(),
            depth: self.depth,
            rows: self.rows,
            cols: self.cols,
        }
    }

    /// The elements as a flat writable view.
    pub fn into_flat(self) -> DeviceViewMut<'a, T> {
        self.view
    }
}

/// A matrix argument's element count, rows and columns as `u32`, for a
/// kernel's `DisjointSlice2dU32` (whose offsets are 32-bit); an
/// `InvalidLaunch` error naming the kernel and the parameter when the matrix
/// has more than `u32::MAX` elements.
pub(crate) fn u32_extents(
    (rows, cols): (usize, usize),
    kernel: &'static str,
    parameter: &'static str,
) -> Result<[u32; 3]> {
    // A view's extents have a product that fits in a usize (`prefix`).
    let len = rows.saturating_mul(cols);
    match (u32::try_from(len), u32::try_from(rows), u32::try_from(cols)) {
        (Ok(len), Ok(rows), Ok(cols)) => Ok([len, rows, cols]),
        _ => Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "argument `{parameter}` is a {rows} x {cols} matrix of {len} elements, more than a `DisjointSlice2dU32` can index ({}); a kernel for larger matrices takes a `DisjointSlice2d`",
                u32::MAX
            ),
        }),
    }
}

impl<T: DeviceCopy> sealed::Sealed for DeviceView2dMut<'_, T> {}
impl<T: DeviceCopy> sealed::Sealed for DeviceView3dMut<'_, T> {}

// The views are their flat view to the launcher: same memory, same hooks.
impl<T: DeviceCopy> DeviceOutput<T> for DeviceView2dMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.view.raw_view()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.view.before_device_access(stream)
    }
    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        self.view.after_access_hook()
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.view.graph_memory()
    }
}

impl<T: DeviceCopy> DeviceOutput<T> for DeviceView3dMut<'_, T> {
    fn raw_view(&mut self) -> RawView {
        self.view.raw_view()
    }
    fn before_device_access(&self, stream: &Stream) -> Result<()> {
        self.view.before_device_access(stream)
    }
    fn after_access_hook(&self) -> Option<&dyn AfterAccess> {
        self.view.after_access_hook()
    }
    fn graph_memory(&self) -> Option<GraphMemory> {
        self.view.graph_memory()
    }
}

#[cfg(test)]
mod tests {
    use super::u32_extents;

    #[test]
    fn a_u32_matrix_fits_up_to_u32_max_elements_and_is_refused_past() {
        let max = u32::MAX as usize;
        assert_eq!(u32_extents((3, 4), "k", "out").unwrap(), [12, 3, 4]);
        assert_eq!(
            u32_extents((max, 1), "k", "out").unwrap(),
            [u32::MAX, u32::MAX, 1]
        );
        assert_eq!(u32_extents((0, max), "k", "out").unwrap(), [0, 0, u32::MAX]);
        // 65536 x 65536 = 2^32 elements: one past; never truncated to 0.
        let error = u32_extents((65536, 65536), "transpose", "out").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("`transpose`")
                && message.contains("`out`")
                && message.contains("65536 x 65536")
                && message.contains("DisjointSlice2d"),
            "{message}"
        );
        // Extents that do not fit although the product does (an empty
        // matrix), and products that overflow a usize.
        assert!(u32_extents((max + 1, 0), "k", "out").is_err());
        assert!(u32_extents((usize::MAX, 2), "k", "out").is_err());
    }
}
