//! 2-D and strided copies: regions of device buffers with a row step and a
//! column step (CuPy's `a[0::2, 0::2].get(stream)`), pitched allocations
//! (`cuMemAllocPitch`), copies between them and the host on a stream
//! (`cuMemcpy2DAsync`), ordered by the tracking, and the regions refused.
//! Ported cases are named after CuPy's `tests/cupy_tests/core_tests/
//! test_ndarray_get.py` and `test_ndarray_set.py`, and Numba's
//! `numba/cuda/tests/cudapy/test_array.py` (`CudaArrayStridedSlice`).

use crate::common;

use common::{blocks, hold};
use gpu_kernels::fill;
use gpu_runtime::{launch, DeviceBuffer, Error, PinnedBuffer, PitchedBuffer, Stream};

/// `a[r0::rs, c0::cs]` of a row-major `rows x cols` matrix, on the CPU.
fn strided_on_cpu(
    a: &[i64],
    cols: usize,
    rows: std::ops::Range<usize>,
    rs: usize,
    cs_range: std::ops::Range<usize>,
    cs: usize,
) -> Vec<i64> {
    rows.step_by(rs)
        .flat_map(|r| cs_range.clone().step_by(cs).map(move |c| a[r * cols + c]))
        .collect()
}

/// CuPy's `TestArrayGet.test_non_contiguous_array_stream`:
/// `a[0::2, 0::2].get(stream)` of a device array equals NumPy's.
#[test]
fn cupy_test_non_contiguous_array_stream() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..30).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let view = a.region_2d(5, 6).unwrap().strided(.., 2, .., 2).unwrap();
    assert_eq!(view.extents(), (3, 3));
    let got = view.copy_to_host_sync(&stream).unwrap();
    assert_eq!(got, strided_on_cpu(&host, 6, 0..5, 2, 0..6, 2));
    assert_eq!(got, [0, 2, 4, 12, 14, 16, 24, 26, 28]);
}

/// CuPy's `TestArrayGet.test_contiguous_array_stream`, for a 2-D region:
/// rows with a column step of 1 are one 2-D copy.
#[test]
fn cupy_test_contiguous_array_stream() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..30).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let rows = a
        .region_2d(5, 6)
        .unwrap()
        .strided(1..4, 2, 2..5, 1)
        .unwrap();
    assert_eq!(
        rows.copy_to_host_sync(&stream).unwrap(),
        [8, 9, 10, 20, 21, 22]
    );
}

/// Numba's `CudaArrayStridedSlice.test_strided_index_2d`: every
/// `a[i::2, j::2]` of a 6 x 7 array, more rows than columns and the
/// other way round.
#[test]
fn numba_test_strided_index_2d() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..42).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    for (rows, cols) in [(6, 7), (7, 6), (2, 21), (21, 2)] {
        let whole = a.region_2d(rows, cols).unwrap();
        for i in 0..rows {
            for j in 0..cols {
                let got = whole
                    .strided(i.., 2, j.., 2)
                    .unwrap()
                    .copy_to_host_sync(&stream)
                    .unwrap();
                let want = strided_on_cpu(&host, cols, i..rows, 2, j..cols, 2);
                assert_eq!(got, want, "{rows} x {cols}, a[{i}::2, {j}::2]");
            }
        }
    }
}

/// CuPy's `TestArraySet.test_set_non_contiguous_array_stream`: setting
/// `a[1::2, ::3]` from the host writes those elements and no other.
#[test]
fn cupy_test_set_non_contiguous_array_stream() {
    let stream = Stream::new().unwrap();
    let mut a = DeviceBuffer::<i64>::zeroed_on(48, &stream).unwrap();
    let values: Vec<i64> = (1..=9).collect();
    let mut region = a
        .region_2d_mut(6, 8)
        .unwrap()
        .strided(1.., 2, .., 3)
        .unwrap();
    assert_eq!(region.extents(), (3, 3));
    region.copy_from_host_sync(&values, &stream).unwrap();
    let all = a.copy_to_host_sync(&stream).unwrap();
    let mut want = vec![0i64; 48];
    let mut next = values.iter();
    for r in (1..6).step_by(2) {
        for c in (0..8).step_by(3) {
            want[r * 8 + c] = *next.next().unwrap();
        }
    }
    assert_eq!(all, want);
}

