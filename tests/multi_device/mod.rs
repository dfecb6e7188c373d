//! Tests that need several devices, shared by the binaries that run them:
//! `gpu_multi_device` (whatever backend the machine has: two GPUs on the
//! GPU machine), `simulated_devices` (the simulator with 2 devices) and
//! `simulated_four_devices` (4 devices). Each binary says how its process
//! gets its devices and calls [`multi_device_tests!`].
//!
//! Peer copies, cross-device ordering, peer access for launches, and the
//! collectives (single process, and one process per rank meeting through a
//! file or an environment variable).

#![allow(dead_code)]

use crate::common::{hold, one_at_a_time, size};
use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{
    launch, Communicator, Communicators, Device, DeviceBuffer, Error, Event, PinnedBuffer,
    Pipeline, ReduceOp, Stream, UniqueId, NVLS_ENV, UNIQUE_ID_ENV,
};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn blocks(n: usize) -> usize {
    n.div_ceil(256)
}

fn devices() -> Vec<Device> {
    let all = Device::all().unwrap();
    assert!(all.len() >= 2, "these tests need at least 2 devices");
    all
}

/// One new stream per device.
fn streams_of(devices: &[Device]) -> Vec<Stream> {
    devices
        .iter()
        .map(|&d| Stream::on_device(d).unwrap())
        .collect()
}

/// A buffer of `n` copies of `value` on `stream`'s device, written by a kernel.
fn filled(n: usize, value: f32, stream: &Stream) -> DeviceBuffer<f32> {
    let mut x = DeviceBuffer::<f32>::zeroed_on(n, stream).unwrap();
    launch!(fill[blocks(n), 256, stream](value, &mut x)).unwrap();
    stream.synchronize().unwrap();
    x
}

pub fn peer_copies_carry_data_around_every_device() {
    let devices = devices();
    let streams = streams_of(&devices);
    let n = size(1 << 20, 1 << 12);
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut current = DeviceBuffer::to_device_sync(&data, &streams[0]).unwrap();
    // Device 0 -> 1 -> ... -> last -> 0, each copy on the destination's stream.
    for (i, stream) in streams.iter().enumerate().skip(1).chain([(0, &streams[0])]) {
        let mut next = DeviceBuffer::<f32>::zeroed_on(n, stream).unwrap();
        next.copy_from_device(&current, stream).unwrap();
        assert_eq!(next.device(), i);
        current = next;
    }
    assert_eq!(current.copy_to_host_sync(&streams[0]).unwrap(), data);
    // clone_on, on the source's stream this time.
    let copy = current.clone_on(&streams[1]).unwrap();
    assert_eq!(copy.device(), devices[1].ordinal());
    assert_eq!(copy.copy_to_host_sync(&streams[1]).unwrap(), data);
}

pub fn a_peer_copy_waits_for_the_kernel_writing_its_source() {
    let _turn = one_at_a_time();
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let mut source = filled(n, 0.0, &s0);
    let mut target = filled(n, -1.0, &s1);
    let held = hold(&s0, 300);
    launch!(fill[blocks(n), 256, s0](5.0f32, &mut source)).unwrap();
    // On device 1's stream: without the ordering it would copy the zeros now.
    target.copy_from_device(&source, &s1).unwrap();
    let start = Instant::now();
    assert_eq!(target.copy_to_host_sync(&s1).unwrap(), vec![5.0; n]);
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "the copy waited for device 0's kernel"
    );
    held.join().unwrap();
}

pub fn a_buffer_written_by_a_peer_copy_is_read_after_it() {
    let _turn = one_at_a_time();
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 16, 1 << 12);
    let source = filled(n, 3.0, &s0);
    let mut target = filled(n, 0.0, &s1);
    let ones = filled(n, 1.0, &s1);
    let mut out = filled(n, 0.0, &s1);
    let held = hold(&s0, 300);
    // The copy into device 1's buffer runs on device 0's held stream; the
    // kernel on device 1 must wait for it.
    target.copy_from_device(&source, &s0).unwrap();
    launch!(add_kernel[blocks(n), 256, s1](&target, &ones, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&s1).unwrap(), vec![4.0; n]);
    held.join().unwrap();
    // Dropping `target` now frees it on device 1 after the copy on device 0.
    drop(target);
    devices[1].synchronize().unwrap();
}

