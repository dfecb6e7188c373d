//! Tensor maps (`gpu_runtime::TensorMap`): a tiled view of a buffer, checked
//! against the buffer before the driver encodes it (`cuTensorMapEncodeTiled`
//! on a GPU, the simulator's own encoding here). A map of a dropped buffer
//! does not compile (`tests/ui/runtime_api/tensor_map_of_dropped_buffer.rs`).

use gpu_device::bf16;
use gpu_runtime::{DeviceBuffer, Error, Stream, Swizzle, TensorMap, TensorMapLayout};

fn reason(e: Error) -> String {
    match e {
        Error::InvalidArgument { reason, .. } => reason,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn a_matrix_map_is_encoded_with_the_buffers_shape() {
    let stream = Stream::new().unwrap();
    // 100 x 72 bf16, rows 80 elements (160 bytes) apart.
    let buffer = DeviceBuffer::<bf16>::zeroed_on(99 * 80 + 72, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (100, 72, 80), (32, 64), Swizzle::Bytes128).unwrap();
    assert_eq!(map.layout().dims(), [72, 100]);
    assert_eq!(map.layout().stride_bytes(), [2, 160]);
    assert_eq!(map.layout().box_dims(), [64, 32]);
    assert_eq!(map.layout().box_bytes(), 64 * 32 * 2);
    assert_eq!(map.device(), buffer.device());
}

#[test]
fn maps_that_do_not_fit_their_buffer_are_refused() {
    let stream = Stream::new().unwrap();
    let buffer = DeviceBuffer::<f32>::zeroed_on(64 * 64, &stream).unwrap();
    // One row too many.
    let long = TensorMap::matrix(&buffer, (65, 64, 64), (16, 16), Swizzle::None);
    let long = reason(long.err().unwrap());
    assert!(
        long.contains("names elements up to 4159 of a buffer of 4096"),
        "{long}"
    );
    // Rows not 16 bytes apart (62 f32), rows closer than their length.
    let odd = TensorMap::matrix(&buffer, (8, 64, 62), (16, 16), Swizzle::None);
    let odd = reason(odd.err().unwrap());
    assert!(
        odd.contains("stride of dimension 1 is 62 elements of 4 bytes"),
        "{odd}"
    );
    let overlap = TensorMap::matrix(&buffer, (8, 64, 60), (16, 16), Swizzle::None);
    let overlap = reason(overlap.err().unwrap());
    assert!(
        overlap.contains("rows of 64 elements cannot be 60 apart"),
        "{overlap}"
    );
    // A box row wider than the swizzle's span (32 f32 = 128 bytes > 64).
    let wide = TensorMap::matrix(&buffer, (64, 64, 64), (8, 32), Swizzle::Bytes64);
    let wide = reason(wide.err().unwrap());
    assert!(
        wide.contains("more than the 64-byte span of Bytes64"),
        "{wide}"
    );
    // A layout of another element type.
    let layout = TensorMapLayout::tiled::<u32>(&[64, 64], &[64], &[16, 16], Swizzle::None).unwrap();
    let other = reason(TensorMap::new(&buffer, layout).err().unwrap());
    assert!(other.contains("the buffer's are `f32`"), "{other}");
}
