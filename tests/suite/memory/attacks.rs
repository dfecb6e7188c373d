//! Attacks on the host side's promises, each from safe code as a hostile
//! reviewer would write it: device buffers used across streams through
//! views, halves, copies, pinned and mapped memory, threads, drops, forgotten
//! values and panics in the middle of a launch. Each test names what it
//! attacks and checks that the answer is right (or a clear error), never a
//! race or a silent wrong result. Streams are held with a callback where an
//! unordered access would otherwise run first and see the wrong data.
//!
//! These run on both backends (on a GPU through `scripts/gpu-bundle.sh`).

use crate::common;

use common::{blocks, filled, hold, one_at_a_time, pool_used_after_release, size};
use gpu_device::DeviceCopy;
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, Device, DeviceBuffer, Error, PinnedBuffer, Stream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Attacks tracking through `split_at`: the two halves of one buffer are
/// written on two streams (the first held), then the whole buffer is read on
/// a third. The halves share the buffer's tracker, so the read waits for both.
#[test]
fn halves_written_on_two_streams_are_both_waited_for() {
    let _turn = one_at_a_time();
    let (s1, s2, s3) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Stream::new().unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(2 * n, 0.0, &s1);
    let (left, right) = x.view_mut().split_at(n).unwrap();
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](1.0f32, left)).unwrap();
    launch!(fill[blocks(n), 256, s2](2.0f32, right)).unwrap();
    let got = x.copy_to_host_sync(&s3).unwrap();
    held.join().unwrap();
    assert!(got[..n].iter().all(|&v| v == 1.0), "left half");
    assert!(got[n..].iter().all(|&v| v == 2.0), "right half");
}

/// Attacks the ordering of a launch's input and output that are views of
/// one buffer (its two halves): the input half was written on a held stream,
/// the launch that reads it and writes the other half runs on another.
#[test]
fn a_launch_reading_one_half_and_writing_the_other_waits_for_the_writer() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(2 * n, 0.0, &s1);
    let held = hold(&s1, 300);
    {
        let (left, _) = x.view_mut().split_at(n).unwrap();
        launch!(fill[blocks(n), 256, s1](3.0f32, left)).unwrap();
    }
    let (left, right) = x.view_mut().split_at(n).unwrap();
    let ones = filled(n, 1.0, &s2);
    launch!(add_kernel[blocks(n), 256, s2](left.as_view(), &ones, right)).unwrap();
    let got = x.copy_to_host_sync(&s2).unwrap();
    held.join().unwrap();
    assert!(
        got[n..].iter().all(|&v| v == 4.0),
        "3 + 1 in the right half"
    );
}

/// Attacks device-to-device copies: the source was written on a held
/// stream, the copy runs on another, and a third reads the destination.
#[test]
fn a_device_copy_waits_for_its_source_and_is_waited_for() {
    let _turn = one_at_a_time();
    let (s1, s2, s3) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Stream::new().unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut a = filled(n, 0.0, &s1);
    let mut b = filled(n, 0.0, &s2);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](5.0f32, &mut a)).unwrap();
    b.copy_from_device(&a, &s2).unwrap();
    let got = b.copy_to_host_sync(&s3).unwrap();
    held.join().unwrap();
    assert_eq!(got, vec![5.0; n]);
}

/// Attacks the mix of mapped host memory and device buffers: a kernel
/// writes a mapped buffer on a held stream, a device buffer copies from the
/// mapped one on another stream, and the host reads both.
#[test]
fn a_copy_from_mapped_memory_waits_for_the_kernel_writing_it() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 14, 1 << 10);
    let mut mapped = gpu_runtime::MappedBuffer::<f32>::new_mapped(n).unwrap();
    let _warm = filled(16, 0.0, &s1);
    let mut copy = filled(n, 0.0, &s2);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](6.0f32, mapped.device_view_mut())).unwrap();
    copy.copy_from_device(mapped.device_view(), &s2).unwrap();
    let got = copy.copy_to_host_sync(&s2).unwrap();
    held.join().unwrap();
    assert_eq!(got, vec![6.0; n]);
    assert_eq!(mapped.as_slice().unwrap(), &vec![6.0; n][..]);
}