/// The Day 7 pipeline over streams of every device: the pinned buffers'
/// tracking records its events on each stream's own device.
pub fn a_pipeline_spreads_its_chunks_over_every_device() {
    let devices = devices();
    let streams: Vec<Stream> = (0..2).flat_map(|_| streams_of(&devices)).collect();
    let n = size(1 << 20, 1 << 12);
    let input = PinnedBuffer::from_slice(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let mut pipeline = Pipeline::new(&streams).unwrap();
    pipeline
        .run(&input, &mut output, 4 * streams.len(), None, |s, x, out| {
            launch!(gpu_kernels::saxpy[x.len().div_ceil(256), 256, s](2.0f32, x, x, out))
        })
        .unwrap();
    let expected: Vec<f32> = (0..n).map(|i| 3.0 * i as f32).collect();
    assert_eq!(output.as_slice().unwrap(), &expected[..]);
}

pub fn events_of_two_devices_have_no_elapsed_time_between_them() {
    let devices = devices();
    let streams = streams_of(&devices);
    let (start, end) = (streams[0].record().unwrap(), streams[1].record().unwrap());
    let err = Event::elapsed_ms(&start, &end).unwrap_err();
    assert_eq!(
        err,
        Error::EventsOfTwoDevices {
            start_device: 0,
            end_device: 1
        }
    );
    // Device 1 waits for an event of device 0; device 0 times the whole.
    streams[1].wait_event(&start).unwrap();
    let done_on_1 = streams[1].record().unwrap();
    streams[0].wait_event(&done_on_1).unwrap();
    let end_on_0 = streams[0].record().unwrap();
    assert!(Event::elapsed_ms(&start, &end_on_0).unwrap() >= 0.0);
}

pub fn copies_need_a_stream_of_one_of_their_devices() {
    let devices = devices();
    let streams = streams_of(&devices);
    let a = filled(16, 1.0, &streams[0]);
    let mut b = filled(16, 0.0, &streams[0]);
    match b.copy_from_device(&a, &streams[1]) {
        Err(Error::DeviceMismatch {
            buffer_device: 0,
            stream_device: 1,
        }) => {}
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
    if devices.len() >= 3 {
        let mut c = filled(16, 0.0, &streams[1]);
        let err = c.copy_from_device(&a, &streams[2]).unwrap_err();
        assert_eq!(
            err,
            Error::PeerCopyOnOtherDevice {
                source_device: 0,
                destination_device: 1,
                stream_device: 2
            }
        );
        assert!(
            err.to_string().contains("use a stream of either device"),
            "{err}"
        );
    }
    let mut short = filled(8, 0.0, &streams[1]);
    assert!(matches!(
        short.copy_from_device(&a, &streams[1]),
        Err(Error::LengthMismatch {
            destination: 8,
            source: 16,
            ..
        })
    ));
}

/// The one test that enables peer access (it stays on for the process).
pub fn launches_use_another_devices_buffer_only_with_peer_access() {
    let devices = devices();
    let (d0, d1) = (devices[0], devices[1]);
    let (s0, s1) = (
        Stream::on_device(d0).unwrap(),
        Stream::on_device(d1).unwrap(),
    );
    let n = 1024;
    let on0 = filled(n, 1.0, &s0);
    let on1 = filled(n, 2.0, &s1);
    let mut out0 = filled(n, 0.0, &s0);
    let mut out1 = filled(n, 0.0, &s1);
    let err = launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongDevice {
                parameter: "b",
                buffer_device: 1,
                stream_device: 0,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("argument `b` is on device 1 but the stream is on device 0")
            && message.contains("enable_peer_access"),
        "{message}"
    );
    assert!(
        d0.can_access_peer(d0).unwrap(),
        "a device reaches its own memory"
    );
    if !d1.can_access_peer(d0).unwrap() {
        // No peer link on this machine: the error says so.
        assert_eq!(
            d1.enable_peer_access(d0).unwrap_err(),
            Error::PeerAccessUnsupported { device: 1, peer: 0 }
        );
        return;
    }
    d1.enable_peer_access(d0).unwrap();
    d1.enable_peer_access(d0).unwrap(); // again: no error
    assert!(d1.peer_access_enabled(d0));
    assert!(!d0.peer_access_enabled(d1), "peer access is one way");
    // Device 1 reads device 0's buffer, and writes one of device 0 too.
    launch!(add_kernel[blocks(n), 256, s1](&on0, &on1, &mut out1)).unwrap();
    assert_eq!(out1.copy_to_host_sync(&s1).unwrap(), vec![3.0; n]);
    launch!(add_kernel[blocks(n), 256, s1](&on1, &on1, &mut out0)).unwrap();
    assert_eq!(
        out0.copy_to_host_sync(&s0).unwrap(),
        vec![4.0; n],
        "read on device 0 after device 1's kernel"
    );
    // The other direction is still refused.
    assert!(launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).is_err());
    d0.enable_peer_access(d1).unwrap();
    launch!(add_kernel[blocks(n), 256, s0](&on0, &on1, &mut out0)).unwrap();
    assert_eq!(out0.copy_to_host_sync(&s0).unwrap(), vec![3.0; n]);
}

/// Rank `r`'s values: `r + 1 + i % 7` for element `i`.
fn rank_values(rank: usize, n: usize) -> Vec<f32> {
    (0..n).map(|i| (rank + 1 + i % 7) as f32).collect()
}

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

/// The environment variables a rank process of the multi-process tests reads.
const RANK_ENV: &str = "MULTI_DEVICE_TEST_RANK";
const RANKS_ENV: &str = "MULTI_DEVICE_TEST_RANKS";
const ID_FILE_ENV: &str = "MULTI_DEVICE_TEST_ID_FILE";

/// One rank, in its own process: meets the others through the id file or
/// the id variable, runs an all-reduce and an all-gather, checks them. Run
/// by itself (no rank variables), it is the one rank of a communicator of one.
pub fn rank_process() {
    let (rank, ranks, id) = match std::env::var(RANK_ENV) {
        Ok(rank) => {
            let rank: usize = rank.parse().unwrap();
            let ranks: usize = std::env::var(RANKS_ENV).unwrap().parse().unwrap();
            let id = match std::env::var_os(ID_FILE_ENV) {
                Some(file) => {
                    UniqueId::shared_through_file(file, rank, Duration::from_secs(60)).unwrap()
                }
                None => UniqueId::from_env(UNIQUE_ID_ENV).unwrap(),
            };
            (rank, ranks, id)
        }
        Err(_) => (0, 1, UniqueId::new().unwrap()),
    };
    let device = Device::get(rank % Device::count().unwrap()).unwrap();
    let mut comm = Communicator::init_rank(&id, ranks, rank, device).unwrap();
    assert_eq!(
        (comm.rank(), comm.ranks(), comm.device()),
        (rank, ranks, device)
    );
    let stream = Stream::on_device(device).unwrap();
    let n = size(1 << 20, 1000);
    let send = DeviceBuffer::to_device_sync(&rank_values(rank, n), &stream).unwrap();
    let mut sum = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    comm.all_reduce(&send, &mut sum, ReduceOp::Sum, &stream)
        .unwrap();
    let expected: Vec<f32> = (0..n)
        .map(|i| (0..ranks).map(|r| (r + 1 + i % 7) as f32).sum())
        .collect();
    assert_eq!(sum.copy_to_host_sync(&stream).unwrap(), expected);
    let mine = DeviceBuffer::to_device_sync(&[rank as u32; 3], &stream).unwrap();
    let mut all = DeviceBuffer::<u32>::zeroed_on(3 * ranks, &stream).unwrap();
    comm.all_gather(&mine, &mut all, &stream).unwrap();
    let expected: Vec<u32> = (0..ranks as u32).flat_map(|r| [r; 3]).collect();
    assert_eq!(all.copy_to_host_sync(&stream).unwrap(), expected);
    println!("rank {rank} of {ranks}: all-reduce and all-gather checked");
}

/// Runs one rank process per device, each this test binary running
/// `rank_process` (the test `rank_process_of_multi_process_tests`), and checks
/// they all succeed. `id` sets how they meet: `Some(path)` a file that rank 0
/// writes, `None` a variable this process sets from an id it makes.
///
/// The tests that run collectives take turns (`one_at_a_time`): NCCL's
/// kernels of two communicators on the same GPUs, queued in different orders
/// by two threads, can wait for each other if they cannot all be resident.
fn run_rank_processes(id_file: Option<&std::path::Path>) {
    let _turn = one_at_a_time();
    let ranks = Device::count().unwrap();
    let id = if id_file.is_none() {
        Some(UniqueId::new().unwrap())
    } else {
        None
    };
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command
                .args([
                    "--exact",
                    "rank_process_of_multi_process_tests",
                    "--include-ignored",
                    "--nocapture",
                ])
                .env(RANK_ENV, rank.to_string())
                .env(RANKS_ENV, ranks.to_string());
            match (id_file, &id) {
                (Some(file), _) => command.env(ID_FILE_ENV, file).env_remove(UNIQUE_ID_ENV),
                (None, Some(id)) => command
                    .env(UNIQUE_ID_ENV, id.to_hex())
                    .env_remove(ID_FILE_ENV),
                (None, None) => unreachable!(),
            };
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
            (rank, command.spawn().unwrap())
        })
        .collect();
    for (rank, child) in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "rank {rank} of {ranks} failed: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub fn ranks_in_separate_processes_meet_through_a_file() {
    let file = std::env::temp_dir().join(format!(
        "gpu-multi-device-test-{}-{:?}.id",
        std::process::id(),
        Instant::now()
    ));
    run_rank_processes(Some(&file));
    let _ = std::fs::remove_file(file);
}

