//! Tensor maps: the description of a tiled view of a device buffer that the
//! bulk tensor copy engine (TMA, sm_90) reads, `cuTensorMapEncodeTiled`'s
//! arguments, checked here before the driver sees them.
//!
//! [`TensorMapLayout`] is the shape alone: up to five dimensions (the first
//! the innermost, whose elements are adjacent), the strides of the others
//! in elements, the box (the tile one copy moves), and the swizzle of the
//! box's rows in shared memory. [`TensorMap`] is a layout of one buffer,
//! borrowing it: a map of a buffer since dropped does not compile.
//!
//! [`TensorMapLayout`] lists the checks.

use crate::backend::{driver, EncodedTensorMap, TensorMapRequest};
use crate::{DeviceBuffer, Error, Result};
use gpu_device::{bf16, f16};
use std::sync::Arc;

/// How the rows of a box are laid out in shared memory: 16-byte chunks of
/// each row exchanged (XOR with the row index) within a span, so that reads
/// of a column hit different banks. The shared tile a copy lands in must be
/// aligned to the swizzle's pattern (see [`Swizzle::tile_align`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// Rows as they are.
    None,
    /// Chunks swizzled within 32 bytes.
    Bytes32,
    /// Within 64 bytes.
    Bytes64,
    /// Within 128 bytes (what `wgmma`'s 128-byte layouts read).
    Bytes128,
}

impl Swizzle {
    /// The span, in bytes, a box row may not exceed (`None`: no limit).
    pub fn span(self) -> Option<u32> {
        match self {
            Swizzle::None => None,
            Swizzle::Bytes32 => Some(32),
            Swizzle::Bytes64 => Some(64),
            Swizzle::Bytes128 => Some(128),
        }
    }

    /// The alignment, in bytes, of the shared tile a box lands in: the
    /// swizzle's pattern repeats every 8 spans (128 bytes without one).
    pub fn tile_align(self) -> usize {
        match self.span() {
            None => 128,
            Some(span) => 8 * span as usize,
        }
    }

