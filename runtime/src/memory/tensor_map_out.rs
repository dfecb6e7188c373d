//! Output tensor maps: [`TensorMapOut`], a [`TensorMapLayout`] of a buffer
//! a kernel writes through bulk tensor stores
//! (`gpu_device::tma::TensorMapOut`), made from a mutable borrow of it.

use super::tensor_map::{encode_on_device, TensorElement, TensorMapLayout};
use crate::{DeviceBuffer, Error, Result};

/// The most an output map's extent may be: the device computes each
/// block's box coordinates as 32-bit signed integers, as the copy takes.
pub const MAX_OUT_EXTENT: u64 = 1 << 31;

/// A tiled [`TensorMapLayout`] of a device buffer that a kernel writes by
/// bulk tensor stores, each block into its own box: a
/// `gpu_device::tma::TensorMapOut<T, B, S>` parameter. It borrows the
/// buffer mutably, so no other argument of a launch reaches the buffer,
/// and the launcher tracks the kernel's access as a write of it.
///
/// Besides [`TensorMap`](crate::TensorMap)'s checks, the layout must name
/// each element once: each dimension's stride is at least the span of the
/// dimensions inside it (`stride[d] >= extent[d - 1] * stride[d - 1]`,
/// innermost first), so that two blocks' disjoint boxes are disjoint in
/// memory; and its extents are at most 2^31 (the box coordinates are 32-bit
/// signed).
pub struct TensorMapOut<'a, T: TensorElement> {
    buffer: &'a mut DeviceBuffer<T>,
    layout: TensorMapLayout,
    /// The encoded map, then the number of boxes along each dimension
    /// (innermost first, 1 past the rank), which the device reads to find
    /// each block's box.
    encoded: std::sync::Arc<DeviceBuffer<u64>>,
}

fn invalid(reason: String) -> Error {
    Error::InvalidArgument {
        operation: "TensorMapOut::new",
        reason,
    }
}

impl<'a, T: TensorElement> TensorMapOut<'a, T> {
    /// `layout` over `buffer`, for stores. An error when the layout was
    /// made for another element type, names elements outside the buffer,
    /// names an element by two coordinates, or has an extent past 2^31, or
    /// the buffer is not 16-byte aligned.
    pub fn new(buffer: &'a mut DeviceBuffer<T>, layout: TensorMapLayout) -> Result<Self> {
        layout.check_element::<T>("TensorMapOut::new")?;
        let (dims, strides) = (layout.dims(), layout.stride_bytes());
        for (d, &extent) in dims.iter().enumerate() {
            if extent > MAX_OUT_EXTENT {
                return Err(invalid(format!(
                    "extent {extent} of dimension {d} is past 2^31: an output map's box coordinates are 32-bit signed"
                )));
            }
        }
        // The copy engine stores a row's last 16 bytes whole (an H100 wrote
        // the elements past a 21-element f32 row up to element 23, into the
        // pad): rows of whole 16-byte chunks only, so that nothing past the
        // tensor is written.
        let row = dims[0] * strides[0];
        if !row.is_multiple_of(16) {
            return Err(invalid(format!(
                "the innermost extent is {} elements, {row} bytes: an output map's rows are a multiple of 16 bytes, since the bulk tensor store writes a row's last 16-byte chunk whole, past the extent",
                dims[0]
            )));
        }
        for d in 1..dims.len() {
            let inside = u128::from(dims[d - 1]) * u128::from(strides[d - 1]);
            if u128::from(strides[d]) < inside {
                return Err(invalid(format!(
                    "the stride of dimension {d} is {} bytes, less than the {inside} bytes of dimension {} inside it ({} elements {} bytes apart): two coordinates would name one element, and two blocks' boxes could overlap",
                    strides[d],
                    d - 1,
                    dims[d - 1],
                    strides[d - 1]
                )));
            }
        }
        layout.check_memory(buffer.as_raw(), buffer.len())?;
        let mut counts = [1u64; gpu_device::tma::__BOX_COUNT_WORDS];
        for (d, (&extent, &b)) in dims.iter().zip(layout.box_dims()).enumerate() {
            counts[d] = extent.div_ceil(u64::from(b));
        }
        let encoded = encode_on_device(buffer, &layout, &counts)?;
        Ok(TensorMapOut {
            buffer,
            layout,
            encoded,
        })
    }

    /// The layout.
    pub fn layout(&self) -> &TensorMapLayout {
        &self.layout
    }

    /// The ordinal of the device holding the buffer.
    pub fn device(&self) -> usize {
        self.buffer.device()
    }