pub fn ranks_in_separate_processes_meet_through_an_environment_variable() {
    run_rank_processes(None);
}

/// Defines the `#[test]`s of this module; `$setup` runs first in each and
/// returns whether the test runs in this process (see `gpu_multi_device`).
#[macro_export]
macro_rules! multi_device_tests {
    ($setup:path) => {
        $crate::multi_device_tests!(@each $setup;
            peer_copies_carry_data_around_every_device,
            a_peer_copy_waits_for_the_kernel_writing_its_source,
            a_buffer_written_by_a_peer_copy_is_read_after_it,
            copies_need_a_stream_of_one_of_their_devices,
            events_of_two_devices_have_no_elapsed_time_between_them,
            a_pipeline_spreads_its_chunks_over_every_device,
            launches_use_another_devices_buffer_only_with_peer_access,
            all_reduce_sums_and_maxes_across_every_device,
            broadcast_reduce_scatter_and_all_gather_move_the_right_blocks,
            an_all_reduce_waits_for_its_inputs_and_is_waited_for,
            collective_arguments_are_checked,
            ranks_in_separate_processes_meet_through_a_file,
            ranks_in_separate_processes_meet_through_an_environment_variable
        );

        /// A rank of the multi-process tests, run in a child process by them.
        #[test]
        #[ignore = "run by the multi-process tests in child processes"]
        fn rank_process_of_multi_process_tests() {
            if $setup(stringify!(rank_process_of_multi_process_tests)) {
                multi_device::rank_process();
            }
        }
    };
    (@each $setup:path; $($name:ident),*) => {$(
        #[test]
        fn $name() {
            if $setup(stringify!($name)) {
                multi_device::$name();
            }
        }
    )*};
}