/// A pitched allocation: rows start a pitch apart (at least a row), the
/// matrix round-trips, and a region of it reads back right.
#[test]
fn a_pitched_matrix_round_trips_and_its_regions_read_back() {
    let stream = Stream::new().unwrap();
    let (rows, cols) = (5, 33);
    let host: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let m = PitchedBuffer::from_host_sync(&host, rows, cols, &stream).unwrap();
    assert!(m.pitch_bytes() >= cols * 4 && m.pitch_bytes() % 4 == 0);
    assert_eq!((m.rows(), m.cols()), (rows, cols));
    assert_eq!(m.copy_to_host_sync(&stream).unwrap(), host);
    let corner = m.region().strided(3.., 1, 30.., 1).unwrap();
    assert_eq!(
        corner.copy_to_host_sync(&stream).unwrap(),
        [129.0, 130.0, 131.0, 162.0, 163.0, 164.0]
    );
    let zeroed = PitchedBuffer::<u16>::zeroed_on(3, 3, &stream).unwrap();
    assert_eq!(zeroed.copy_to_host_sync(&stream).unwrap(), vec![0; 9]);
}

/// Device-to-device: a strided region of a buffer into a pitched matrix and
/// back out into a strided region of another buffer, all queued.
#[test]
fn regions_copy_between_device_buffers_and_pitched_memory() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..64).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let mut m = PitchedBuffer::<i64>::zeroed_on(4, 4, &stream).unwrap();
    let every_other = a.region_2d(8, 8).unwrap().strided(.., 2, .., 2).unwrap();
    m.region_mut().copy_from(every_other, &stream).unwrap();
    let want = strided_on_cpu(&host, 8, 0..8, 2, 0..8, 2);
    assert_eq!(m.copy_to_host_sync(&stream).unwrap(), want);
    let mut b = DeviceBuffer::<i64>::zeroed_on(64, &stream).unwrap();
    b.region_2d_mut(8, 8)
        .unwrap()
        .strided(1.., 2, 1.., 2)
        .unwrap()
        .copy_from(m.region(), &stream)
        .unwrap();
    let out = b.copy_to_host_sync(&stream).unwrap();
    assert_eq!(strided_on_cpu(&out, 8, 1..8, 2, 1..8, 2), want);
    assert_eq!(strided_on_cpu(&out, 8, 0..8, 2, 0..8, 1), vec![0; 32]);
}

/// Pinned memory is host memory the 2-D copies reach at full speed.
#[test]
fn a_region_copies_into_pinned_memory() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..16).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let mut pinned = PinnedBuffer::<i64>::new(4).unwrap();
    let region = a.region_2d(4, 4).unwrap().strided(.., 2, 1.., 2).unwrap();
    region
        .copy_to_slice_sync(pinned.as_mut_slice().unwrap(), &stream)
        .unwrap();
    assert_eq!(pinned.as_slice().unwrap(), &[1, 3, 9, 11]);
}

/// A region copy on another stream than the kernel writing the buffer waits
/// for it, held behind a callback.
#[test]
fn a_region_copy_waits_for_the_kernel_writing_the_buffer() {
    let _turn = common::one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut a = DeviceBuffer::<u32>::zeroed_on(4096, &s1).unwrap();
    s1.synchronize().unwrap();
    let timer = hold(&s1, 200);
    launch!(fill[blocks(4096), 256, s1](6u32, &mut a)).unwrap();
    let got = a
        .region_2d(64, 64)
        .unwrap()
        .strided(.., 3, .., 5)
        .unwrap()
        .copy_to_host_sync(&s2)
        .unwrap();
    assert!(
        got.iter().all(|&v| v == 6),
        "the copy saw the held kernel's values"
    );
    timer.join().unwrap();
}

