//! Alignment: a `DeviceCopy` type may be aligned to 256 bytes
//! (`MAX_DEVICE_ALIGN`), and such elements are aligned wherever a kernel
//! sees them: device buffers, views at element offsets (directly and through
//! a field), static and dynamic shared memory; a parameter by value may be
//! aligned to 16 (`MAX_PARAMETER_ALIGN`, rustc's PTX kernel ABI). Larger
//! alignments are compile errors: `tests/ui/derive_device_copy/derive_over_aligned.rs`,
//! `tests/ui_build/over_aligned_by_hand.rs`.
//! On the simulator where there is no GPU, on the GPU otherwise.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::alignment::{alignment_of_lines, fact, Line, Quad, Tagged};

fn line(v: u32) -> Line {
    Line([v; 64])
}

#[test]
fn elements_aligned_to_256_are_aligned_everywhere_a_kernel_sees_them() {
    let stream = Stream::new().unwrap();
    assert_eq!(std::mem::align_of::<Line>(), gpu_device::MAX_DEVICE_ALIGN);
    assert_eq!(std::mem::align_of::<Tagged>(), 256);
    let threads = 8usize;
    let source: Vec<Line> = (0..threads as u32 + 1).map(line).collect();
    let input = DeviceBuffer::to_device_sync(&source, &stream).unwrap();
    let mut copies = DeviceBuffer::<Line>::zeroed_on(threads + 3, &stream).unwrap();
    let mut out = DeviceBuffer::<[u32; fact::COUNT]>::zeroed_on(threads, &stream).unwrap();
    let tagged = DeviceBuffer::to_device_sync(
        &[Tagged {
            tag: 7,
            lines: [line(42)],
        }],
        &stream,
    )
    .unwrap();
    // Views one element in (256 bytes): still aligned for the element.
    let view = input.slice(1..threads + 1).unwrap();
    let copies_view = copies.slice_mut(3..threads + 3).unwrap();
    // Room for two lines wherever the dynamic array starts.
    let bytes = 3 * 256;
    launch!(alignment_of_lines[1, threads, stream, bytes](
        view,
        &tagged,
        Quad([1, 2, 3, 5]),
        copies_view,
        &mut out
    ))
    .unwrap();
    for (t, facts) in out
        .copy_to_host_sync(&stream)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        for (what, index) in [
            ("the input view", fact::INPUT),
            ("the input's over-aligned field", fact::FIELD),
            ("the 16-aligned parameter by value", fact::BY_VALUE),
            ("shared_array!(Line; 2)", fact::STATIC_SHARED),
            (
                "shared_array!(Page; 1), aligned to 4096",
                fact::STATIC_SHARED_PAGE,
            ),
            ("DynamicShared<Line>", fact::DYNAMIC_SHARED),
            ("the output view's element", fact::OUTPUT),
        ] {
            assert_eq!(facts[index], 0, "thread {t}: {what} is misaligned");
        }
        assert_eq!(facts[fact::QUAD_VALUE], 5, "thread {t}");
        assert_eq!(facts[fact::TAGGED_VALUE], 7042, "thread {t}");
    }
    let got = copies.copy_to_host_sync(&stream).unwrap();
    for (i, l) in got.iter().enumerate() {
        let expected = if i >= 3 { line(i as u32 - 2) } else { line(0) };
        assert_eq!(*l, expected, "copies[{i}]");
    }
}