    /// `CUtensorMapSwizzle`.
    pub(crate) fn driver_value(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::Bytes32 => 1,
            Swizzle::Bytes64 => 2,
            Swizzle::Bytes128 => 3,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type a tensor map can describe, with its
/// `CUtensorMapDataType`.
pub trait TensorElement: gpu_device::DeviceCopy + sealed::Sealed {
    /// `CUtensorMapDataType`.
    #[doc(hidden)]
    const DATA_TYPE: u32;
}

macro_rules! tensor_elements {
    ($($t:ty => $v:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl TensorElement for $t {
            const DATA_TYPE: u32 = $v;
        }
    )*};
}
tensor_elements!(
    u8 => 0, u16 => 1, u32 => 2, i32 => 3, u64 => 4, i64 => 5,
    f16 => 6, f32 => 7, f64 => 8, bf16 => 9,
);

/// Most dimensions a tensor map has.
pub const MAX_RANK: usize = 5;
/// Most elements a box has in a dimension.
pub const MAX_BOX: u32 = 256;

/// The shape of a tiled tensor map, checked. Each check is one the driver
/// or the hardware makes too, or one a safe copy needs, and each failure
/// names the value and the rule:
///
/// - 1 to 5 dimensions, each extent in `1 ..= 2^32`, each stride a multiple
///   of 16 bytes below 2^40 bytes (the driver's rules);
/// - a box of 1 to 256 elements in each dimension, its inner extent a
///   multiple of 16 bytes and, with a swizzle, at most the swizzle's span
///   (32, 64 or 128 bytes);
/// - ([`check_memory`](Self::check_memory), [`TensorMap::new`]) the
///   buffer's address 16-byte aligned, and every element the map can name
///   inside the buffer (`sum((extent - 1) * stride) + 1 <= len`), so that
///   no copy through the map reaches memory the buffer does not own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapLayout {
    rank: usize,
    /// Extents, innermost first.
    dims: [u64; MAX_RANK],
    /// Strides in bytes; `strides[0]` is the element's size.
    strides: [u64; MAX_RANK],
    /// Box extents, innermost first.
    boxes: [u32; MAX_RANK],
    element_bytes: u32,
    data_type: u32,
    swizzle: Swizzle,
}

fn invalid(reason: String) -> Error {
    Error::InvalidArgument {
        operation: "TensorMapLayout::tiled",
        reason,
    }
}

impl TensorMapLayout {
    /// A tiled layout of elements `T`: `dims` the extents (innermost first),
    /// `strides` the distance in elements between neighbours along each
    /// dimension but the first (one fewer than `dims`), `boxes` the box's
    /// extents, `swizzle` its rows' layout in shared memory. An error names
    /// the first value that breaks a rule (see the type).
    pub fn tiled<T: TensorElement>(
        dims: &[u64],
        strides: &[u64],
        boxes: &[u32],
        swizzle: Swizzle,
    ) -> Result<Self> {
        let rank = dims.len();
        let element = core::mem::size_of::<T>() as u64;
        if rank == 0 || rank > MAX_RANK {
            return Err(invalid(format!(
                "a tensor map has 1 to {MAX_RANK} dimensions, not {rank}"
            )));
        }
        if strides.len() + 1 != rank || boxes.len() != rank {
            return Err(invalid(format!(
                "{rank} dimensions take {} strides (all dimensions but the first) and {rank} box extents, not {} and {}",
                rank - 1,
                strides.len(),
                boxes.len()
            )));
        }
        let mut layout = TensorMapLayout {
            rank,
            dims: [1; MAX_RANK],
            strides: [0; MAX_RANK],
            boxes: [1; MAX_RANK],
            element_bytes: element as u32,
            data_type: T::DATA_TYPE,
            swizzle,
        };
        for (i, &d) in dims.iter().enumerate() {
            if d == 0 || d > 1 << 32 {
                return Err(invalid(format!(
                    "extent {d} of dimension {i} is outside 1 ..= 2^32"
                )));
            }
            layout.dims[i] = d;
        }
        layout.strides[0] = element;
        for (i, &s) in strides.iter().enumerate() {
            let bytes = s.checked_mul(element).filter(|&b| b < 1 << 40);
            match bytes {
                Some(b) if b.is_multiple_of(16) && b > 0 => layout.strides[i + 1] = b,
                _ => {
                    return Err(invalid(format!(
                        "the stride of dimension {} is {s} elements of {element} bytes: a tensor map's strides are positive multiples of 16 bytes below 2^40",
                        i + 1
                    )))
                }
            }
        }
        for (i, &b) in boxes.iter().enumerate() {
            if b == 0 || b > MAX_BOX {
                return Err(invalid(format!(
                    "box extent {b} of dimension {i} is outside 1 ..= {MAX_BOX}"
                )));
            }
            layout.boxes[i] = b;
        }
        let row = u64::from(boxes[0]) * element;
        if !row.is_multiple_of(16) {
            return Err(invalid(format!(
                "the box's rows are {row} bytes ({} elements of {element}): a multiple of 16 bytes",
                boxes[0]
            )));
        }
        if let Some(span) = swizzle.span() {
            if row > u64::from(span) {
                return Err(invalid(format!(
                    "the box's rows are {row} bytes, more than the {span}-byte span of {swizzle:?}"
                )));
            }
        }
        Ok(layout)
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The extents, innermost first.
    pub fn dims(&self) -> &[u64] {
        &self.dims[..self.rank]
    }

    /// The box's extents, innermost first.
    pub fn box_dims(&self) -> &[u32] {
        &self.boxes[..self.rank]
    }

    /// The strides in bytes, innermost first (the first is the element's
    /// size).
    pub fn stride_bytes(&self) -> &[u64] {
        &self.strides[..self.rank]
    }

    /// The swizzle.
    pub fn swizzle(&self) -> Swizzle {
        self.swizzle
    }

    /// The bytes one copy of a whole box moves (out-of-bounds elements
    /// included: they are filled with zeros, and counted): what a barrier
    /// expects of it.
    pub fn box_bytes(&self) -> u32 {
        self.box_dims().iter().product::<u32>() * self.element_bytes
    }

    /// An error naming both unless the layout was made for elements `T`.
    pub(crate) fn check_element<T: TensorElement>(&self, operation: &'static str) -> Result<()> {
        if self.data_type != T::DATA_TYPE
            || self.element_bytes as usize != core::mem::size_of::<T>()
        {
            return Err(Error::InvalidArgument {
                operation,
                reason: format!(
                    "the layout is of elements of type {} ({} bytes), the buffer's are `{}`",
                    self.data_type,
                    self.element_bytes,
                    core::any::type_name::<T>()
                ),
            });
        }
        Ok(())
    }

    /// The driver's request for this layout of memory at `address`.
    pub(crate) fn request(&self, address: u64) -> TensorMapRequest {
        TensorMapRequest {
            address,
            data_type: self.data_type,
            element_bytes: self.element_bytes,
            rank: self.rank as u32,
            dims: self.dims,
            strides: self.strides,
            boxes: self.boxes,
            swizzle: self.swizzle.driver_value(),
        }
    }

    /// Elements from the first to one past the last the map can name. In
    /// 128 bits: an extent below 2^32 times a stride below 2^40 bytes, five
    /// times, cannot overflow it, where 64 bits wrap (a map of 2^28 + 1
    /// rows 2^36 bytes apart would span 0 bytes and pass any buffer).
    pub fn span_elements(&self) -> u128 {
        let last: u128 = self
            .dims()
            .iter()
            .zip(self.stride_bytes())
            .map(|(&d, &s)| u128::from(d - 1) * u128::from(s))
            .sum();
        last / u128::from(self.element_bytes) + 1
    }

    /// Checks the layout against memory of `len` elements at `address`: an
    /// error unless the address is 16-byte aligned and every element the
    /// map names is inside.
    pub fn check_memory(&self, address: u64, len: usize) -> Result<()> {
        if !address.is_multiple_of(16) {
            return Err(invalid(format!(
                "the buffer's address {address:#x} is not 16-byte aligned, as a tensor map needs"
            )));
        }
        let span = self.span_elements();
        if span > len as u128 {
            return Err(invalid(format!(
                "the map names elements up to {} of a buffer of {len}: extents {:?} with strides {:?} bytes do not fit",
                span - 1,
                self.dims(),
                self.stride_bytes()
            )));
        }
        Ok(())
    }
}

/// A tiled [`TensorMapLayout`] of a device buffer, checked against it:
/// the buffer's element type, alignment and length. It borrows the buffer,
/// so the buffer outlives every use of the map.
///
/// A kernel takes it as a `gpu_device::tma::TensorMap2d<T, ROWS, COLS, S>`
/// parameter: the launcher checks the map's box and swizzle against the
/// type, and tracks the kernel's reads of the buffer as any input's.
pub struct TensorMap<'a, T: TensorElement> {
    buffer: &'a DeviceBuffer<T>,
    layout: TensorMapLayout,
    /// The encoded map (`cuTensorMapEncodeTiled`) in the buffer's device's
    /// global memory, 64-byte aligned, written once (shared by the maps
    /// that encode alike: `encoded_maps.rs`): kernels receive its address
    /// (see `gpu_device::tma::TensorMap2d` for why not the map by value).
    encoded: Arc<DeviceBuffer<u64>>,
}

impl<'a, T: TensorElement> TensorMap<'a, T> {
    /// `layout` over `buffer`. An error when the layout was made for
    /// another element type, or names elements outside the buffer, or the
    /// buffer is not 16-byte aligned.
    pub fn new(buffer: &'a DeviceBuffer<T>, layout: TensorMapLayout) -> Result<Self> {
        layout.check_element::<T>("TensorMap::new")?;
        layout.check_memory(buffer.as_raw(), buffer.len())?;
        let encoded = encode_on_device(buffer, &layout, &[])?;
        Ok(TensorMap {
            buffer,
            layout,
            encoded,
        })
    }

