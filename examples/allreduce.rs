//! Data-parallel steps: every device holds a replica of the weights `w` and
//! its own shard of data; each step runs a "gradient" kernel on every device,
//! sums the gradients across devices with an all-reduce (NCCL), and updates
//! every replica with the same sum, so the replicas stay identical. The
//! weights start on device 0 and reach the others by a broadcast.
//!
//! `cargo run --release --example allreduce` runs the steps twice:
//!
//! - one process drives every device (`Communicators`);
//! - one process per device (`Communicator`), as on several hosts: this
//!   process makes the unique id and hands it to the ranks it starts in
//!   `GPU_NCCL_UNIQUE_ID`.
//!
//! `-- --one-process` or `-- --processes` runs only one of them.
//! Any number of devices, 1 too; on the simulator, `GPU_SIM_DEVICES=4` gives 4.

use gpu_kernels::saxpy;
use gpu_runtime::{
    backend, launch, Backend, Communicator, Communicators, Device, DeviceBuffer, ReduceOp, Stream,
    UniqueId, UNIQUE_ID_ENV,
};
use std::error::Error;
use std::process::{Command, ExitCode};

/// Elements per replica: 1 Mi on a GPU, 16 Ki on the simulator (which
/// runs every simulated thread in turn).
fn len() -> usize {
    match backend() {
        Backend::Cuda => 1 << 20,
        Backend::Simulator => 1 << 14,
    }
}
const STEPS: usize = 10;
const LEARNING_RATE: f32 = 0.01;
const RANK_ENV: &str = "ALLREDUCE_EXAMPLE_RANK";

type Res<T> = Result<T, Box<dyn Error>>;

