//! The ownership maps without `unsafe` (`gpu_device::ownership`,
//! `gpu_device::leader`): leaders writing per-block and per-warp outputs
//! and shared slots, grid-stride, blocked and striped elements, one row per
//! block, register tiles, the halo form, double buffers with one barrier a
//! step; and the attacks on them: every map's sets counted (each element
//! owned once), launches of another shape refused. On the simulator where
//! there is no GPU, on the GPU otherwise.

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels::ownership as k;

fn stream() -> Stream {
    Stream::new().unwrap()
}

/// Grid shapes of `blocks` blocks in one, two and three dimensions.
fn grids(blocks: u32) -> Vec<(u32, u32, u32)> {
    let mut shapes = vec![(blocks, 1, 1)];
    if blocks.is_multiple_of(2) {
        shapes.push((blocks / 2, 2, 1));
    }
    if blocks.is_multiple_of(6) {
        shapes.push((blocks / 6, 3, 2));
    }
    shapes
}

#[test]
fn a_block_leader_writes_its_blocks_sum_in_a_grid_of_any_shape() {
    let s = stream();
    for threads in [256u32, 100, 33, 1] {
        let blocks = 12u32;
        let n = (blocks * threads) as usize;
        let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        for grid in grids(blocks) {
            let mut sums = DeviceBuffer::to_device_sync(&[f32::NAN; 12], &s).unwrap();
            launch!(k::block_sums_by_leader[grid, threads, s](&dx, &mut sums)).unwrap();
            let got = sums.copy_to_host_sync(&s).unwrap();
            for (b, sum) in got.iter().enumerate() {
                let t = threads as usize;
                let want: f32 = x[b * t..(b + 1) * t].iter().sum();
                assert_eq!(*sum, want, "{threads} threads, grid {grid:?}, block {b}");
            }
        }
    }
}

#[test]
fn a_warp_leader_of_lane_0_or_31_writes_its_warps_sum() {
    let s = stream();
    let (blocks, threads) = (6u32, 96u32);
    let n = (blocks * threads) as usize;
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    let want: Vec<u32> = x.chunks(32).map(|w| w.iter().sum()).collect();
    for grid in grids(blocks) {
        let mut sums = DeviceBuffer::to_device_sync(&vec![u32::MAX; n / 32], &s).unwrap();
        launch!(k::warp_sums_by_lane_0[grid, threads, s](&dx, &mut sums)).unwrap();
        assert_eq!(
            sums.copy_to_host_sync(&s).unwrap(),
            want,
            "lane 0, grid {grid:?}"
        );
        let mut sums = DeviceBuffer::to_device_sync(&vec![u32::MAX; n / 32], &s).unwrap();
        launch!(k::warp_sums_by_lane_31[grid, threads, s](&dx, &mut sums)).unwrap();
        assert_eq!(
            sums.copy_to_host_sync(&s).unwrap(),
            want,
            "lane 31, grid {grid:?}"
        );
    }
}

#[test]
fn warp_leaders_write_their_warps_shared_slots_without_an_extra_barrier() {
    let s = stream();
    for threads in [1024u32, 256, 64] {
        let blocks = 6u32;
        let n = (blocks * threads) as usize;
        let x: Vec<u32> = (0..n as u32).map(|i| i % 1000).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        let mut sums = DeviceBuffer::to_device_sync(&[0u32; 6], &s).unwrap();
        launch!(k::block_sums_by_warp_slots[blocks, threads, s](&dx, &mut sums)).unwrap();
        let want: Vec<u32> = x.chunks(threads as usize).map(|b| b.iter().sum()).collect();
        assert_eq!(
            sums.copy_to_host_sync(&s).unwrap(),
            want,
            "{threads} threads"
        );
    }
}

#[test]
fn a_block_leader_owns_every_slot_of_a_per_block_shared_array() {
    let s = stream();
    let (blocks, threads) = (5u32, 40u32);
    let mut out = DeviceBuffer::<u32>::zeroed_on(200, &s).unwrap();
    launch!(k::broadcast_by_block_leader[blocks, threads, s](&mut out)).unwrap();
    let got = out.copy_to_host_sync(&s).unwrap();
    for (g, v) in got.iter().enumerate() {
        let (b, t) = (g as u32 / threads, g as u32 % threads);
        assert_eq!(*v, 10 * b + t % 3, "element {g}");
    }
}

