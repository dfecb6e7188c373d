//! TMA multicast (`TmaTileSlot::with_multicast`): one copy of the box
//! lands in the tile of every block of the cluster, round after round,
//! with the odd ranks reading late (no copy lands under a reader), for
//! clusters of 2 and 4; and the attacks on its soundness, blocks not in
//! the same scope (one returned, one in another tile's scope, one in a
//! sync), asking for another box or map, or making fewer or more loads,
//! each a failed launch naming the block. On the simulator, and on a GPU
//! of compute capability 9.0.

use crate::common;

use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream, Swizzle, TensorMap};
use gpu_test_kernels::tma_multicast::{
    tma_multicast, tma_multicast_out_of_step, tma_multicast_peer_panics, MULTICAST_ROUNDS,
    MULTICAST_THREADS,
};

/// Rows and columns of the tensor the kernels copy from: element (r, c)
/// holds `r * COLS + c + 1`.
const ROWS: usize = 16 * 8 * 4;
const COLS: usize = 32;

fn tensor(stream: &Stream) -> DeviceBuffer<f32> {
    let data: Vec<f32> = (0..ROWS * COLS).map(|i| i as f32 + 1.0).collect();
    DeviceBuffer::to_device_sync(&data, stream).unwrap()
}

#[test]
fn every_block_of_the_cluster_gets_the_boxes_it_shares() {
    let stream = Stream::new().unwrap();
    let buffer = tensor(&stream);
    let map = TensorMap::matrix(&buffer, (ROWS, COLS, COLS), (16, 32), Swizzle::None).unwrap();
    macro_rules! run {
        ($c:literal, $clusters:expr) => {{
            let blocks: u32 = $c * $clusters;
            let n = blocks as usize * MULTICAST_THREADS;
            let mut out = DeviceBuffer::<[f32; MULTICAST_ROUNDS]>::zeroed_on(n, &stream).unwrap();
            launch!(tma_multicast::<$c>[blocks, MULTICAST_THREADS, stream](&map, &mut out))
                .unwrap();
            let got = out.copy_to_host_sync(&stream).unwrap();
            for (i, seen) in got.iter().enumerate() {
                let (block, t) = (i / MULTICAST_THREADS, i % MULTICAST_THREADS);
                let want: [f32; MULTICAST_ROUNDS] = core::array::from_fn(|r| {
                    ((16 * r + t / 32) * COLS + t % 32) as f32 + 1.0
                });
                assert_eq!(
                    seen, &want,
                    "thread {t} of block {block} (rank {}), clusters of {}",
                    block % $c, $c
                );
            }
        }};
    }
    run!(2, 1);
    run!(2, 3);
    run!(4, 2);
}

/// `tma_multicast_out_of_step` in `mode` on one cluster of 2: its output,
/// or the failure's description (the simulator's report; a GPU's trap
/// says less).
fn out_of_step(mode: u32) -> Result<Vec<f32>, String> {
    let stream = Stream::new().unwrap();
    let buffer = tensor(&stream);
    let map = TensorMap::matrix(&buffer, (ROWS, COLS, COLS), (16, 32), Swizzle::None).unwrap();
    let copy = tensor(&stream);
    let other = TensorMap::matrix(&copy, (ROWS, COLS, COLS), (16, 32), Swizzle::None).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(2 * MULTICAST_THREADS, &stream).unwrap();
    launch!(tma_multicast_out_of_step[2, MULTICAST_THREADS, stream](
        mode, &map, &other, &mut out
    ))
    .unwrap();
    finished(&stream, "tma_multicast_out_of_step")?;
    Ok(out.copy_to_host_sync(&stream).unwrap())
}

