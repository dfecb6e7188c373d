//! The interior witness (`Slice2d::interior`, `Slice2dU32::interior`, giving
//! a `Neighbourhood` whose reads are unchecked) and the 32-bit matrix views
//! (`Shape2dU32`, `Slice2dU32`), attacked on the host where they are plain
//! Rust: every element of every small shape, slices longer than the
//! matrix, indices at the integer limits, extents whose product does not
//! fit. (A `Neighbourhood` made outside the crate, or kept past its data,
//! does not compile: `tests/ui/device_api/neighbourhood_*.rs`. The kernels using them
//! are checked in `tests/suite/kernels/classic.rs`.)

use gpu_device::{Shape2d, Shape2dU32, Slice2d, Slice2dU32};
use std::panic::catch_unwind;

/// The nine values around `(row, col)` of a `rows x cols` row-major matrix
/// in `data`, when all nine are elements; `None` otherwise.
fn reference(data: &[u32], rows: usize, cols: usize, row: usize, col: usize) -> Option<[u32; 9]> {
    let inside = row >= 1 && col >= 1 && row + 1 < rows && col + 1 < cols;
    inside.then(|| std::array::from_fn(|k| data[(row + k / 3 - 1) * cols + (col + k % 3 - 1)]))
}

fn nine(n: gpu_device::Neighbourhood<'_, u32>) -> [u32; 9] {
    [
        *n.up_left(),
        *n.up(),
        *n.up_right(),
        *n.left(),
        *n.centre(),
        *n.right(),
        *n.down_left(),
        *n.down(),
        *n.down_right(),
    ]
}

#[test]
fn interior_is_exactly_the_elements_with_eight_neighbours() {
    for rows in 0..6usize {
        for cols in 0..6usize {
            // Longer than the matrix: the elements past `rows * cols` are
            // never a neighbour.
            let data: Vec<u32> = (0..(rows * cols + 7) as u32).map(|v| v * 3 + 1).collect();
            let m = Slice2d::new(&data, rows, cols);
            let m32 = Slice2dU32::new(&data, rows as u32, cols as u32);
            // Also one row and one column outside.
            for row in 0..=rows {
                for col in 0..=cols {
                    let want = reference(&data, rows, cols, row, col);
                    let what = format!("{rows}x{cols} ({row}, {col})");
                    assert_eq!(m.interior(row, col).map(nine), want, "Slice2d {what}");
                    assert_eq!(
                        m32.interior(row as u32, col as u32).map(nine),
                        want,
                        "Slice2dU32 {what}"
                    );
                }
            }
        }
    }
}

#[test]
fn interior_refuses_indices_at_the_integer_limits() {
    let data: Vec<u32> = (0..25).collect();
    let m = Slice2d::new(&data, 5, 5);
    let m32 = Slice2dU32::new(&data, 5, 5);
    for far in [usize::MAX, usize::MAX - 1, 1 << 32, 5, 4] {
        assert!(
            m.interior(far, 2).is_none() && m.interior(2, far).is_none(),
            "{far}"
        );
    }
    for far in [u32::MAX, u32::MAX - 1, 5, 4] {
        assert!(
            m32.interior(far, 2).is_none() && m32.interior(2, far).is_none(),
            "{far}"
        );
    }
    assert!(m.interior(0, 0).is_none() && m32.interior(0, 0).is_none());
    // An empty matrix (of many rows, or many columns) has no interior.
    let none: [u32; 0] = [];
    let tall = Slice2dU32::new(&none, u32::MAX, 0);
    let wide = Slice2dU32::new(&none, 0, u32::MAX);
    assert!(tall.interior(1, 0).is_none() && wide.interior(0, 1).is_none());
    assert!(tall.interior(u32::MAX - 2, 1).is_none());
}

#[test]
fn a_u32_shape_holds_at_most_u32_max_elements() {
    let max = u32::MAX;
    assert_eq!(Shape2dU32::new(max, 1).map(Shape2dU32::len), Some(max));
    assert_eq!(
        Shape2dU32::new(65535, 65537).map(Shape2dU32::len),
        Some(max)
    );
    for (rows, cols) in [(65536, 65536), (max, 2), (2, max), (max, max)] {
        assert_eq!(Shape2dU32::new(rows, cols), None, "{rows} x {cols}");
        assert!(Slice2dU32::<u8>::try_new(&[], rows, cols).is_none());
        let message = catch_unwind(|| Slice2dU32::<u8>::new(&[0; 4], rows, cols)).unwrap_err();
        assert_eq!(
            message.downcast_ref::<String>().unwrap(),
            &format!("a {rows} x {cols} matrix has more than u32::MAX elements: use Slice2d")
        );
    }
    let shape = Shape2dU32::new(3, 7).unwrap();
    assert_eq!(shape.transposed(), Shape2dU32::new(7, 3).unwrap());
    assert_eq!(Shape2d::from(shape), Shape2d::new(3, 7).unwrap());
}

#[test]
fn a_u32_view_checks_its_slice_and_each_axis() {
    let data: Vec<u32> = (0..14).collect();
    let m = Slice2dU32::new(&data, 3, 4);
    assert_eq!((m[(2, 3)], m.row(1)), (11, &[4u32, 5, 6, 7][..]));
    assert_eq!(
        (m.get(1, 2), m.get(0, 4), m.get(3, 0)),
        (Some(&6), None, None)
    );
    // (0, 4) is offset 4, inside the slice, but outside the matrix.
    let message = catch_unwind(|| m[(0, 4)]).unwrap_err();
    assert_eq!(
        message.downcast_ref::<String>().unwrap(),
        "matrix index out of bounds: the shape is 3 x 4 but the index is (0, 4)"
    );
    assert!(catch_unwind(|| m.row(3)).is_err());
    let message = catch_unwind(|| Slice2dU32::new(&data, 4, 4)).unwrap_err();
    assert_eq!(
        message.downcast_ref::<String>().unwrap(),
        "a 4 x 4 matrix needs more elements than the slice's 14"
    );
    assert!(Slice2dU32::try_new(&data, 4, 4).is_none());
    let shape = Shape2dU32::new(2, 7).unwrap();
    assert_eq!(Slice2dU32::with_shape(&data, shape)[(1, 6)], 13);
}
