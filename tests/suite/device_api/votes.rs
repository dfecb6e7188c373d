//! Block votes (`sync_threads_count`, `_and`, `_or`), warp matching
//! (`match_any_sync`, `match_all_sync`), `activemask` and `nanosleep`,
//! checked against the CPU. On the simulator where there is no GPU, on the
//! GPU otherwise. (A vote beside a `sync_threads()`, which hangs a GPU, is an
//! attack in `tests/forced_simulator/device_attacks.rs`.)

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::votes::{active_after_return, block_votes, sleep_until_flag, warp_matching};

#[test]
fn block_votes_count_and_or_every_thread_of_the_block() {
    let stream = Stream::new().unwrap();
    // 3 blocks of 96 threads over 250 values (the last block partly past
    // the end, whose threads vote false), and one block where all vote true.
    for (values, threads, blocks) in [
        ((0..250u32).collect::<Vec<_>>(), 96usize, 3usize),
        (vec![3u32; 64], 64, 1),
        (vec![1u32; 33], 33, 1),
    ] {
        let x = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
        let mut out = DeviceBuffer::<[u32; 4]>::zeroed_on(threads * blocks, &stream).unwrap();
        launch!(block_votes[blocks, threads, stream](&x, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for b in 0..blocks {
            let mine = |f: &dyn Fn(u32) -> bool| {
                (b * threads..(b + 1) * threads)
                    .filter(|&i| values.get(i).is_some_and(|&v| f(v)))
                    .count() as u32
            };
            let count = mine(&|v| v % 3 == 0);
            let expected = [
                count,
                (count == threads as u32) as u32,
                (count > 0) as u32,
                mine(&|v| v % 2 == 0),
            ];
            for t in 0..threads {
                assert_eq!(got[b * threads + t], expected, "block {b}, thread {t}");
            }
        }
    }
}

#[test]
fn warp_matching_finds_the_lanes_with_the_same_value() {
    let stream = Stream::new().unwrap();
    // Lane l of warp 0 holds l % 4 in the low word and l % 8 / 4 in the
    // high word; warp 1 holds one value in every lane.
    let values: Vec<u64> = (0..32u64)
        .map(|l| ((l % 8 / 4) << 32) | (l % 4))
        .chain(std::iter::repeat_n(9, 32))
        .collect();
    let x = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    let mut out = DeviceBuffer::<[u32; 5]>::zeroed_on(64, &stream).unwrap();
    launch!(warp_matching[1, 64, stream](&x, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (i, [any32, any64, all, same, active]) in got.into_iter().enumerate() {
        let lanes =
            |f: &dyn Fn(usize) -> bool| (0..32).filter(|&l| f(l)).fold(0u32, |m, l| m | 1 << l);
        let warp = i / 32 * 32;
        let v = values[i];
        assert_eq!(
            any32,
            lanes(&|l| values[warp + l] as u32 == v as u32),
            "thread {i}"
        );
        assert_eq!(any64, lanes(&|l| values[warp + l] == v), "thread {i}");
        let uniform = i >= 32;
        assert_eq!(
            (all, same),
            if uniform { (u32::MAX, 1) } else { (0, 0) },
            "thread {i}"
        );
        assert_eq!(active, u32::MAX, "thread {i}: converged code");
    }
}

#[test]
fn activemask_leaves_out_lanes_that_returned() {
    let stream = Stream::new().unwrap();
    // 40 threads, of which 36 stay: warp 0 whole, lanes 0..4 of warp 1.
    let x: Vec<u32> = (0..40).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<[u32; 2]>::zeroed_on(40, &stream).unwrap();
    launch!(active_after_return[1, 40, stream](36, &dx, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (i, [mask, odd]) in got.into_iter().enumerate() {
        let (expected_mask, odd_lanes) = match i {
            0..32 => (u32::MAX, 0xaaaa_aaaa),
            32..36 => (0xf, 0xa),
            _ => (0, 0),
        };
        assert_eq!(mask, expected_mask, "thread {i}");
        let expected_odd = if i < 36 && i % 2 == 1 { odd_lanes } else { 0 };
        assert_eq!(odd, expected_odd, "thread {i}");
    }
}

#[test]
fn a_thread_sleeping_in_a_loop_waits_for_another_of_its_block() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(sleep_until_flag[2, 64, stream](50, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![7; 128]);
}