/// The stream's work done, or the description of kernel `name`'s failure
/// (any other error panics).
fn finished(stream: &Stream, name: &str) -> Result<(), String> {
    match stream.synchronize() {
        Ok(()) => Ok(()),
        Err(Error::KernelFailed { kernel, driver, .. }) => {
            assert_eq!(kernel, name);
            Err(driver.description)
        }
        Err(other) => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// The attack `mode` fails the launch: the simulator's report of it (a
/// GPU's trap says less: `None` there).
fn out_of_step_report(mode: u32) -> Option<String> {
    let description = out_of_step(mode).expect_err("the launch must fail");
    (backend() == Backend::Simulator).then_some(description)
}

/// The attack `mode` fails the launch; on the simulator the report says
/// which block was not in the scope (`rank`, or either when both enter a
/// scope and the first to check is reported), and what it does instead.
fn out_of_step_fails(mode: u32, rank: Option<u32>, why: &str) {
    if let Some(description) = out_of_step_report(mode) {
        let expected =
            format!("of the cluster is not in this TmaTileSlot::with_multicast: it {why}");
        assert!(description.contains(&expected), "{description}");
        if let Some(rank) = rank {
            let named = format!("block rank {rank} of the cluster");
            assert!(description.contains(&named), "{description}");
        }
    }
}

/// The attack `mode` fails the launch; on the simulator the report
/// contains `expected`.
fn out_of_step_fails_saying(mode: u32, expected: &str) {
    if let Some(description) = out_of_step_report(mode) {
        assert!(description.contains(expected), "{description}");
    }
}

/// In step, both blocks get the box at (0, 0).
#[test]
fn blocks_in_step_share_one_box() {
    let got = out_of_step(9).unwrap();
    for (i, v) in got.iter().enumerate() {
        let t = i % MULTICAST_THREADS;
        assert_eq!(*v, ((t / 32) * COLS + t % 32) as f32 + 1.0, "thread {i}");
    }
}

/// The attack: a block that returned before the scope (its shared memory
/// is gone: a copy into it would write freed memory).
#[test]
fn a_multicast_scope_without_a_block_that_returned_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(0, Some(1), "has finished the kernel");
    }
}

/// The attack: the blocks enter the scopes of two different tiles (a copy
/// to rank 0's tile offset would land in another tile of rank 1's).
#[test]
fn blocks_in_the_scopes_of_two_tiles_fail_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(1, None, "enters the multicast scope of another TMA tile");
    }
}

/// The attack: a block syncs the cluster while the other enters the scope.
#[test]
fn a_sync_meeting_a_multicast_scope_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(2, Some(1), "is in a Cluster::sync");
    }
}

/// The attack: rank 1 asks for another box than rank 0 (rows 16 lower):
/// the copy would silently give it rank 0's. Rank 0 compares every
/// block's request with its own before it copies: the launch fails,
/// naming the block and both boxes.
#[test]
fn a_block_asking_for_another_box_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails_saying(
            4,
            "block rank 1 of the cluster asked for the box at [0, 16, 0, 0, 0], rank 0 for [0, 0, 0, 0, 0]",
        );
    }
}

/// The attack: rank 1 asks for the same box of another tensor map (of
/// another buffer with the same contents): the launch fails, naming it.
#[test]
fn a_block_loading_from_another_map_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails_saying(
            5,
            "block rank 1 of the cluster passed another tensor map than rank 0",
        );
    }
}

/// The attack: rank 1 makes one load fewer than rank 0, which would wait
/// for it forever (a hang on the GPU before leaving became a request of
/// its own). The launch fails, naming the block, on the GPU too.
#[test]
fn a_block_making_fewer_loads_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails_saying(
            3,
            "block rank 1 of the cluster left the multicast scope while rank 0 asks for the box at [0, 0, 0, 0, 0]",
        );
    }
}

/// The attack: rank 1 makes one load more than rank 0 (it would wait for
/// a copy that never comes): the launch fails, naming it.
#[test]
fn a_block_making_more_loads_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails_saying(
            6,
            "block rank 1 of the cluster asked for the box at [0, 0, 0, 0, 0] after rank 0's last load",
        );
    }
}

/// The review's attack: a block fails right after its load while rank 0
/// may be copying into every block. The launch fails with its panic; on
/// the simulator never with a report of freed memory reached (the blocks'
/// shared memory now outlives the failing block's thread until every block
/// of the cluster ended; before, about one run in a hundred read a freed
/// barrier). A failed launch ends its device: one launch, in a process of
/// its own.
#[test]
fn a_block_failing_during_a_multicast_fails_the_launch_cleanly() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let data: Vec<f32> = (0..160 * 64).map(|i| i as f32).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (160, 64, 64), (160, 64), Swizzle::None).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(8 * 32, &stream).unwrap();
    launch!(tma_multicast_peer_panics[8, 32, stream](&map, &mut out)).unwrap();
    let description =
        finished(&stream, "tma_multicast_peer_panics").expect_err("the launch must fail");
    if backend() == Backend::Simulator {
        assert!(
            description.contains("rank 7 fails after its load"),
            "{description}"
        );
    }
}