/// Counts how many threads own each element under the grid-stride map.
#[test]
fn every_element_of_a_grid_stride_loop_has_one_owner() {
    let s = stream();
    for (grid, threads, len) in [
        ((3u32, 1u32, 1u32), 64u32, 1000usize),
        ((2, 3, 1), 33, 5000),
        ((2, 2, 2), 50, 399),
        ((7, 1, 1), 128, 7 * 128),
    ] {
        let mut out = DeviceBuffer::<u32>::zeroed_on(len, &s).unwrap();
        launch!(k::count_grid_stride[grid, threads, s](&mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        assert!(
            got.iter().all(|&c| c == 1),
            "grid {grid:?}, {threads} threads: {:?}",
            &got[..20.min(len)]
        );
    }
}

/// Blocked and striped: each element of the launch's tiles has one owner;
/// elements past the tiles have none.
#[test]
fn every_blocked_and_striped_element_has_one_owner() {
    let s = stream();
    for (grid, threads) in [((4u32, 1u32, 1u32), 64u32), ((2, 3, 1), 33), ((1, 1, 1), 1)] {
        let covered = |k: usize| (grid.0 * grid.1 * grid.2 * threads) as usize * k;
        let check = |got: Vec<u32>, k: usize, what: &str| {
            for (e, c) in got.iter().enumerate() {
                let want = u32::from(e < covered(k));
                assert_eq!(
                    *c, want,
                    "{what}<{k}>, grid {grid:?}, {threads} threads, element {e}"
                );
            }
        };
        macro_rules! count {
            ($kernel:ident, $k:literal) => {{
                let mut out = DeviceBuffer::<u32>::zeroed_on(covered($k) + 5, &s).unwrap();
                launch!(k::$kernel::<$k>[grid, threads, s](&mut out)).unwrap();
                check(out.copy_to_host_sync(&s).unwrap(), $k, stringify!($kernel));
            }};
        }
        count!(count_blocked, 1);
        count!(count_blocked, 3);
        count!(count_blocked, 4);
        count!(count_blocked, 16);
        count!(count_striped, 1);
        count!(count_striped, 3);
        count!(count_striped, 4);
        // A slice shorter than the tiles: the last elements are still owned once.
        let mut out =
            DeviceBuffer::<u32>::zeroed_on(covered(3).saturating_sub(7).max(1), &s).unwrap();
        launch!(k::count_striped::<3>[grid, threads, s](&mut out)).unwrap();
        assert!(out.copy_to_host_sync(&s).unwrap().iter().all(|&c| c == 1));
    }
}

#[test]
fn leaders_own_one_element_per_block_and_per_warp() {
    let s = stream();
    for (grid, threads) in [((5u32, 1u32, 1u32), 96u32), ((2, 3, 2), 70), ((3, 1, 1), 1)] {
        let blocks = (grid.0 * grid.1 * grid.2) as usize;
        let warps = blocks * (threads as usize).div_ceil(32);
        let mut per_block = DeviceBuffer::<u32>::zeroed_on(blocks + 3, &s).unwrap();
        let mut per_warp = DeviceBuffer::<u32>::zeroed_on(warps + 3, &s).unwrap();
        launch!(k::count_leaders[grid, threads, s](&mut per_block, &mut per_warp)).unwrap();
        let b = per_block.copy_to_host_sync(&s).unwrap();
        let w = per_warp.copy_to_host_sync(&s).unwrap();
        assert!(
            b[..blocks].iter().all(|&c| c == 1) && b[blocks..] == [0; 3],
            "{grid:?}: {b:?}"
        );
        assert!(
            w[..warps].iter().all(|&c| c == 1) && w[warps..] == [0; 3],
            "{grid:?}: {w:?}"
        );
    }
}

#[test]
fn blocked_runs_are_written_whole_and_cut_at_the_end() {
    let s = stream();
    for len in [64 * 16 * 3, 64 * 16 * 3 - 9, 100] {
        let mut out = DeviceBuffer::to_device_sync(&vec![0u32; len], &s).unwrap();
        launch!(k::blocked_runs_of_16[3, 64, s](&mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (e, v) in got.iter().enumerate() {
            assert_eq!(*v, e as u32 + 1, "len {len}, element {e}");
        }
    }
}

#[test]
fn one_block_per_row_covers_rows_wider_than_the_block() {
    let s = stream();
    for (rows, cols, threads) in [(7usize, 1000usize, 128u32), (70_000, 5, 32), (3, 4099, 256)] {
        for run in [1, 4] {
            let mut out = DeviceBuffer::<u32>::zeroed_on(rows * cols, &s).unwrap();
            let view = out.view_2d_mut(rows, cols).unwrap();
            match run {
                1 => launch!(k::mark_rows::<1>[rows, threads, s](view)).unwrap(),
                _ => launch!(k::mark_rows::<4>[rows, threads, s](view)).unwrap(),
            }
            let got = out.copy_to_host_sync(&s).unwrap();
            for (e, v) in got.iter().enumerate() {
                assert_eq!(
                    *v,
                    (e / cols) as u32 + 1,
                    "{rows} x {cols}, run {run}, element {e}"
                );
            }
        }
    }
}

#[test]
fn register_tiles_cover_the_matrix_once_with_vector_stores() {
    let s = stream();
    for (rows, cols) in [(300usize, 200usize), (128, 128), (1, 5)] {
        let grid = (cols.div_ceil(128), rows.div_ceil(128));
        let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &s).unwrap();
        launch!(k::mark_tiles_8x8[grid, 256, s](out.view_2d_mut(rows, cols).unwrap())).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (e, v) in got.iter().enumerate() {
            let (r, c) = (e / cols, e % cols);
            assert_eq!(*v, (r * 100_000 + c) as u32, "{rows} x {cols}: ({r}, {c})");
        }
        let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &s).unwrap();
        launch!(k::mark_tiles_8x8_any_block[grid, 256, s](out.view_2d_mut(rows, cols).unwrap()))
            .unwrap();
        assert_eq!(out.copy_to_host_sync(&s).unwrap(), got);
    }
}

/// Attack: launch register tiles made for 256 threads with blocks of
/// another size, where the threads' tiles would overlap (more threads) or
/// leave gaps (fewer). The launcher refuses, naming the output and the map.
#[test]
fn register_tiles_in_a_launch_of_another_block_size_are_refused() {
    let s = stream();
    let mut out = DeviceBuffer::<u32>::zeroed_on(256 * 256, &s).unwrap();
    for block in [(512u32, 1u32, 1u32), (128, 1, 1), (16, 8, 1), (32, 8, 2)] {
        let refused = launch!(k::mark_tiles_8x8_any_block[(2, 2), block, s](out.view_2d_mut(256, 256).unwrap()));
        match refused {
            Err(Error::InvalidLaunch { kernel, reason }) => {
                assert!(kernel.contains("mark_tiles_8x8_any_block"), "{kernel}");
                assert!(
                    reason.contains("`out`")
                        && reason.contains("Tiles<")
                        && reason.contains("256 threads"),
                    "{reason}"
                );
            }
            other => panic!("block {block:?}: expected InvalidLaunch, got {other:?}"),
        }
    }
    // Nothing ran.
    assert!(out.copy_to_host_sync(&s).unwrap().iter().all(|&v| v == 0));
    // The same shape as a 16 x 16 block is fine: the map counts threads by rank.
    launch!(k::mark_tiles_8x8_any_block[(2, 2), (16, 16), s](out.view_2d_mut(256, 256).unwrap()))
        .unwrap();
}

#[test]
fn the_halo_form_fills_the_span_with_one_barrier() {
    let s = stream();
    for n in [128usize * 5, 1000, 3] {
        let x: Vec<f32> = (0..n).map(|i| (i % 11) as f32).collect();
        let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
        let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; n], &s).unwrap();
        launch!(k::halo_sum5[n.div_ceil(128), 128, s](&dx, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (i, &got) in got.iter().enumerate() {
            let want: f32 = (i as isize - 2..=i as isize + 2)
                .filter(|&j| j >= 0 && (j as usize) < n)
                .map(|j| x[j as usize])
                .sum();
            assert_eq!(got, want, "n {n}, element {i}");
        }
    }
}

#[test]
fn a_shared_tile_written_in_transposed_register_tiles_reads_back_as_vectors() {
    let s = stream();
    let rows: usize = 64 * 3 + 5;
    let a: Vec<f32> = (0..rows * 16).map(|i| i as f32).collect();
    let da = DeviceBuffer::to_device_sync(&a, &s).unwrap();
    let cols = rows.div_ceil(64) * 64;
    let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; 16 * cols], &s).unwrap();
    launch!(k::transpose_by_tiles[cols / 64, 256, s](&da, rows as u32, out.view_2d_mut(16, cols).unwrap()))
        .unwrap();
    let got = out.copy_to_host_sync(&s).unwrap();
    for kk in 0..16 {
        for m in 0..cols {
            let want = if m < rows { a[m * 16 + kk] } else { 0.0 };
            assert_eq!(got[kk * cols + m], want, "({kk}, {m})");
        }
    }
}

