//! One element of a device buffer read and written from the host
//! (`DeviceBuffer::get`/`set`, Numba's `darr[0] = 10`): stream-ordered after
//! the buffer's other uses, on any stream; an index out of range is an error
//! naming the index and the length.

use crate::common;

use common::{blocks, size};
use gpu_kernels::{busy, fill};
use gpu_runtime::{launch, DeviceBuffer, Error, Stream};

#[test]
fn set_then_get_round_trips_each_element() {
    let s = Stream::new().unwrap();
    let mut d = DeviceBuffer::to_device_sync(&[0i32; 8], &s).unwrap();
    d.set(0, 10, &s).unwrap();
    d.set(7, -3, &s).unwrap();
    assert_eq!(d.get(0, &s).unwrap(), 10);
    assert_eq!(d.get(7, &s).unwrap(), -3);
    assert_eq!(
        d.copy_to_host_sync(&s).unwrap(),
        vec![10, 0, 0, 0, 0, 0, 0, -3]
    );
}

#[test]
fn an_index_out_of_range_names_the_index_and_the_length() {
    let s = Stream::new().unwrap();
    let mut d = DeviceBuffer::<f32>::zeroed_on(5, &s).unwrap();
    for index in [5, 6, usize::MAX] {
        match d.get(index, &s) {
            Err(e @ Error::IndexOutOfRange { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains(&index.to_string()) && text.contains('5'),
                    "{text}"
                );
                assert!(matches!(e, Error::IndexOutOfRange { index: i, len: 5, .. } if i == index));
            }
            other => panic!("get({index}): {other:?}"),
        }
        assert!(matches!(
            d.set(index, 1.0, &s),
            Err(Error::IndexOutOfRange { len: 5, .. })
        ));
    }
    // Nothing was written.
    assert_eq!(d.copy_to_host_sync(&s).unwrap(), vec![0.0; 5]);
}

/// A read on one stream waits for a long kernel writing the buffer on
/// another; a write on one stream is seen by a kernel on another.
#[test]
fn get_and_set_are_ordered_after_work_on_other_streams() {
    let (writer, reader) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 20, 4096);
    let x = DeviceBuffer::to_device_sync(&vec![1.0f32; n], &writer).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(n, &writer).unwrap();
    writer.synchronize().unwrap();
    launch!(busy[blocks(n), 256, writer](&x, 200, &mut out)).unwrap();
    let last = out.get(n - 1, &reader).unwrap();
    let expected = out.copy_to_host_sync(&writer).unwrap()[n - 1];
    assert_eq!(last, expected);
    assert_ne!(last, 0.0, "the read ran before the kernel wrote");

    out.set(0, 42.0, &reader).unwrap();
    launch!(fill[1, 1, writer](7.0f32, out.slice_mut(1..2).unwrap())).unwrap();
    assert_eq!(out.get(0, &writer).unwrap(), 42.0);
    assert_eq!(out.get(1, &reader).unwrap(), 7.0);
}

/// In a capture, the blocking read is refused like every `_sync` copy.
#[test]
fn get_inside_a_capture_is_an_error_naming_it() {
    let s = Stream::new().unwrap();
    let d = DeviceBuffer::to_device_sync(&[1u32; 4], &s).unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    match d.get(0, &s) {
        Err(Error::InCapture { capture, .. }) => assert_eq!(capture, id),
        other => panic!("{other:?}"),
    }
    capture.end().unwrap();
    assert_eq!(d.get(0, &s).unwrap(), 1);
}
