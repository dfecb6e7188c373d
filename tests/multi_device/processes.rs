//! One process per rank (`Communicator`): this test binary started once per
//! rank, the ranks meeting through a file or an environment variable.

use super::rank_values;
use crate::common::{one_at_a_time, size};
use gpu_runtime::{Communicator, Device, DeviceBuffer, ReduceOp, Stream, UniqueId, UNIQUE_ID_ENV};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
