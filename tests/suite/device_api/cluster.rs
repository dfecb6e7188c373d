//! Thread-block clusters (`#[kernel(cluster = ...)]`, a `Cluster`
//! parameter; CUDA's `__cluster_dims__` and `this_cluster()`): each block
//! sees its rank, its index in the cluster and its cluster's, for clusters
//! of 2, 4 and 8 blocks along x and of 2 x 2; a cluster sync orders every
//! block's writes before every block's reads; distributed shared memory
//! (`Cluster::exchange`) reads the next block's slots. The refusals, each
//! naming the kernel: a grid that is not a whole number of clusters, a
//! cluster shape other than the declared one, a cluster launch of a kernel
//! that declares none, a cluster kernel in a graph, a rank outside the
//! cluster; and the attacks on the exchange's soundness, blocks out of step
//! (a sync meeting an exchange, two arrays, a block that returned early),
//! each a failed launch naming the block. On the simulator, and on a GPU of compute capability 9.0.

use crate::common;

use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, LaunchConfig, Stream};
use gpu_test_kernels::cluster::{
    cluster_counts, cluster_out_of_step, cluster_rank_out_of_range, cluster_ring, cluster_square,
    not_a_cluster_kernel, Seen, CLUSTER_BLOCK, CLUSTER_ROUNDS,
};

/// What thread `t` of block `(bx, by)` of a grid of `(gx, gy)` blocks in
/// clusters of `(cx, cy)` must see (see [`Seen`]).
fn expected(t: usize, (bx, by): (u32, u32), (gx, gy): (u32, u32), (cx, cy): (u32, u32)) -> Seen {
    let (ix, iy) = (bx % cx, by % cy);
    let rank = ix + cx * iy;
    let size = cx * cy;
    let next = (rank + 1) % size;
    let slot = (t + 1) % CLUSTER_BLOCK;
    [
        rank,
        size,
        ix,
        iy,
        0,
        cx,
        cy,
        1,
        bx / cx,
        by / cy,
        0,
        gx / cx,
        gy / cy,
        1000 * next + slot as u32,
    ]
}

fn check(got: &[Seen], grid: (u32, u32), cluster: (u32, u32)) {
    let width = grid.0 as usize * CLUSTER_BLOCK;
    for (i, seen) in got.iter().enumerate() {
        let (row, col) = (i / width, i % width);
        let block = ((col / CLUSTER_BLOCK) as u32, row as u32);
        let want = expected(col % CLUSTER_BLOCK, block, grid, cluster);
        assert_eq!(
            seen,
            &want,
            "thread {} of block {block:?}, grid {grid:?}, clusters {cluster:?}",
            col % CLUSTER_BLOCK
        );
    }
}

#[test]
fn each_block_reads_the_next_blocks_shared_memory_in_clusters_along_x() {
    let stream = Stream::new().unwrap();
    macro_rules! ring {
        ($c:literal, $clusters:expr) => {{
            let blocks: u32 = $c * $clusters;
            let n = blocks as usize * CLUSTER_BLOCK;
            let mut out = DeviceBuffer::<Seen>::zeroed_on(n, &stream).unwrap();
            launch!(cluster_ring::<$c>[blocks, CLUSTER_BLOCK, stream](&mut out)).unwrap();
            check(&out.copy_to_host_sync(&stream).unwrap(), (blocks, 1), ($c, 1));
        }};
    }
    ring!(2, 1);
    ring!(2, 3);
    ring!(4, 2);
    ring!(8, 2);
}

#[test]
fn each_block_reads_the_next_blocks_shared_memory_in_clusters_of_2_by_2() {
    let stream = Stream::new().unwrap();
    for (gx, gy) in [(2u32, 2u32), (4, 2), (2, 6)] {
        let width = gx as usize * CLUSTER_BLOCK;
        let mut out = DeviceBuffer::<Seen>::zeroed_on(width * gy as usize, &stream).unwrap();
        launch!(cluster_square[(gx, gy), CLUSTER_BLOCK, stream](
            out.view_2d_mut(gy as usize, width).unwrap()
        ))
        .unwrap();
        check(&out.copy_to_host_sync(&stream).unwrap(), (gx, gy), (2, 2));
    }
}