/// Attacks pinned copies mixed with device copies: a pinned buffer is
/// copied into a device buffer on a held stream, which another stream then
/// copies into a second device buffer; the host overwrites the pinned buffer
/// as soon as it may (which waits for the first copy).
#[test]
fn pinned_and_device_copies_on_two_streams_keep_the_first_data() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 14, 1 << 10);
    let mut pinned = PinnedBuffer::from_slice(&vec![7.0f32; n]).unwrap();
    let mut a = filled(n, 0.0, &s1);
    let mut b = filled(n, 0.0, &s2);
    let held = hold(&s1, 300);
    a.copy_from_pinned(&pinned, &s1).unwrap();
    b.copy_from_device(&a, &s2).unwrap();
    pinned.as_mut_slice().unwrap().fill(-1.0);
    held.join().unwrap();
    assert_eq!(b.copy_to_host_sync(&s2).unwrap(), vec![7.0; n]);
    assert_eq!(a.copy_to_host_sync(&s2).unwrap(), vec![7.0; n]);
}

/// Attacks drops and reuse of pool memory: a buffer whose kernel waits on a
/// held stream is dropped, and new buffers are allocated, zeroed and read on
/// another stream at once. The free is queued after the kernel, so the new
/// buffers never share memory with a kernel still writing.
#[test]
fn memory_dropped_under_a_running_kernel_is_not_handed_out_early() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &s1);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](9.0f32, &mut x)).unwrap();
    drop(x);
    let fresh: Vec<DeviceBuffer<f32>> = (0..4)
        .map(|_| DeviceBuffer::<f32>::zeroed_on(n, &s2).unwrap())
        .collect();
    held.join().unwrap();
    s1.synchronize().unwrap();
    for buffer in &fresh {
        assert_eq!(buffer.copy_to_host_sync(&s2).unwrap(), vec![0.0; n]);
    }
}

/// Attacks `free_sync` inside a stream callback, where CUDA calls are
/// forbidden: it used to answer `Ok(())` without freeing anything (the
/// memory leaked, silently). It is an error now, and the buffer's drop
/// hands the free to the release thread.
#[test]
fn free_sync_inside_a_callback_is_an_error_and_the_memory_is_freed() {
    // It measures the memory pool's live bytes: in a process of its own,
    // where no other test allocates meanwhile.
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let device = Device::current().unwrap();
    let stream = Stream::new().unwrap();
    let before = device.memory_pool().stats().unwrap().used_bytes;
    let bytes = 64 << 20;
    let buffer = DeviceBuffer::<u8>::zeroed_on(bytes, &stream).unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    stream
        .add_callback(move || {
            let _ = send.send(buffer.free_sync());
        })
        .unwrap();
    stream.synchronize().unwrap();
    let result = receive.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(result, Err(Error::CalledFromCallback));
    let used = pool_used_after_release(&device, before);
    assert!(
        used <= before + (8 << 20),
        "the pool's live bytes went from {before} to {used}: the buffer was not freed"
    );
}

/// Attacks a buffer moved to another thread and dropped there while the
/// kernel writing it, queued by the first thread on its per-thread default
/// stream, is held: the drop frees after the kernel (through the legacy
/// stream, which the moving thread's per-thread stream cannot be reached
/// from), and memory allocated afterwards reads zero.
#[test]
fn a_buffer_moved_to_another_thread_and_dropped_there_frees_after_its_kernel() {
    let _turn = one_at_a_time();
    let n = size(1 << 16, 1 << 12);
    let own = Stream::per_thread();
    let mut x = filled(n, 0.0, &own);
    let held = hold(&own, 300);
    launch!(fill[blocks(n), 256, own](8.0f32, &mut x)).unwrap();
    std::thread::spawn(move || drop(x)).join().unwrap();
    let other = Stream::new().unwrap();
    let fresh = DeviceBuffer::<f32>::zeroed_on(n, &other).unwrap();
    held.join().unwrap();
    own.synchronize().unwrap();
    assert_eq!(fresh.copy_to_host_sync(&other).unwrap(), vec![0.0; n]);
}

