//! The simulator's tensor maps: the request itself, in the 128 bytes a
//! GPU's encoded map takes, for its bulk copies to read back.

use super::super::{EncodedTensorMap, TensorMapRequest};

/// The first word of a map the simulator encoded.
const MAGIC: u64 = 0x746d_6170_7369_6d31;

/// `map` in words: the marker, the address, `data_type | element_bytes <<
/// 8 | rank << 16 | swizzle << 24`, the five extents, the four strides
/// past the first, then the box's extents in 16 bits each.
pub(super) fn encode(map: &TensorMapRequest) -> EncodedTensorMap {
    let mut words = [0u64; 16];
    words[0] = MAGIC;
    words[1] = map.address;
    words[2] = u64::from(map.data_type)
        | u64::from(map.element_bytes) << 8
        | u64::from(map.rank) << 16
        | u64::from(map.swizzle) << 24;
    words[3..8].copy_from_slice(&map.dims);
    words[8..12].copy_from_slice(&map.strides[1..]);
    for (i, &b) in map.boxes.iter().enumerate() {
        words[12 + i / 4] |= u64::from(b) << (16 * (i % 4));
    }
    EncodedTensorMap(words)
}

/// The request a map the simulator encoded describes; `None` for anything
/// else.
#[allow(dead_code)]
pub(crate) fn decode(map: &EncodedTensorMap) -> Option<TensorMapRequest> {
    let words = &map.0;
    if words[0] != MAGIC {
        return None;
    }
    let field = |shift: u32| (words[2] >> shift & 0xff) as u32;
    let element_bytes = field(8);
    let mut strides = [0u64; 5];
    strides[0] = u64::from(element_bytes);
    strides[1..].copy_from_slice(&words[8..12]);
    let mut boxes = [0u32; 5];
    for (i, b) in boxes.iter_mut().enumerate() {
        *b = (words[12 + i / 4] >> (16 * (i % 4)) & 0xffff) as u32;
    }
    Some(TensorMapRequest {
        address: words[1],
        data_type: field(0),
        element_bytes,
        rank: field(16),
        dims: words[3..8].try_into().ok()?,
        strides,
        boxes,
        swizzle: field(24),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_reads_back_as_it_was_encoded() {
        let request = TensorMapRequest {
            address: 0x7f00_0000_1000,
            data_type: 9,
            element_bytes: 2,
            rank: 3,
            dims: [100, 30, 7, 1, 1],
            strides: [2, 208, 208 * 30, 208 * 30 * 7, 208 * 30 * 7],
            boxes: [64, 16, 2, 1, 1],
            swizzle: 3,
        };
        assert_eq!(decode(&encode(&request)), Some(request));
        assert_eq!(decode(&EncodedTensorMap([0; 16])), None);
    }
}