#[test]
fn a_cluster_sync_orders_every_blocks_writes_before_the_reads() {
    let stream = Stream::new().unwrap();
    for (clusters, threads) in [(1u32, 32u32), (3, 100)] {
        let blocks = 2 * clusters;
        let mut counters = DeviceBuffer::<u32>::zeroed_on(clusters as usize, &stream).unwrap();
        let n = (blocks * threads) as usize;
        let mut out = DeviceBuffer::<u32>::zeroed_on(n, &stream).unwrap();
        launch!(cluster_counts[blocks, threads, stream](&mut counters, &mut out)).unwrap();
        assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![1; n]);
        let counts = counters.copy_to_host_sync(&stream).unwrap();
        assert_eq!(
            counts,
            vec![CLUSTER_ROUNDS * 2 * threads; clusters as usize]
        );
    }
}

/// The launch's refusal: the kernel's name and the reason.
fn refusal(err: Error) -> (&'static str, String) {
    match err {
        Error::InvalidLaunch { kernel, reason } => (kernel, reason),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// A grid that is not a whole number of clusters has blocks with no
/// cluster: refused before the launch.
#[test]
fn a_grid_that_is_not_a_whole_number_of_clusters_is_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<Seen>::zeroed_on(3 * CLUSTER_BLOCK, &stream).unwrap();
    let err = launch!(cluster_ring::<2>[3, CLUSTER_BLOCK, stream](&mut out)).unwrap_err();
    let (kernel, reason) = refusal(err);
    assert_eq!(kernel, "cluster_ring");
    assert!(
        reason.contains("the grid (3, 1, 1) is not a whole number of its clusters of (2, 1, 1)"),
        "{reason}"
    );
    let mut out = DeviceBuffer::<Seen>::zeroed_on(2 * 3 * CLUSTER_BLOCK, &stream).unwrap();
    let err = launch!(cluster_square[(2, 3), CLUSTER_BLOCK, stream](
        out.view_2d_mut(3, 2 * CLUSTER_BLOCK).unwrap()
    ))
    .unwrap_err();
    assert!(refusal(err).1.contains("(2, 3, 1)"));
}

/// The attack: a cluster launch with a shape the kernel did not declare
/// (its witness and shared memory assume the declared one).
#[test]
fn a_cluster_shape_other_than_the_declared_one_is_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<Seen>::zeroed_on(4 * CLUSTER_BLOCK, &stream).unwrap();
    let config = LaunchConfig::new(4, CLUSTER_BLOCK)
        .stream(&stream)
        .cluster(4);
    let err = cluster_ring::Launcher::new(config)
        .launch::<2>(&mut out)
        .unwrap_err();
    let (kernel, reason) = refusal(err);
    assert_eq!(kernel, "cluster_ring");
    assert!(
        reason.contains("asks for thread-block clusters of (4, 1, 1) blocks")
            && reason.contains("declares clusters of (2, 1, 1)"),
        "{reason}"
    );
    // The declared shape, asked for explicitly, launches.
    let config = LaunchConfig::new(4, CLUSTER_BLOCK)
        .stream(&stream)
        .cluster(2);
    cluster_ring::Launcher::new(config)
        .launch::<2>(&mut out)
        .unwrap();
    check(&out.copy_to_host_sync(&stream).unwrap(), (4, 1), (2, 1));
}

#[test]
fn a_cluster_launch_of_a_kernel_that_declares_no_cluster_is_refused() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    let config = LaunchConfig::new(2, 32).stream(&stream).cluster(2);
    let err = not_a_cluster_kernel::Launcher::new(config)
        .launch(&mut out)
        .unwrap_err();
    let (kernel, reason) = refusal(err);
    assert_eq!(kernel, "not_a_cluster_kernel");
    assert!(reason.contains("declares no cluster shape"), "{reason}");
}

#[test]
fn a_cluster_kernel_is_not_captured_into_a_graph() {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<Seen>::zeroed_on(2 * CLUSTER_BLOCK, &stream).unwrap();
    let captured = stream.capture(|s| {
        launch!(cluster_ring::<2>[2, CLUSTER_BLOCK, s](&mut out))?;
        Ok(())
    });
    let err = captured.unwrap_err();
    assert!(
        err.to_string().contains("not captured into a graph"),
        "{err}"
    );
}

