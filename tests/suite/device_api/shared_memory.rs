//! Shared memory without `unsafe`: the phase token, the ownership rule,
//! 2-D tiles, shared atomics, the block reduction, the dynamic array (its
//! alignment), generic and const-generic kernels with shared arrays, block
//! shapes required by the kernel (`Block::require_shape`), the block scan; and
//! the device-side soundness fixes (zero-sized elements, aligned structs).
//! On the simulator where there is no GPU, on the GPU otherwise.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::{self as testing, Aligned32, Float4};

#[test]
fn the_phase_token_tree_reduction_sums_each_block_at_any_block_size() {
    let stream = Stream::new().unwrap();
    for threads in [256usize, 100, 33, 1] {
        let n = threads * 9 + 5;
        let input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let blocks = n.div_ceil(threads);
        let mut sums = DeviceBuffer::to_device_sync(&vec![f32::NAN; blocks], &stream).unwrap();
        launch!(testing::block_sum_static[blocks, threads, stream](&din, &mut sums)).unwrap();
        let got = sums.copy_to_host_sync(&stream).unwrap();
        for (b, sum) in got.iter().enumerate() {
            let expected: f32 = input[b * threads..((b + 1) * threads).min(n)].iter().sum();
            assert_eq!(*sum, expected, "{threads} threads, block {b}");
        }
    }
}

#[test]
fn the_phase_token_block_scan_gives_each_blocks_prefix_sums() {
    let stream = Stream::new().unwrap();
    // A partial last block: its missing inputs count as 0.
    let n = 256 * 3 + 100;
    let input: Vec<f32> = (0..n).map(|i| (i % 11) as f32).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; n], &stream).unwrap();
    launch!(testing::block_scan[n.div_ceil(256), 256, stream](&din, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let mut sum = 0.0;
    for (i, (&v, &g)) in input.iter().zip(&got).enumerate() {
        sum = if i % 256 == 0 { v } else { sum + v };
        assert_eq!(g, sum, "element {i}");
    }
}

#[test]
fn the_shuffle_block_reduction_sums_each_block_including_partial_warps() {
    let stream = Stream::new().unwrap();
    for threads in [1024usize, 256, 100, 33, 32, 7] {
        let n = threads * 5 + 3;
        let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 2.0).collect();
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let blocks = n.div_ceil(threads);
        let mut sums = DeviceBuffer::to_device_sync(&vec![f32::NAN; blocks], &stream).unwrap();
        launch!(testing::block_sum_shuffles[blocks, threads, stream](&din, &mut sums)).unwrap();
        let got = sums.copy_to_host_sync(&stream).unwrap();
        for (b, sum) in got.iter().enumerate() {
            let expected: f32 = input[b * threads..((b + 1) * threads).min(n)].iter().sum();
            assert_eq!(*sum, expected, "{threads} threads, block {b}");
        }
    }
}

#[test]
fn shared_atomics_count_into_a_shared_array() {
    let stream = Stream::new().unwrap();
    let n = 10_000usize;
    let values: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let dv = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    for threads in [256usize, 50] {
        let mut bins = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
        launch!(testing::shared_counters[n.div_ceil(threads), threads, stream](&dv, &mut bins))
            .unwrap();
        let mut expected = vec![0u32; 64];
        for v in &values {
            expected[(v % 64) as usize] += 1;
        }
        assert_eq!(
            bins.copy_to_host_sync(&stream).unwrap(),
            expected,
            "{threads} threads"
        );
    }
}

#[test]
fn a_padded_2d_tile_is_filled_whatever_the_block_shape() {
    let stream = Stream::new().unwrap();
    for block in [(8u32, 8u32), (4, 2), (16, 4)] {
        let (rows, cols) = (20usize, 24usize);
        let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &stream).unwrap();
        let grid = (
            cols.div_ceil(block.0 as usize),
            rows.div_ceil(block.1 as usize),
        );
        launch!(testing::shared_2d_transpose[grid, block, stream](out.view_2d_mut(rows, cols).unwrap()))
            .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for r in 0..rows {
            for c in 0..cols {
                // Slot (c % 8, r % 8) holds (c % 8) * 100 + r % 8.
                assert_eq!(
                    got[r * cols + c],
                    ((c % 8) * 100 + r % 8) as u32,
                    "{block:?} ({r}, {c})"
                );
            }
        }
    }
}

/// Checks `shaped_fill`'s output for a launch with blocks of `block` threads.
fn check_shaped_fill(shaped: bool, block: (u32, u32), stream: &Stream) {
    let (rows, cols) = (2 * block.1 as usize + 1, 3 * block.0 as usize);
    let mut out = DeviceBuffer::to_device_sync(&vec![[u32::MAX; 4]; rows * cols], stream).unwrap();
    let grid = (3, rows.div_ceil(block.1 as usize));
    launch!(testing::shaped_fill[grid, block, stream](shaped, out.view_2d_mut(rows, cols).unwrap()))
        .unwrap();
    let got = out.copy_to_host_sync(stream).unwrap();
    let size = (block.0 * block.1) as usize;
    for y in 0..rows {
        for x in 0..cols {
            let [rank, got_size, thread_rank, slot] = got[y * cols + x];
            let expected_rank =
                (x % block.0 as usize + (y % block.1 as usize) * block.0 as usize) as u32;
            let j = (7 * x + 13 * y) % 300;
            assert_eq!(
                [rank, got_size, thread_rank, slot],
                [
                    expected_rank,
                    size as u32,
                    expected_rank,
                    (j * 1000 + j % size) as u32
                ],
                "shaped {shaped}, block {block:?}, ({y}, {x})"
            );
        }
    }
}