fn main() -> ExitCode {
    let only = |flag: &str| std::env::args().any(|a| a == flag);
    let outcome = if let Ok(rank) = std::env::var(RANK_ENV) {
        rank_process(rank.parse().unwrap_or(usize::MAX))
    } else if only("--processes") {
        launch_processes()
    } else if only("--one-process") {
        one_process()
    } else {
        one_process().and_then(|()| launch_processes())
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("allreduce: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Rank `r`'s data shard: `sin(i + r)`, the same on every run.
fn shard(rank: usize) -> Vec<f32> {
    (0..len())
        .map(|i| ((i + rank) as f32 * 0.001).sin())
        .collect()
}

/// The initial weights.
fn initial_weights() -> Vec<f32> {
    (0..len()).map(|i| (i % 100) as f32 * 0.01).collect()
}

/// One rank's state on its device.
struct Replica {
    stream: Stream,
    data: DeviceBuffer<f32>,
    weights: DeviceBuffer<f32>,
    gradient: DeviceBuffer<f32>,
    scratch: DeviceBuffer<f32>,
}

impl Replica {
    /// Zero weights (the broadcast fills them), and the rank's data.
    fn new(device: Device, rank: usize) -> Res<Replica> {
        let stream = Stream::on_device(device)?;
        Ok(Replica {
            data: DeviceBuffer::to_device_sync(&shard(rank), &stream)?,
            weights: DeviceBuffer::zeroed_on(len(), &stream)?,
            gradient: DeviceBuffer::zeroed_on(len(), &stream)?,
            scratch: DeviceBuffer::zeroed_on(len(), &stream)?,
            stream,
        })
    }

    /// The step's "gradient": `(step + 1) * 0.1 * w + data`.
    fn gradient(&mut self, step: usize) -> Res<()> {
        let s = &self.stream;
        let a = (step + 1) as f32 * 0.1;
        launch!(saxpy[len().div_ceil(256), 256, s](a, &self.weights, &self.data, &mut self.gradient))?;
        Ok(())
    }

    /// `w -= learning_rate / ranks * summed gradient`.
    fn update(&mut self, ranks: usize) -> Res<()> {
        let s = &self.stream;
        let a = -LEARNING_RATE / ranks as f32;
        launch!(saxpy[len().div_ceil(256), 256, s](a, &self.gradient, &self.weights, &mut self.scratch))?;
        std::mem::swap(&mut self.weights, &mut self.scratch);
        Ok(())
    }
}

/// The same steps on the CPU, with fused multiply-adds as the kernel's
/// `a * x + y` is on a GPU (the simulator rounds twice: within tolerance).
fn reference(ranks: usize) -> Vec<f32> {
    let shards: Vec<Vec<f32>> = (0..ranks).map(shard).collect();
    let mut w = initial_weights();
    for step in 0..STEPS {
        let a = (step + 1) as f32 * 0.1;
        let mut sum = vec![0.0f32; len()];
        for data in &shards {
            for i in 0..len() {
                sum[i] += a.mul_add(w[i], data[i]);
            }
        }
        let lr = -LEARNING_RATE / ranks as f32;
        for i in 0..len() {
            w[i] = lr.mul_add(sum[i], w[i]);
        }
    }
    w
}

fn check(weights: &[f32], ranks: usize) -> Res<()> {
    let expected = reference(ranks);
    for i in (0..len()).step_by(997) {
        let (got, want) = (weights[i], expected[i]);
        if (got - want).abs() > 1e-4 * want.abs().max(1.0) {
            return Err(format!("element {i}: {got} on the devices, {want} on the CPU").into());
        }
    }
    Ok(())
}

/// Every device from this process: `Communicators` groups the ranks' calls.
fn one_process() -> Res<()> {
    let devices = Device::all()?;
    let ranks = devices.len();
    let mut comms = Communicators::new(&devices)?;
    let mut replicas = devices
        .iter()
        .enumerate()
        .map(|(r, &d)| Replica::new(d, r))
        .collect::<Res<Vec<_>>>()?;
    let streams: Vec<Stream> = replicas.iter().map(|r| r.stream.clone()).collect();
    replicas[0]
        .weights
        .copy_from_host_sync(&initial_weights(), &streams[0])?;
    comms.broadcast_in_place(replicas.iter_mut().map(|r| &mut r.weights), 0, &streams)?;
    for step in 0..STEPS {
        for replica in &mut replicas {
            replica.gradient(step)?;
        }
        comms.all_reduce_in_place(
            replicas.iter_mut().map(|r| &mut r.gradient),
            ReduceOp::Sum,
            &streams,
        )?;
        for replica in &mut replicas {
            replica.update(ranks)?;
        }
    }
    let first = replicas[0].weights.copy_to_host_sync(&streams[0])?;
    for (r, replica) in replicas.iter().enumerate().skip(1) {
        if replica.weights.copy_to_host_sync(&streams[r])? != first {
            return Err(format!("replica {r} differs from replica 0").into());
        }
    }
    check(&first, ranks)?;
    println!(
        "allreduce: {STEPS} data-parallel steps on {ranks} device(s) ({}) in one process: replicas identical, weights match the CPU",
        devices[0].name()
    );
    Ok(())
}

/// One process per device: makes the id and starts the ranks.
fn launch_processes() -> Res<()> {
    let ranks = Device::count()?;
    let id = UniqueId::new()?;
    let children = (0..ranks)
        .map(|rank| {
            Command::new(std::env::current_exe()?)
                .env(RANK_ENV, rank.to_string())
                .env(UNIQUE_ID_ENV, id.to_hex())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (rank, mut child) in children.into_iter().enumerate() {
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("rank {rank} failed: {status}").into());
        }
    }
    println!("allreduce: {STEPS} data-parallel steps on {ranks} process(es), one device each: every rank checked its weights");
    Ok(())
}

/// One rank of `--processes`: the id from the environment, its own device.
fn rank_process(rank: usize) -> Res<()> {
    let ranks = Device::count()?;
    let id = UniqueId::from_env(UNIQUE_ID_ENV)?;
    let device = Device::get(rank)?;
    let mut comm = Communicator::init_rank(&id, ranks, rank, device)?;
    let mut replica = Replica::new(device, rank)?;
    if rank == 0 {
        replica
            .weights
            .copy_from_host_sync(&initial_weights(), &replica.stream)?;
    }
    comm.broadcast_in_place(&mut replica.weights, 0, &replica.stream)?;
    for step in 0..STEPS {
        replica.gradient(step)?;
        comm.all_reduce_in_place(&mut replica.gradient, ReduceOp::Sum, &replica.stream)?;
        replica.update(ranks)?;
    }
    check(&replica.weights.copy_to_host_sync(&replica.stream)?, ranks)?;
    println!(
        "allreduce: rank {rank} of {ranks} on device {}: weights match the CPU",
        device.ordinal()
    );
    Ok(())
}