/// The attack: a read of a rank outside the cluster (whose shared memory
/// does not exist) fails the launch: on the simulator a report naming the
/// kernel and the rank, on a GPU a trap. A failed launch ends its device:
/// in a process of its own.
#[test]
fn a_rank_outside_the_cluster_fails_the_launch() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(2 * CLUSTER_BLOCK, &stream).unwrap();
    // Rank 1 is in the cluster: its slot 0 is 0.
    launch!(cluster_rank_out_of_range[2, CLUSTER_BLOCK, stream](1, &mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![0; 2 * CLUSTER_BLOCK]
    );
    launch!(cluster_rank_out_of_range[2, CLUSTER_BLOCK, stream](2, &mut out)).unwrap();
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => {
            assert_eq!(kernel, "cluster_rank_out_of_range");
            if backend() == Backend::Simulator {
                assert!(
                    driver
                        .description
                        .contains("block rank 2 is outside the cluster of 2 blocks"),
                    "{}",
                    driver.description
                );
            }
        }
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// `cluster_out_of_step` in `mode` on one cluster of 2: its output, or the
/// failure's description (the simulator's report; a GPU's trap says less).
fn out_of_step(mode: u32) -> Result<Vec<u32>, String> {
    let stream = Stream::new().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(2 * CLUSTER_BLOCK, &stream).unwrap();
    launch!(cluster_out_of_step[2, CLUSTER_BLOCK, stream](mode, &mut out)).unwrap();
    match stream.synchronize() {
        Ok(()) => Ok(out.copy_to_host_sync(&stream).unwrap()),
        Err(Error::KernelFailed { kernel, driver, .. }) => {
            assert_eq!(kernel, "cluster_out_of_step");
            Err(driver.description)
        }
        Err(other) => panic!("expected KernelFailed, got {other:?}"),
    }
}

/// The attack `mode` fails the launch; on the simulator the report says
/// which block was not in the exchange (`rank`, or either when both
/// exchange and the first to check is reported), and why.
fn out_of_step_fails(mode: u32, rank: Option<u32>, why: &str) {
    let description = out_of_step(mode).expect_err("the launch must fail");
    if backend() == Backend::Simulator {
        let expected = format!("of the cluster is not in this Cluster::exchange: it {why}");
        assert!(description.contains(&expected), "{description}");
        if let Some(rank) = rank {
            let named = format!("block rank {rank} of the cluster");
            assert!(description.contains(&named), "{description}");
        }
    }
}

/// In step, the mode's kernel exchanges as `cluster_ring` does.
#[test]
fn blocks_in_step_exchange_through_the_pairs() {
    let got = out_of_step(9).unwrap();
    for (i, v) in got.iter().enumerate() {
        let (rank, t) = (i / CLUSTER_BLOCK, i % CLUSTER_BLOCK);
        assert_eq!(*v, 1000 * ((rank as u32 + 1) % 2) + t as u32, "thread {i}");
    }
}

/// The attack: one block syncs then exchanges, the other exchanges then
/// syncs, so the hardware barriers pair one's sync with the other's
/// exchange; without the pairs' tags the exchange would read slots its
/// owner is still writing.
#[test]
fn a_sync_meeting_an_exchange_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(0, Some(0), "is in a Cluster::sync");
    }
}

/// The attack: the blocks exchange different arrays (each would read a
/// peer array its owner never wrote).
#[test]
fn blocks_exchanging_different_arrays_fail_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(1, None, "exchanges another shared array");
    }
}

/// The attack: a block returns before the exchange (its shared memory is
/// gone once it exits: a peer's read of it would be undefined).
#[test]
fn an_exchange_with_a_block_that_returned_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(2, Some(0), "has finished the kernel");
    }
}

/// The attack: a block returns while the other syncs (which is fine), then
/// the other exchanges: the returned block must not be read.
#[test]
fn an_exchange_after_a_block_returned_and_a_sync_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        out_of_step_fails(3, Some(0), "has finished the kernel");
    }
}

/// The attack: a sync inside an exchange's `read` (the witness is `Copy`,
/// the closure may capture it): its barriers would fall between the
/// exchange's, where the other block has moved on.
#[test]
fn a_sync_inside_an_exchange_fails_the_launch() {
    if common::faults::in_own_process(&[]) {
        let description = out_of_step(5).expect_err("the launch must fail");
        if backend() == Backend::Simulator {
            assert!(
                description.contains("inside an exchange's `read`: cluster operations do not nest"),
                "{description}"
            );
        }
    }
}

/// A block that returns while another syncs is no error: the end of the
/// kernel takes part in the sync.
#[test]
fn a_block_may_return_while_another_syncs() {
    let got = out_of_step(4).unwrap();
    assert_eq!(got[..CLUSTER_BLOCK], vec![0; CLUSTER_BLOCK][..]);
    assert_eq!(got[CLUSTER_BLOCK..], vec![7; CLUSTER_BLOCK][..]);
}