/// Attacks `mem::forget` on the values whose drop does the waiting: a
/// forgotten pinned buffer with a copy into it in flight, and a forgotten
/// device buffer under a held kernel. Both leak, neither is freed under the
/// device's feet; the stream and new buffers work as before.
#[test]
fn forgotten_buffers_leak_and_nothing_is_freed_under_the_device() {
    let _turn = one_at_a_time();
    let stream = Stream::new().unwrap();
    let n = size(1 << 14, 1 << 10);
    let source = filled(n, 2.0, &stream);
    let mut pinned = PinnedBuffer::<f32>::new(n).unwrap();
    let mut x = filled(n, 0.0, &stream);
    let held = hold(&stream, 200);
    source.copy_to_pinned(&mut pinned, &stream).unwrap();
    launch!(fill[blocks(n), 256, stream](3.0f32, &mut x)).unwrap();
    std::mem::forget(pinned);
    std::mem::forget(x);
    held.join().unwrap();
    stream.synchronize().unwrap();
    let y = filled(n, 4.0, &stream);
    assert_eq!(y.copy_to_host_sync(&stream).unwrap(), vec![4.0; n]);
}

/// Attacks a panic in the middle of a launch's argument list: the launcher
/// is never called, nothing is queued, and the output keeps its data and its
/// tracking (a later read on another stream waits for its earlier writer).
#[test]
fn a_panic_in_the_argument_list_queues_nothing() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 14, 1 << 10);
    let a = filled(n, 1.0, &s1);
    let mut c = filled(n, 0.0, &s1);
    let held = hold(&s1, 300);
    launch!(fill[blocks(n), 256, s1](5.0f32, &mut c)).unwrap();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        launch!(add_kernel[blocks(n), 256, s2](
            &a,
            {
                if n > 0 {
                    panic!("in the argument list")
                }
                &a
            },
            &mut c
        ))
    }));
    assert!(panicked.is_err());
    let got = c.copy_to_host_sync(&s2).unwrap();
    held.join().unwrap();
    assert_eq!(
        got,
        vec![5.0; n],
        "the earlier write, waited for; no add ran"
    );
}

/// A plain struct with padding between its fields (3 bytes after `tag`).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Padded {
    tag: u8,
    value: u32,
}

/// Attacks `fill` and copies with an element type that has padding: the
/// padding bytes are never read as values (on the simulator they are moved
/// as `MaybeUninit<u8>`), and every field comes back.
#[test]
fn fill_and_copies_of_a_padded_struct_keep_every_field() {
    let stream = Stream::new().unwrap();
    let value = Padded {
        tag: 7,
        value: 0xdead_beef,
    };
    let mut x = DeviceBuffer::<Padded>::zeroed_on(1000, &stream).unwrap();
    x.fill(value, &stream).unwrap();
    assert_eq!(x.copy_to_host_sync(&stream).unwrap(), vec![value; 1000]);
    let host: Vec<Padded> = (0..1000)
        .map(|i| Padded {
            tag: i as u8,
            value: i,
        })
        .collect();
    let y = DeviceBuffer::to_device_sync(&host, &stream).unwrap();
    assert_eq!(y.copy_to_host_sync(&stream).unwrap(), host);
}

