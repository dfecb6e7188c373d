//! The collectives of one process driving every device (`Communicators`).

use super::{blocks, devices, filled, rank_values, streams_of};
use crate::common::{hold, one_at_a_time, size};
use gpu_kernels::fill;
use gpu_runtime::{launch, Communicators, DeviceBuffer, Error, ReduceOp, NVLS_ENV};

pub fn all_reduce_sums_and_maxes_across_every_device() {
    let _turn = one_at_a_time(); // see `run_rank_processes`
    let devices = devices();
    let ranks = devices.len();
    let streams = streams_of(&devices);
    let mut comms = Communicators::new(&devices).unwrap();
    assert_eq!(comms.len(), ranks);
    assert_eq!(comms.devices(), devices);
    assert_eq!(
        std::env::var(NVLS_ENV).as_deref(),
        Ok("0"),
        "NVLink multicast stays off"
    );
    let n = size(1 << 20, 1000);
    let sends: Vec<DeviceBuffer<f32>> = (0..ranks)
        .map(|r| DeviceBuffer::to_device_sync(&rank_values(r, n), &streams[r]).unwrap())
        .collect();
    let mut sums: Vec<DeviceBuffer<f32>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(n, s).unwrap())
        .collect();
    comms
        .all_reduce(sends.iter(), sums.iter_mut(), ReduceOp::Sum, &streams)
        .unwrap();
    let expected: Vec<f32> = (0..n)
        .map(|i| (0..ranks).map(|r| (r + 1 + i % 7) as f32).sum())
        .collect();
    for (r, sum) in sums.iter().enumerate() {
        assert_eq!(
            sum.copy_to_host_sync(&streams[r]).unwrap(),
            expected,
            "rank {r}"
        );
    }
    // In place, max, on integers.
    let mut ints: Vec<DeviceBuffer<i32>> = (0..ranks)
        .map(|r| {
            let values: Vec<i32> = (0..n as i32)
                .map(|i| {
                    if i % ranks as i32 == r as i32 {
                        100 + i
                    } else {
                        -i
                    }
                })
                .collect();
            DeviceBuffer::to_device_sync(&values, &streams[r]).unwrap()
        })
        .collect();
    comms
        .all_reduce_in_place(ints.iter_mut(), ReduceOp::Max, &streams)
        .unwrap();
    let expected: Vec<i32> = (0..n as i32).map(|i| 100 + i).collect();
    for (r, max) in ints.iter().enumerate() {
        assert_eq!(
            max.copy_to_host_sync(&streams[r]).unwrap(),
            expected,
            "rank {r}"
        );
    }
}

pub fn broadcast_reduce_scatter_and_all_gather_move_the_right_blocks() {
    let _turn = one_at_a_time(); // see `run_rank_processes`
    let devices = devices();
    let ranks = devices.len();
    let streams = streams_of(&devices);
    let mut comms = Communicators::all_devices().unwrap();
    let n = size(1 << 16, 64);
    // Broadcast from the last rank, in place.
    let root = ranks - 1;
    let mut bufs: Vec<DeviceBuffer<u64>> = (0..ranks)
        .map(|r| DeviceBuffer::to_device_sync(&vec![r as u64; n], &streams[r]).unwrap())
        .collect();
    comms
        .broadcast_in_place(bufs.iter_mut(), root, &streams)
        .unwrap();
    for (r, b) in bufs.iter().enumerate() {
        assert_eq!(
            b.copy_to_host_sync(&streams[r]).unwrap(),
            vec![root as u64; n],
            "rank {r}"
        );
    }
    // Out of place, from rank 0.
    let mut received: Vec<DeviceBuffer<u64>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(n, s).unwrap())
        .collect();
    let sources: Vec<DeviceBuffer<u64>> = (0..ranks)
        .map(|r| DeviceBuffer::to_device_sync(&vec![10 + r as u64; n], &streams[r]).unwrap())
        .collect();
    comms
        .broadcast(sources.iter(), received.iter_mut(), 0, &streams)
        .unwrap();
    for (r, b) in received.iter().enumerate() {
        assert_eq!(
            b.copy_to_host_sync(&streams[r]).unwrap(),
            vec![10; n],
            "rank {r}"
        );
    }
    // Reduce-scatter: rank r sends element i = r * 1000 + i; rank r receives
    // block r of the sum.
    let sends: Vec<DeviceBuffer<f64>> = (0..ranks)
        .map(|r| {
            let v: Vec<f64> = (0..n * ranks).map(|i| (r * 1000 + i) as f64).collect();
            DeviceBuffer::to_device_sync(&v, &streams[r]).unwrap()
        })
        .collect();
    let mut blocks_out: Vec<DeviceBuffer<f64>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(n, s).unwrap())
        .collect();
    comms
        .reduce_scatter(sends.iter(), blocks_out.iter_mut(), ReduceOp::Sum, &streams)
        .unwrap();
    let base: usize = (0..ranks).map(|r| r * 1000).sum();
    for (r, b) in blocks_out.iter().enumerate() {
        let expected: Vec<f64> = (0..n)
            .map(|i| (base + ranks * (r * n + i)) as f64)
            .collect();
        assert_eq!(
            b.copy_to_host_sync(&streams[r]).unwrap(),
            expected,
            "rank {r}"
        );
    }
    // All-gather: rank r contributes `r` everywhere; everyone receives 0..ranks in blocks.
    let parts: Vec<DeviceBuffer<u8>> = (0..ranks)
        .map(|r| DeviceBuffer::to_device_sync(&vec![r as u8; n], &streams[r]).unwrap())
        .collect();
    let mut gathered: Vec<DeviceBuffer<u8>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(n * ranks, s).unwrap())
        .collect();
    comms
        .all_gather(parts.iter(), gathered.iter_mut(), &streams)
        .unwrap();
    let expected: Vec<u8> = (0..ranks).flat_map(|r| vec![r as u8; n]).collect();
    for (r, g) in gathered.iter().enumerate() {
        assert_eq!(
            g.copy_to_host_sync(&streams[r]).unwrap(),
            expected,
            "rank {r}"
        );
    }
}