#[test]
fn a_double_buffer_alternates_with_one_barrier_per_step() {
    let s = stream();
    for steps in [0u32, 1, 2, 7] {
        let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; 128], &s).unwrap();
        launch!(k::ping_pong[2, 64, s](steps, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (g, v) in got.iter().enumerate() {
            let next = (g % 64 + 1) % 64;
            let mut want = 0u32;
            for step in 1..=steps {
                // Step 1 reads the first writes (`t`), step `s` those of step `s - 1`.
                want += if step == 1 {
                    next as u32
                } else {
                    (step - 1) * 1000 + next as u32
                };
            }
            assert_eq!(*v, want, "{steps} steps, thread {g}");
        }
    }
}

#[test]
fn an_alternating_double_buffer_is_one_loop_body() {
    let s = stream();
    for steps in [0u32, 1, 2, 7] {
        let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; 128], &s).unwrap();
        launch!(k::ping_pong_alternating[2, 64, s](steps, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (g, v) in got.iter().enumerate() {
            let next = (g % 64 + 1) % 64;
            // As `ping_pong`, plus the neighbour's slot written after
            // `into_block`.
            let mut want = 7 * next as u32;
            for step in 1..=steps {
                want += if step == 1 {
                    next as u32
                } else {
                    (step - 1) * 1000 + next as u32
                };
            }
            assert_eq!(*v, want, "{steps} steps, thread {g}");
        }
    }
}

