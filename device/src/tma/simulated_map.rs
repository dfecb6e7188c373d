//! The simulator's encoding of a tensor map, in the 128 bytes a GPU's
//! `CUtensorMap` takes: written by the runtime's simulator backend when it
//! encodes a map, read back by the simulated bulk copies. Described here
//! once, for both.

/// The first word of a map the simulator encoded.
const MAGIC: u64 = 0x746d_6170_7369_6d31;

/// A tensor map as the simulator encodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimulatedMap {
    /// The tensor's first element.
    pub address: u64,
    /// `CUtensorMapDataType`.
    pub data_type: u32,
    /// Bytes of an element.
    pub element_bytes: u32,
    /// The number of dimensions.
    pub rank: u32,
    /// Extents, innermost first (1 past the rank).
    pub dims: [u64; 5],
    /// Strides in bytes, the first the element's size.
    pub strides: [u64; 5],
    /// The box's extents, innermost first (1 past the rank).
    pub boxes: [u32; 5],
    /// `CUtensorMapSwizzle`.
    pub swizzle: u32,
}

impl SimulatedMap {
    /// The map in words: the marker, the address, `data_type |
    /// element_bytes << 8 | rank << 16 | swizzle << 24`, the five extents,
    /// the four strides past the first, then the box's extents in 16 bits
    /// each.
    pub fn encode(&self) -> [u64; 16] {
        let mut words = [0u64; 16];
        words[0] = MAGIC;
        words[1] = self.address;
        words[2] = u64::from(self.data_type)
            | u64::from(self.element_bytes) << 8
            | u64::from(self.rank) << 16
            | u64::from(self.swizzle) << 24;
        words[3..8].copy_from_slice(&self.dims);
        words[8..12].copy_from_slice(&self.strides[1..]);
        for (i, &b) in self.boxes.iter().enumerate() {
            words[12 + i / 4] |= u64::from(b) << (16 * (i % 4));
        }
        words
    }

    /// The map `words` encode; `None` unless the simulator encoded them.
    pub fn decode(words: &[u64; 16]) -> Option<SimulatedMap> {
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
        Some(SimulatedMap {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_reads_back_as_it_was_encoded() {
        let map = SimulatedMap {
            address: 0x7f00_0000_1000,
            data_type: 9,
            element_bytes: 2,
            rank: 3,
            dims: [100, 30, 7, 1, 1],
            strides: [2, 208, 208 * 30, 208 * 30 * 7, 208 * 30 * 7],
            boxes: [64, 16, 2, 1, 1],
            swizzle: 3,
        };
        assert_eq!(SimulatedMap::decode(&map.encode()), Some(map));
        assert_eq!(SimulatedMap::decode(&[0; 16]), None);
    }
}