/// Attacks the 3-D view's shape checks: extents whose product overflows,
/// or exceeds the buffer, are errors, never a view larger than its memory.
#[test]
fn three_dimensional_views_that_do_not_fit_are_errors() {
    let stream = Stream::new().unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed_on(24, &stream).unwrap();
    assert!(x.view_3d_mut(2, 3, 4).is_ok());
    for (d, r, c) in [
        (2, 3, 5),
        (usize::MAX, 2, 1),
        (1 << 32, 1 << 32, 1),
        (0, usize::MAX, 2),
    ] {
        match x.view_3d_mut(d, r, c) {
            Err(Error::InvalidShape { reason }) => {
                assert!(reason.contains(&format!("{d} x {r} x {c}")), "{reason}")
            }
            Ok(_) if d == 0 => {}
            other => panic!("{d} x {r} x {c}: {:?}", other.map(|v| v.extents())),
        }
    }
}

/// Attacks the current-stream scopes with `mem::forget`: a forgotten guard
/// is a scope that never ends (its stream stays current on this thread),
/// and the scopes entered after it still restore exactly what they replaced.
#[test]
fn a_forgotten_stream_scope_never_ends_and_later_scopes_still_restore() {
    std::thread::spawn(|| {
        let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
        let before = gpu_runtime::current_stream().unwrap();
        std::mem::forget(s1.enter().unwrap());
        assert_eq!(gpu_runtime::current_stream().unwrap(), s1);
        {
            let _s2 = s2.enter().unwrap();
            assert_eq!(gpu_runtime::current_stream().unwrap(), s2);
        }
        assert_eq!(gpu_runtime::current_stream().unwrap(), s1);
        assert_ne!(before, s1);
    })
    .join()
    .unwrap();
}

