//! Tensor maps for the bulk tensor copies: `cuTensorMapEncodeTiled`
//! (CUDA 12.0; an older driver lacks it, an error naming it).

use super::super::{DriverError, EncodedTensorMap, TensorMapRequest};
use super::call::check;
use super::ffi::*;

/// Encodes `map` (checked by the runtime: rank 1 to 5, extents, strides,
/// box and swizzle in the driver's ranges), with no context needed.
pub(super) fn encode(map: &TensorMapRequest) -> Result<EncodedTensorMap, DriverError> {
    let mut out = TensorMapBytes([0; 16]);
    let element_strides = [1u32; 5];
    // SAFETY: `out` is 128 writable, 64-byte aligned bytes; `dims`,
    // `boxes` and `element_strides` hold `rank <= 5` entries and `strides`
    // `rank - 1` past its first (the driver reads no more); the address is
    // only recorded, not accessed.
    let status = unsafe {
        cuTensorMapEncodeTiled(
            &mut out,
            map.data_type,
            map.rank,
            map.address as *mut std::ffi::c_void,
            map.dims.as_ptr(),
            map.strides[1..].as_ptr(),
            map.boxes.as_ptr(),
            element_strides.as_ptr(),
            TENSOR_MAP_INTERLEAVE_NONE,
            map.swizzle,
            TENSOR_MAP_L2_PROMOTION_256B,
            TENSOR_MAP_OOB_FILL_NONE,
        )
    };
    check("cuTensorMapEncodeTiled", status)?;
    Ok(EncodedTensorMap(out.0))
}