#[test]
fn fill_writes_every_slot_by_its_owner_whatever_the_block_size() {
    let stream = Stream::new().unwrap();
    // 300 slots: blocks of fewer, as many as two and a half rounds, more.
    for block in [(32u32, 4u32), (7, 3), (100, 3), (16, 32), (300, 1), (1, 1)] {
        check_shaped_fill(false, block, &stream);
    }
}

#[test]
fn a_required_block_shape_gives_the_same_token() {
    let stream = Stream::new().unwrap();
    check_shaped_fill(true, (32, 4), &stream);
}

#[test]
fn generic_and_const_generic_kernels_have_shared_arrays() {
    let stream = Stream::new().unwrap();
    let n = 301usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let mut out = DeviceBuffer::to_device_sync(&vec![-1.0f32; n], &stream).unwrap();
    launch!(testing::swap_pairs[n.div_ceil(64), 64, stream](&din, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (i, &got) in got.iter().enumerate() {
        let expected = if (i ^ 1) < n { (i ^ 1) as f32 } else { -1.0 };
        assert_eq!(got, expected, "f32 element {i}");
    }
    let wide: Vec<u64> = (0..n as u64).map(|i| i << 40).collect();
    let dwide = DeviceBuffer::to_device_sync(&wide, &stream).unwrap();
    let mut out = DeviceBuffer::<u64>::zeroed_on(n, &stream).unwrap();
    launch!(testing::swap_pairs[n.div_ceil(128), 128, stream](&dwide, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for i in 0..n - 1 {
        assert_eq!(got[i], wide[i ^ 1], "u64 element {i}");
    }

    let input: Vec<u32> = (0..96).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(96, &stream).unwrap();
    launch!(testing::reverse_tiles::<16>[6, 16, stream](&din, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let expected: Vec<u32> = (0..96).map(|i| i / 16 * 16 + 15 - i % 16).collect();
    assert_eq!(got, expected);
    launch!(testing::reverse_tiles::<32>[3, 32, stream](&din, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    let expected: Vec<u32> = (0..96).map(|i| i / 32 * 32 + 31 - i % 32).collect();
    assert_eq!(got, expected);
}

#[test]
fn dynamic_shared_memory_is_aligned_for_its_element_type() {
    let stream = Stream::new().unwrap();
    let threads = 64usize;
    let mut out = DeviceBuffer::<[u32; 3]>::zeroed_on(threads, &stream).unwrap();
    // Room for 64 elements of 32 bytes, plus 16 bytes of slack for alignment.
    let bytes = threads * 32 + 16;
    launch!(testing::dynamic_alignment[1, threads, stream, bytes](&mut out)).unwrap();
    for (t, [safe, raw, len]) in out
        .copy_to_host_sync(&stream)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            safe, 0,
            "thread {t}: DynamicShared<Aligned32> slot misaligned"
        );
        assert_eq!(
            raw, 0,
            "thread {t}: shared::dynamic::<Aligned32>() misaligned"
        );
        assert!(len as usize >= threads, "thread {t}: {len} slots");
    }
    assert_eq!(std::mem::align_of::<Aligned32>(), 32);
}

#[test]
fn zero_sized_elements_reach_the_kernel_as_dangling_slices_not_null() {
    let stream = Stream::new().unwrap();
    let input = DeviceBuffer::<[u8; 0]>::device_array(10).unwrap();
    let mut out = DeviceBuffer::<[u8; 0]>::device_array(7).unwrap();
    let mut count = DeviceBuffer::<u32>::zeroed_on(32, &stream).unwrap();
    launch!(testing::zero_sized[1, 32, stream](&input, &mut out, &mut count)).unwrap();
    assert_eq!(count.copy_to_host_sync(&stream).unwrap(), vec![7010; 32]);
}

#[test]
fn a_16_aligned_device_copy_struct_crosses_by_value_and_in_buffers() {
    let stream = Stream::new().unwrap();
    let v = Float4 {
        x: 1.0,
        y: -2.0,
        z: 0.5,
        w: 3.0,
    };
    let mut out = DeviceBuffer::<Float4>::zeroed_on(100, &stream).unwrap();
    launch!(testing::scale_float4[1, 100, stream](v, &mut out)).unwrap();
    for (i, got) in out
        .copy_to_host_sync(&stream)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        let s = i as f32;
        assert_eq!(
            got,
            Float4 {
                x: s,
                y: -2.0 * s,
                z: 0.5 * s,
                w: 3.0 * s
            }
        );
    }
    let _ = Aligned32::default();
}