    /// The number of boxes along each dimension, innermost first: a launch
    /// with at least their product of blocks writes every box.
    pub fn box_counts(&self) -> Vec<u64> {
        self.layout
            .dims()
            .iter()
            .zip(self.layout.box_dims())
            .map(|(&e, &b)| e.div_ceil(u64::from(b)))
            .collect()
    }

    /// The buffer, for the launcher to track as written.
    pub(crate) fn buffer_mut(&mut self) -> &mut &'a mut DeviceBuffer<T> {
        &mut self.buffer
    }

    /// The encoded map's device copy, which kernels read (by its address).
    pub(crate) fn encoded(&self) -> &DeviceBuffer<u64> {
        &self.encoded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Stream, Swizzle};

    fn reason(e: Error) -> String {
        match e {
            Error::InvalidArgument { reason, .. } => reason,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    /// Attack: rows 16 bytes apart of 8 `f32` (32 bytes): row r's second
    /// half is row r + 1's first, so two blocks storing rows 0 and 1 would
    /// write the same elements. Refused for stores (a load map may alias).
    #[test]
    fn an_output_map_whose_coordinates_alias_is_refused() {
        let stream = Stream::new().unwrap();
        let mut buffer = DeviceBuffer::<f32>::zeroed_on(1024, &stream).unwrap();
        let aliasing =
            TensorMapLayout::tiled::<f32>(&[8, 16], &[4], &[8, 1], Swizzle::None).unwrap();
        let e = reason(TensorMapOut::new(&mut buffer, aliasing).err().unwrap());
        assert!(
            e.contains(
                "the stride of dimension 1 is 16 bytes, less than the 32 bytes of dimension 0"
            ),
            "{e}"
        );
        let three =
            TensorMapLayout::tiled::<f32>(&[8, 4, 4], &[8, 16], &[8, 1, 1], Swizzle::None).unwrap();
        let e = reason(TensorMapOut::new(&mut buffer, three).err().unwrap());
        assert!(
            e.contains("stride of dimension 2 is 64 bytes, less than the 128"),
            "{e}"
        );
        let fine =
            TensorMapLayout::tiled::<f32>(&[8, 4, 4], &[8, 32], &[8, 2, 1], Swizzle::None).unwrap();
        let map = TensorMapOut::new(&mut buffer, fine).unwrap();
        assert_eq!(map.box_counts(), [1, 2, 4]);
    }

    /// The GPU's store writes a row's last 16-byte chunk whole (measured
    /// on an H100: elements 21..24 of a 21-element f32 row written): a row
    /// off 16 bytes is refused, naming the rule.
    #[test]
    fn an_output_map_whose_rows_end_off_16_bytes_is_refused() {
        let stream = Stream::new().unwrap();
        let mut buffer = DeviceBuffer::<f32>::zeroed_on(1024, &stream).unwrap();
        let ragged =
            TensorMapLayout::tiled::<f32>(&[21, 10], &[32], &[16, 8], Swizzle::None).unwrap();
        let e = reason(TensorMapOut::new(&mut buffer, ragged).err().unwrap());
        assert!(
            e.contains("the innermost extent is 21 elements, 84 bytes: an output map's rows are a multiple of 16 bytes"),
            "{e}"
        );
        let whole =
            TensorMapLayout::tiled::<f32>(&[24, 10], &[32], &[16, 8], Swizzle::None).unwrap();
        assert!(TensorMapOut::new(&mut buffer, whole).is_ok());
    }

    #[test]
    fn an_output_map_of_another_element_type_or_past_the_buffer_is_refused() {
        let stream = Stream::new().unwrap();
        let mut buffer = DeviceBuffer::<f32>::zeroed_on(64, &stream).unwrap();
        let bytes = TensorMapLayout::tiled::<u32>(&[8, 8], &[8], &[8, 8], Swizzle::None).unwrap();
        let e = reason(TensorMapOut::new(&mut buffer, bytes).err().unwrap());
        assert!(e.contains("the buffer's are `f32`"), "{e}");
        let long = TensorMapLayout::tiled::<f32>(&[8, 9], &[8], &[8, 8], Swizzle::None).unwrap();
        let e = reason(TensorMapOut::new(&mut buffer, long).err().unwrap());
        assert!(
            e.contains("names elements up to 71 of a buffer of 64"),
            "{e}"
        );
        let wide =
            TensorMapLayout::tiled::<u8>(&[(1 << 31) + 16], &[], &[16], Swizzle::None).unwrap();
        let mut bytes = DeviceBuffer::<u8>::zeroed_on(16, &stream).unwrap();
        let e = reason(TensorMapOut::new(&mut bytes, wide).err().unwrap());
        assert!(e.contains("is past 2^31"), "{e}");
    }
}