/// Attack: leaders found in divergent code (after some lanes returned, in a
/// loop whose trip count differs per lane): each block and each warp still
/// has one leader per lane number, so each element is written once.
#[test]
fn a_leader_in_a_divergent_branch_is_still_the_only_one() {
    let s = stream();
    for (grid, threads) in [((3u32, 2u32, 1u32), 96u32), ((4, 1, 1), 64)] {
        let blocks = (grid.0 * grid.1 * grid.2) as usize;
        let warps = blocks * threads as usize / 32;
        let mut per_block = DeviceBuffer::<u32>::zeroed_on(blocks, &s).unwrap();
        let mut lane_31 = DeviceBuffer::<u32>::zeroed_on(warps, &s).unwrap();
        let mut lane_0 = DeviceBuffer::<u32>::zeroed_on(warps, &s).unwrap();
        launch!(gpu_test_kernels::attacks::leaders_in_divergent_code[grid, threads, s](
            &mut per_block,
            &mut lane_31,
            &mut lane_0
        ))
        .unwrap();
        for (what, buffer) in [
            ("block", per_block),
            ("lane 31", lane_31),
            ("lane 0", lane_0),
        ] {
            let got = buffer.copy_to_host_sync(&s).unwrap();
            assert!(
                got.iter().all(|&c| c == 1),
                "{what}, grid {grid:?}: {got:?}"
            );
        }
    }
}