#[test]
fn regions_outside_their_matrix_or_with_a_zero_step_are_refused() {
    let stream = Stream::new().unwrap();
    let a = DeviceBuffer::<u8>::zeroed_on(12, &stream).unwrap();
    assert!(matches!(a.region_2d(4, 4), Err(Error::InvalidShape { .. })));
    assert!(matches!(
        a.region_2d(usize::MAX, 2),
        Err(Error::InvalidShape { .. })
    ));
    let m = a.region_2d(3, 4).unwrap();
    let refused = |r: gpu_runtime::Result<gpu_runtime::Region2d<'_, u8>>| match r {
        Err(Error::InvalidCopy2d { reason }) => reason,
        other => panic!(
            "expected Error::InvalidCopy2d, got {:?}",
            other.map(|r| r.extents())
        ),
    };
    let reason = refused(m.strided(0..4, 1, .., 1));
    assert!(reason.contains("rows") && reason.contains('3'), "{reason}");
    let reason = refused(m.strided(.., 1, 2..5, 1));
    assert!(reason.contains("columns"), "{reason}");
    let reason = refused(m.strided(.., 0, .., 1));
    assert!(reason.contains("step of 0"), "{reason}");
    // A reversed range (as `3..1`) is refused too.
    let (start, end) = (3, 1);
    assert!(matches!(
        m.strided(start..end, 1, .., 1),
        Err(Error::InvalidCopy2d { .. })
    ));
    // Empty regions are fine and copy nothing.
    let empty = m.strided(3.., 1, .., 1).unwrap();
    assert_eq!(empty.extents(), (0, 4));
    assert!(empty.copy_to_host_sync(&stream).unwrap().is_empty());
}

#[test]
fn copies_of_mismatched_sizes_are_refused() {
    let stream = Stream::new().unwrap();
    let a = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    let mut out = vec![0u32; 5];
    assert!(matches!(
        a.region_2d(2, 2)
            .unwrap()
            .copy_to_slice_sync(&mut out, &stream),
        Err(Error::LengthMismatch { .. })
    ));
    let mut region = b.region_2d_mut(4, 4).unwrap();
    assert!(matches!(
        region.copy_from_host_sync(&[1, 2, 3], &stream),
        Err(Error::LengthMismatch { .. })
    ));
    match region.copy_from(a.region_2d(2, 8).unwrap(), &stream) {
        Err(Error::InvalidCopy2d { reason }) => assert!(reason.contains("2 x 8"), "{reason}"),
        other => panic!("expected Error::InvalidCopy2d, got {other:?}"),
    }
}

/// Copies to and from the host wait for the stream, so a capture refuses
/// them and goes on; device-to-device region copies are captured.
#[test]
fn a_capture_refuses_host_region_copies_and_captures_device_ones() {
    let stream = Stream::new().unwrap();
    let host: Vec<u32> = (0..16).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    stream.synchronize().unwrap();
    let capture = stream.begin_capture().unwrap();
    let region = a.region_2d(4, 4).unwrap().strided(.., 2, .., 2).unwrap();
    assert!(matches!(
        region.copy_to_host_sync(&stream),
        Err(Error::InCapture { .. })
    ));
    b.region_2d_mut(2, 2)
        .unwrap()
        .copy_from(region, &stream)
        .unwrap();
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&stream).unwrap();
    assert_eq!(b.copy_to_host_sync(&stream).unwrap(), vec![0, 2, 8, 10]);
}

/// Steps past the region leave one row or column, and never overflow.
#[test]
fn huge_steps_leave_one_row_or_column() {
    let stream = Stream::new().unwrap();
    let host: Vec<i64> = (0..12).collect();
    let a = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    let m = a.region_2d(3, 4).unwrap();
    let first_row = m.strided(.., usize::MAX, .., 1).unwrap();
    assert_eq!(first_row.copy_to_host_sync(&stream).unwrap(), [0, 1, 2, 3]);
    let first_col = m.strided(.., 1, 1.., usize::MAX).unwrap();
    assert_eq!(first_col.copy_to_host_sync(&stream).unwrap(), [1, 5, 9]);
    let one = m.strided(2.., usize::MAX, 3.., usize::MAX).unwrap();
    assert_eq!(one.copy_to_host_sync(&stream).unwrap(), [11]);
}

/// A pitched allocation is not stream-ordered: made in a capture, its
/// zeroing would wait for the graph's launch; it is refused, and the
/// capture goes on.
#[test]
fn a_pitched_allocation_is_refused_in_a_capture() {
    let stream = Stream::new().unwrap();
    let capture = stream.begin_capture().unwrap();
    assert!(matches!(
        PitchedBuffer::<f32>::zeroed_on(4, 4, &stream),
        Err(Error::InCapture { .. })
    ));
    capture.end().unwrap();
}