    /// A row-major matrix of `rows` rows of `cols` elements, `ld` elements
    /// apart, in boxes of `box_rows` rows of `box_cols` elements.
    pub fn matrix(
        buffer: &'a DeviceBuffer<T>,
        (rows, cols, ld): (usize, usize, usize),
        (box_rows, box_cols): (u32, u32),
        swizzle: Swizzle,
    ) -> Result<Self> {
        let layout = TensorMapLayout::tiled::<T>(
            &[cols as u64, rows as u64],
            &[ld as u64],
            &[box_cols, box_rows],
            swizzle,
        )?;
        if ld < cols {
            return Err(invalid(format!(
                "rows of {cols} elements cannot be {ld} apart: they would overlap"
            )));
        }
        Self::new(buffer, layout)
    }

    /// The layout.
    pub fn layout(&self) -> &TensorMapLayout {
        &self.layout
    }

    /// The buffer the map describes.
    pub fn buffer(&self) -> &'a DeviceBuffer<T> {
        self.buffer
    }

    /// The ordinal of the device holding the buffer: a kernel on another
    /// device cannot use the map.
    pub fn device(&self) -> usize {
        self.buffer.device()
    }

    /// The encoded map's device copy, which kernels read (by its address).
    pub(crate) fn encoded(&self) -> &DeviceBuffer<u64> {
        &self.encoded
    }
}