pub fn an_all_reduce_waits_for_its_inputs_and_is_waited_for() {
    let _turn = one_at_a_time();
    let devices = devices();
    let ranks = devices.len();
    let streams = streams_of(&devices);
    let writers = streams_of(&devices);
    let mut comms = Communicators::new(&devices).unwrap();
    let n = size(1 << 16, 1 << 10);
    let mut bufs: Vec<DeviceBuffer<f32>> = writers.iter().map(|s| filled(n, 0.0, s)).collect();
    // Rank 0's input is written on a held stream: the all-reduce on another
    // stream must wait for it (and the other ranks for rank 0).
    let held = hold(&writers[0], 300);
    for (r, b) in bufs.iter_mut().enumerate() {
        launch!(fill[blocks(n), 256, writers[r]]((r + 1) as f32, b)).unwrap();
    }
    comms
        .all_reduce_in_place(bufs.iter_mut(), ReduceOp::Sum, &streams)
        .unwrap();
    // Read on the writer streams: they wait for the all-reduce in turn.
    let total = (ranks * (ranks + 1) / 2) as f32;
    for (r, b) in bufs.iter().enumerate() {
        assert_eq!(
            b.copy_to_host_sync(&writers[r]).unwrap(),
            vec![total; n],
            "rank {r}"
        );
    }
    held.join().unwrap();
}

pub fn collective_arguments_are_checked() {
    let _turn = one_at_a_time(); // see `run_rank_processes`
    let devices = devices();
    let ranks = devices.len();
    let streams = streams_of(&devices);
    let mut comms = Communicators::new(&devices).unwrap();
    let mut bufs: Vec<DeviceBuffer<f32>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(8, s).unwrap())
        .collect();
    let invalid = |e: Error| match e {
        Error::InvalidCollective { reason, .. } => reason,
        other => panic!("expected InvalidCollective, got {other:?}"),
    };
    let reason = invalid(
        comms
            .all_reduce_in_place(bufs.iter_mut(), ReduceOp::Sum, &streams[1..])
            .unwrap_err(),
    );
    assert!(
        reason.contains(&format!("{} streams for {ranks} ranks", ranks - 1)),
        "{reason}"
    );
    let mut swapped = streams.clone();
    swapped.swap(0, 1);
    let reason = invalid(
        comms
            .all_reduce_in_place(bufs.iter_mut(), ReduceOp::Sum, &swapped)
            .unwrap_err(),
    );
    assert!(
        reason.contains("rank 0's stream is on device 1, its communicator on device 0"),
        "{reason}"
    );
    let reason = invalid(
        comms
            .broadcast_in_place(bufs.iter_mut(), ranks, &streams)
            .unwrap_err(),
    );
    assert!(
        reason.contains(&format!("root {ranks} is not a rank")),
        "{reason}"
    );
    let mut short: Vec<DeviceBuffer<f32>> = streams
        .iter()
        .map(|s| DeviceBuffer::zeroed_on(4, s).unwrap())
        .collect();
    let reason = invalid(
        comms
            .all_reduce(bufs.iter(), short.iter_mut(), ReduceOp::Sum, &streams)
            .unwrap_err(),
    );
    assert!(
        reason.contains("rank 0 sends 8 and receives 4 elements"),
        "{reason}"
    );
    let reason = invalid(
        comms
            .all_gather(bufs.iter(), short.iter_mut(), &streams)
            .unwrap_err(),
    );
    assert!(reason.contains("one block per rank"), "{reason}");
    short[ranks - 1] = DeviceBuffer::zeroed_on(5, &streams[ranks - 1]).unwrap();
    let reason = invalid(
        comms
            .all_reduce_in_place(short.iter_mut(), ReduceOp::Sum, &streams)
            .unwrap_err(),
    );
    assert!(
        reason.contains(&format!("rank 0 gives 4 elements, rank {} 5", ranks - 1)),
        "{reason}"
    );
    let reason = invalid(Communicators::new(&[devices[0], devices[1], devices[0]]).unwrap_err());
    assert!(reason.contains("device 0 is listed twice"), "{reason}");
    let reason = invalid(Communicators::new(&[]).unwrap_err());
    assert!(reason.contains("at least one device"), "{reason}");
    // Nothing was queued by the refused calls: the buffers are still zero.
    assert_eq!(
        bufs[0].copy_to_host_sync(&streams[0]).unwrap(),
        vec![0.0; 8]
    );
}
