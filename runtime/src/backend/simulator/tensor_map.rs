//! The simulator's tensor maps: the request itself, in the 128 bytes a
//! GPU's encoded map takes, for its bulk copies to read back (the encoding
//! is `gpu_device::tma::simulated_map`'s, which those copies decode).

use super::super::{EncodedTensorMap, TensorMapRequest};
use gpu_device::tma::simulated_map::SimulatedMap;

/// `map` in the simulator's encoding.
pub(super) fn encode(map: &TensorMapRequest) -> EncodedTensorMap {
    EncodedTensorMap(
        SimulatedMap {
            address: map.address,
            data_type: map.data_type,
            element_bytes: map.element_bytes,
            rank: map.rank,
            dims: map.dims,
            strides: map.strides,
            boxes: map.boxes,
            swizzle: map.swizzle,
        }
        .encode(),
    )
}