/// Attacks the simulator's agreement with the GPU on shuffles by 32 lanes
/// or more: PTX takes the low five bits of the lane or delta (a shuffle
/// down by 33 is one by 1), where the simulator kept each lane's own value
/// for down and up shuffles past the warp's end: the same kernel gave two
/// answers.
#[test]
fn shuffles_by_32_or_more_agree_with_the_gpu() {
    use gpu_test_kernels::attacks::shuffles_by;
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<[u32; 4]>::zeroed_on(32, &stream).unwrap();
    for delta in [0u32, 1, 5, 31, 32, 33, 37, 64 + 3, u32::MAX] {
        launch!(shuffles_by[1, 32, stream](delta, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        let b = delta & 31;
        let expected: Vec<[u32; 4]> = (0..32u32)
            .map(|lane| {
                let down = if lane + b <= 31 { lane + b } else { lane };
                let up = lane.checked_sub(b).unwrap_or(lane);
                [down, up, lane ^ b, b]
            })
            .collect();
        assert_eq!(got, expected, "shuffles by {delta}");
    }
}

/// Attacks the witnesses' ownership: every element of a matrix with four
/// rows per thread, and of a 3-D grid, is owned by exactly one thread, with
/// grids larger than the matrix, extents that are not multiples of the
/// block, and thread rows past the end (each thread adds 1 to what it owns).
#[test]
fn every_element_has_exactly_one_owner() {
    use gpu_test_kernels::attacks::{count_owners_3d, count_owners_rows4};
    let stream = Stream::new().unwrap();
    for (rows, cols) in [(1, 1), (3, 5), (37, 70), (64, 32), (130, 33)] {
        let mut m = DeviceBuffer::<u32>::zeroed_on(rows * cols + 7, &stream).unwrap();
        // 32 x 8 blocks of four rows each: 32 columns and 32 rows per block,
        // one block too many on each axis.
        let grid = (cols.div_ceil(32) + 1, rows.div_ceil(32) + 1);
        launch!(count_owners_rows4[grid, (32, 8), stream](m.view_2d_mut(rows, cols).unwrap()))
            .unwrap();
        let got = m.copy_to_host_sync(&stream).unwrap();
        assert!(
            got[..rows * cols].iter().all(|&c| c == 1),
            "{rows} x {cols}"
        );
        assert!(
            got[rows * cols..].iter().all(|&c| c == 0),
            "past the matrix"
        );
    }
    for (d, r, c) in [(1, 1, 1), (3, 5, 7), (9, 4, 33)] {
        let mut g = DeviceBuffer::<u32>::zeroed_on(d * r * c, &stream).unwrap();
        launch!(count_owners_3d[(2, 2, d.div_ceil(2)), (c.div_ceil(2), 3, 2), stream](
            g.view_3d_mut(d, r, c).unwrap()
        ))
        .unwrap();
        assert!(
            g.copy_to_host_sync(&stream)
                .unwrap()
                .iter()
                .all(|&n| n == 1),
            "{d} x {r} x {c}"
        );
    }
}

/// Attacks the block reduction's assumptions (at most 32 warps, the last
/// one possibly partial): blocks of 33, 1000 and 1024 threads sum right, and
/// a block of 1025 threads is refused before it runs.
#[test]
fn the_block_reduction_sums_partial_warps_and_refuses_oversized_blocks() {
    use gpu_test_kernels::block_sum_shuffles;
    let stream = Stream::new().unwrap();
    let input = DeviceBuffer::to_device_sync(&vec![1.0f32; 4096], &stream).unwrap();
    let mut sums = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
    for threads in [33usize, 1000, 1024] {
        launch!(block_sum_shuffles[2, threads, stream](&input, &mut sums)).unwrap();
        let got = sums.copy_to_host_sync(&stream).unwrap();
        assert_eq!(got[..2], [threads as f32; 2], "blocks of {threads}");
    }
    let refused = launch!(block_sum_shuffles[1, 1025, stream](&input, &mut sums));
    assert!(
        matches!(refused, Err(Error::InvalidLaunch { .. })),
        "{refused:?}"
    );
}

/// Attacks the agreement of host and device on a kernel's parameters: a
/// `#[cfg(target_arch = "nvptx64")]` field makes a by-value struct 4 bytes
/// on the host and 8 in the PTX. The launcher compares the kernel's
/// interface as the host compiled it with the device's, kept in the PTX,
/// before the first launch (on both backends, the simulator reading the
/// same PTX), and refuses the launch naming both sides.
#[test]
fn a_parameter_whose_size_differs_on_the_device_is_refused() {
    use gpu_test_kernels::attacks::{layout_differs, DeviceOnlyField};
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    let refused = launch!(layout_differs[1, 32, stream](DeviceOnlyField { a: 1 }, &mut out));
    match refused {
        Err(Error::InvalidLaunch { kernel, reason }) => {
            assert_eq!(kernel, "layout_differs");
            assert!(
                reason.contains("the host has `param value: value of gpu_test_kernels::attacks::DeviceOnlyField (size 4, align 4, layout 0x")
                    && reason.contains("where the device has `param value: value of gpu_test_kernels::attacks::DeviceOnlyField (size 8, align 4, layout 0x"),
                "{reason}"
            );
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// Attacks the pipeline with a kernel closure that ignores the stream it is
/// given and launches on a stream of its own, held at first: the staging
/// buffers' tracking orders the kernel after the copy in and the copy out
/// after the kernel, so the output is still right.
#[test]
fn a_pipeline_kernel_on_a_stream_of_its_own_is_still_ordered() {
    use gpu_kernels::saxpy;
    use gpu_runtime::pipeline;
    let _turn = one_at_a_time();
    let n = size(1 << 16, 1 << 12);
    let host: Vec<f32> = (0..n).map(|i| (i % 101) as f32).collect();
    let input = PinnedBuffer::from_slice(&host).unwrap();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let streams = [Stream::new().unwrap(), Stream::new().unwrap()];
    let own = Stream::new().unwrap();
    let _warm = filled(16, 0.0, &own);
    let held = hold(&own, 300);
    pipeline(
        &input,
        &mut output,
        8,
        &streams,
        None,
        |_given, x, out| launch!(saxpy[blocks(x.len()), 256, own](2.0f32, x, x, out)),
    )
    .unwrap();
    held.join().unwrap();
    let expected: Vec<f32> = host.iter().map(|v| 3.0 * v).collect();
    assert_eq!(output.as_slice().unwrap(), &expected[..]);
}