/// `layout` of `buffer` encoded by the driver, followed by `extra` words,
/// in a device copy written before this returns (every later launch reads
/// it whole), 64-byte aligned as the copy engine needs; the copy of an
/// earlier map of the same words where one is kept.
pub(crate) fn encode_on_device<T: TensorElement>(
    buffer: &DeviceBuffer<T>,
    layout: &TensorMapLayout,
    extra: &[u64],
) -> Result<Arc<DeviceBuffer<u64>>> {
    let request = layout.request(buffer.as_raw());
    let EncodedTensorMap(words) = driver()
        .encode_tensor_map(buffer.device(), &request)
        .map_err(Error::from)?;
    let mut words = words.to_vec();
    words.extend_from_slice(extra);
    super::encoded_maps::device_copy(buffer.device(), words, |words| {
        write_on_device(buffer.device(), words)
    })
}

/// `words` in a new device copy on `device`, written before this returns.
fn write_on_device(device: usize, words: &[u64]) -> Result<DeviceBuffer<u64>> {
    // On the device's legacy default stream, not the current one: with
    // `GPU_PER_THREAD_DEFAULT_STREAM=1` that is the thread's per-thread
    // stream, and once a kernel has faulted a thread that made a
    // stream-ordered allocation there never ends (driver 580: README, "The
    // per-thread default stream"), so a program whose map's kernel faulted
    // could not join the thread that made the map.
    let encoded = DeviceBuffer::to_device_sync(words, crate::Stream::legacy_on(device))?;
    if !encoded.as_raw().is_multiple_of(64) {
        return Err(Error::InvalidArgument {
            operation: "TensorMap::new",
            reason: format!(
                "the device copy of the encoded map is at {:#x}, not 64-byte aligned as the copy engine needs",
                encoded.as_raw()
            ),
        });
    }
    Ok(encoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(e: Error) -> String {
        match e {
            Error::InvalidArgument { reason, .. } => reason,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    /// Attack: extents and strides whose span wraps in 64 bits (2^28 rows
    /// 2^36 bytes apart: 2^64 bytes), each within the driver's limits, so
    /// that a buffer of 16 elements would pass and a box at row 1 read 64
    /// GiB past it.
    #[test]
    fn a_span_past_64_bits_is_refused_not_wrapped() {
        let rows = (1u64 << 28) + 1;
        let l = TensorMapLayout::tiled::<f32>(&[16, rows], &[1 << 34], &[16, 1], Swizzle::None)
            .unwrap();
        assert_eq!(l.span_elements(), (1u128 << 62) + 16);
        let e = reason(l.check_memory(0x1000, 16).unwrap_err());
        assert!(e.contains("of a buffer of 16"), "{e}");
    }

    #[test]
    fn a_2d_layout_keeps_its_shape_and_box_bytes() {
        let l = TensorMapLayout::tiled::<bf16>(&[100, 30], &[104], &[64, 16], Swizzle::Bytes128)
            .unwrap();
        assert_eq!(l.dims(), [100, 30]);
        assert_eq!(l.stride_bytes(), [2, 208]);
        assert_eq!(l.box_bytes(), 64 * 16 * 2);
        assert_eq!(l.span_elements(), 29 * 104 + 100);
        assert!(l.check_memory(0x1000, 29 * 104 + 100).is_ok());
        let short = reason(l.check_memory(0x1000, 29 * 104 + 99).unwrap_err());
        assert!(
            short.contains("names elements up to 3115 of a buffer of 3115"),
            "{short}"
        );
        let odd = reason(l.check_memory(0x1008, 1 << 20).unwrap_err());
        assert!(odd.contains("0x1008 is not 16-byte aligned"), "{odd}");
    }

    #[test]
    fn each_rule_names_the_value_that_breaks_it() {
        let cases: [(Result<TensorMapLayout>, &str); 9] = [
            (
                TensorMapLayout::tiled::<f32>(&[], &[], &[], Swizzle::None),
                "1 to 5 dimensions, not 0",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[1; 6], &[4; 5], &[1; 6], Swizzle::None),
                "not 6",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[8, 8], &[], &[4, 4], Swizzle::None),
                "take 1 strides",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[0, 8], &[8], &[4, 4], Swizzle::None),
                "extent 0 of dimension 0",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[8, 8], &[6], &[4, 4], Swizzle::None),
                "stride of dimension 1 is 6 elements of 4 bytes",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[8, 8], &[8], &[4, 257], Swizzle::None),
                "box extent 257 of dimension 1",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[8, 8], &[8], &[2, 4], Swizzle::None),
                "rows are 8 bytes (2 elements of 4)",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[64, 8], &[64], &[64, 4], Swizzle::Bytes128),
                "256 bytes, more than the 128-byte span of Bytes128",
            ),
            (
                TensorMapLayout::tiled::<u8>(&[64, 8], &[64], &[64, 4], Swizzle::Bytes32),
                "64 bytes, more than the 32-byte span",
            ),
        ];
        for (result, expected) in cases {
            let message = reason(result.unwrap_err());
            assert!(
                message.contains(expected),
                "{message} (expected {expected:?})"
            );
        }
    }

    /// Maps of 1, 3 and 5 dimensions: their spans and box bytes, and each
    /// rule's refusal naming the dimension that breaks it.
    #[test]
    fn layouts_of_1_3_and_5_dimensions_are_checked_in_each_dimension() {
        let one = TensorMapLayout::tiled::<f32>(&[100], &[], &[64], Swizzle::None).unwrap();
        assert_eq!(
            (one.rank(), one.box_bytes(), one.span_elements()),
            (1, 256, 100)
        );
        let three =
            TensorMapLayout::tiled::<f32>(&[21, 10, 3], &[24, 248], &[16, 8, 2], Swizzle::None)
                .unwrap();
        assert_eq!(three.stride_bytes(), [4, 96, 992]);
        assert_eq!(three.box_bytes(), 16 * 8 * 2 * 4);
        assert_eq!(three.span_elements(), 2 * 248 + 9 * 24 + 21);
        let five = TensorMapLayout::tiled::<f32>(
            &[12, 5, 3, 3, 3],
            &[16, 80, 240, 720],
            &[8, 4, 2, 2, 2],
            Swizzle::None,
        )
        .unwrap();
        assert_eq!(five.box_dims(), [8, 4, 2, 2, 2]);
        let cases: [(Result<TensorMapLayout>, &str); 4] = [
            (
                TensorMapLayout::tiled::<f32>(
                    &[12, 5, 3, 3, 300],
                    &[16, 80, 240, 720],
                    &[8, 4, 2, 2, 257],
                    Swizzle::None,
                ),
                "box extent 257 of dimension 4",
            ),
            (
                TensorMapLayout::tiled::<f32>(
                    &[12, 5, 3, 3],
                    &[16, 80, 242],
                    &[8, 4, 2, 2],
                    Swizzle::None,
                ),
                "the stride of dimension 3 is 242 elements of 4 bytes",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[21, 10, 3], &[24], &[16, 8, 2], Swizzle::None),
                "3 dimensions take 2 strides",
            ),
            (
                TensorMapLayout::tiled::<f32>(&[21], &[], &[3], Swizzle::None),
                "rows are 12 bytes (3 elements of 4)",
            ),
        ];
        for (result, expected) in cases {
            let message = reason(result.unwrap_err());
            assert!(
                message.contains(expected),
                "{message} (expected {expected:?})"
            );
        }
    }

    #[test]
    fn swizzles_have_the_drivers_values_and_tile_alignments() {
        let all = [
            Swizzle::None,
            Swizzle::Bytes32,
            Swizzle::Bytes64,
            Swizzle::Bytes128,
        ];
        let values: Vec<u32> = all.iter().map(|s| s.driver_value()).collect();
        assert_eq!(values, [0, 1, 2, 3]);
        let aligns: Vec<usize> = all.iter().map(|s| s.tile_align()).collect();
        assert_eq!(aligns, [128, 256, 512, 1024]);
    }
}
