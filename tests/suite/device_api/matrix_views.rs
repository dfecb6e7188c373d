//! `Slice2d`, the read-only matrix view of an input slice, and `Shape2d`:
//! on the host (they are plain Rust), and inside kernels on the simulator
//! (or a GPU). The panics a kernel meets (a slice too short, an index off
//! one axis) are in `tests/forced_simulator_short_watchdog.rs`.

use gpu_device::{Shape2d, Slice2d};
use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels as testing;
use std::panic::catch_unwind;

#[test]
fn a_view_reads_row_major_elements_and_rows() {
    let data: Vec<u32> = (0..14).collect();
    let m = Slice2d::new(&data, 3, 4); // 12 of the 14 elements
    assert_eq!((m.rows(), m.cols()), (3, 4));
    assert_eq!(m[(2, 3)], 11);
    assert_eq!(m.row(1), &[4, 5, 6, 7]);
    assert_eq!(m.get(0, 4), None);
    assert_eq!(m.get(1, 2), Some(&6));
    assert_eq!(m.shape(), Shape2d::new(3, 4).unwrap());
}

#[test]
fn an_index_is_checked_per_axis_not_as_an_offset() {
    let data = [0u32; 12];
    let m = Slice2d::new(&data, 3, 4);
    // (0, 4) is offset 4, inside the slice, but outside the matrix.
    let message = catch_unwind(|| m[(0, 4)]).unwrap_err();
    assert_eq!(
        message.downcast_ref::<String>().unwrap(),
        "matrix index out of bounds: the shape is 3 x 4 but the index is (0, 4)"
    );
    assert!(catch_unwind(|| m[(3, 0)]).is_err());
    assert!(catch_unwind(|| m.row(3)).is_err());
}

#[test]
fn a_view_longer_than_its_slice_or_overflowing_is_refused() {
    let data = [0u32; 11];
    assert!(Slice2d::try_new(&data, 3, 4).is_none());
    let message = catch_unwind(|| Slice2d::new(&data, 3, 4)).unwrap_err();
    assert_eq!(
        message.downcast_ref::<String>().unwrap(),
        "a 3 x 4 matrix needs more elements than the slice's 11"
    );
    // Products that wrap to something small must not pass.
    assert!(Shape2d::new(1 << 32, 1 << 32).is_none());
    assert!(Shape2d::new(usize::MAX, 2).is_none());
    assert!(Slice2d::try_new(&data, 1 << 33, 1 << 31).is_none());
    assert!(Slice2d::try_new(&data, (1 << 63) + 1, 2).is_none());
    // A large shape whose product fits is a shape; the view is still refused.
    let big = Shape2d::new(1 << 40, 1 << 20).unwrap();
    assert_eq!(big.len(), 1 << 60);
    assert!(Slice2d::try_with_shape(&data, big).is_none());
    // Empty matrices are fine, even over an empty slice.
    assert!(Slice2d::<u32>::try_new(&[], 0, 1 << 40).is_some());
    assert!(Shape2d::new(usize::MAX, 0).unwrap().is_empty());
}

#[test]
fn a_transposed_shape_swaps_the_extents() {
    let shape = Shape2d::new(3, 5).unwrap();
    assert_eq!(shape.transposed(), Shape2d::new(5, 3).unwrap());
    assert_eq!(shape.transposed().len(), 15);
}

#[test]
fn kernels_read_through_views_with_the_shape_given_or_an_outputs() {
    let stream = Stream::new().unwrap();
    let (rows, cols) = (13usize, 37usize);
    let input: Vec<u32> = (0..(rows * cols) as u32 + 5).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    // out[y][x] = m[(y + 1, x + 2)] over an 12 x 35 output.
    let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; 12 * 35], &stream).unwrap();
    launch!(testing::matrix_read[(3, 2), (16, 8), stream](
        &din,
        rows,
        cols,
        1,
        2,
        out.view_2d_mut(12, 35).unwrap()
    ))
    .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for y in 0..12 {
        for x in 0..35 {
            assert_eq!(
                got[y * 35 + x],
                ((y + 1) * cols + x + 2) as u32,
                "({y}, {x})"
            );
        }
    }
    // The input seen as `out`'s transpose (cols x rows): row x summed, plus y.
    let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &stream).unwrap();
    launch!(testing::transposed_row_sums[(2, 2), (32, 8), stream](
        &din,
        out.view_2d_mut(rows, cols).unwrap()
    ))
    .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for y in 0..rows {
        for x in 0..cols {
            let row_sum: u32 = input[x * rows..x * rows + rows].iter().sum();
            assert_eq!(got[y * cols + x], row_sum + y as u32, "({y}, {x})");
        }
    }
}
