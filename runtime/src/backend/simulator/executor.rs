//! Simulated kernel launches.
//!
//! Every thread of a block runs in an execution context of its own on one
//! OS thread ([`super::context`]): a thread that reaches `sync_threads` or a warp
//! operation stops and switches straight to the next thread of the round;
//! between rounds the block's scheduler releases a barrier when every
//! thread of the block waits at it and a warp operation when every lane of
//! the warp waits at it ([`rounds`]). A barrier or warp operation that can
//! never be released (some threads exited, or wait elsewhere) is reported,
//! not hung on; so is a panic (an out-of-bounds index among them), with the
//! kernel's name and the block and thread indices. Threads that finish
//! without stopping run one after the other on one stack. Blocks run in
//! parallel on a pool of persistent helper threads (`GPU_SIM_THREADS`, by
//! default one per core), which take them a few at a time; each OS thread
//! keeps its shared memory from block to block ([`shared_memory`]).
//!
//! A thread also hands control back every few atomic operations
//! ([`Block::after_atomics`]), so a thread spinning on an atomic lets the other
//! threads of its block run: a spin-wait on a flag that another thread of the
//! block sets finishes, as on GPUs with independent thread scheduling. A
//! block that makes no progress for `GPU_SIM_TIMEOUT_SECS` fails its launch
//! ([`super::watchdog`]), and a thread that overflows its stack
//! (`GPU_SIM_STACK_BYTES`) fails it too ([`super::signals`]). Each simulated
//! thread has a serial number, which the per-thread values of device code
//! (witnesses, phase tokens) record and check (`gpu_device::thread_owner`);
//! a launch checked for data races records its accesses
//! ([`super::race_check`]).
//!
//! [`Block::after_atomics`]: gpu_device::__private::simulation::Block::after_atomics

mod block;
mod blocks;
mod call;
mod cluster;
mod failures;
mod in_order;
mod pool;
mod rounds;
mod shared_memory;
mod stacks;
mod thread_state;

pub(crate) use pool::parallelism;

use super::super::{DriverError, GraphNodeKind, KernelLaunch, StreamHandle};
use super::errors::invalid_handle;
use super::race_check::{self, LaunchRaces, Shape};
use super::settings::settings;
use super::signals;
use super::stream;
use super::watchdog;
use blocks::run_blocks;
pub(crate) use call::KernelCall;
use call::Run;
use cluster::ClusterRecord;
use pool::pool;
use shared_memory::with_shared_memory;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Queues a launch on `stream` (or captures it): the parameters are
/// copied now, as the driver copies kernel parameters at launch. A kernel of
/// another device than the stream's is refused, as CUDA refuses a function
/// of another context's module.
///
/// # Safety
/// As [`Driver::launch`](super::super::Driver::launch).
pub(crate) unsafe fn launch(
    launch: KernelLaunch<'_>,
    stream: StreamHandle,
) -> Result<(), DriverError> {
    let device = stream::device_of(stream);
    if launch.function.device != device {
        return Err(invalid_handle(
            "cuLaunchKernel",
            format!(
                "`{}` was loaded for device {} and the stream belongs to device {device}",
                launch.name, launch.function.device
            ),
        ));
    }
    let name = launch.name;
    // SAFETY: forwarded to the caller.
    let call = unsafe { prepare(&launch) };
    stream::submit(
        stream,
        GraphNodeKind::Kernel,
        name,
        Arc::new(move || run(&call)),
    )
}

/// A launch with its parameters copied, runnable any number of times (a
/// graph's kernel node runs it at each replay).
///
/// # Safety
/// As [`Driver::launch`](super::super::Driver::launch), for every run.
pub(crate) unsafe fn prepare(launch: &KernelLaunch<'_>) -> Arc<KernelCall> {
    let entry = launch.host;
    let copies: Vec<Box<[u128]>> = entry
        .param_sizes
        .iter()
        .zip(launch.params.iter())
        .map(|(&size, &param)| {
            let mut copy = vec![0u128; size.div_ceil(16).max(1)].into_boxed_slice();
            // SAFETY: each parameter pointer refers to a live value of the
            // parameter's type, of `size` bytes (the caller's contract); a
            // byte copy moves padding without reading it.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    param.cast::<std::mem::MaybeUninit<u8>>(),
                    copy.as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(),
                    size,
                )
            };
            copy
        })
        .collect();
    Arc::new(KernelCall {
        kernel: launch.name,
        globals: super::globals::of(launch.function.raw),
        call: entry.call,
        params: copies,
        grid: launch.grid,
        block: launch.block,
        shared_bytes: launch.shared_bytes as usize,
        cooperative: launch.cooperative,
        cluster: launch.cluster,
    })
}

/// Runs every block of `call` once.
pub(crate) fn run(call: &Arc<KernelCall>) -> Result<(), String> {
    let settings = settings()?;
    signals::install();
    watchdog::start(settings.timeout);
    let threads = call.blocks() * call.threads_per_block();
    let races = race_check::enabled(settings.race_check).then(|| {
        LaunchRaces::new(
            call.kernel,
            Shape {
                grid: call.grid,
                block: call.block,
            },
        )
    });
    let launch = Arc::new(Launch {
        run: Run {
            kernel_call: Arc::clone(call),
            serial_base: reserve_serials(threads)?,
            stack_bytes: settings.stack_bytes,
            races,
            printed: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
            grid_sync: Default::default(),
        },
        next_block: AtomicU64::new(0),
        failure: Mutex::new(None),
    });
    let outcome = launch.run();
    // A race explains what followed it (a wrong index, a panic): it comes first.
    match launch.run.races.as_ref().map(LaunchRaces::verdict) {
        Some(Err(race)) => Err(race),
        _ => outcome,
    }
}

/// Reserves serial numbers for `threads` simulated threads: the first of
/// them. Serials are never reused in a process (0 means none).
fn reserve_serials(threads: u64) -> Result<u64, String> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
        next.checked_add(threads)
    })
    .map_err(|_| {
        "the simulator has run 2^64 threads in this process and has no serial number left for more"
            .to_string()
    })
}

/// One run of a [`KernelCall`]: which blocks are taken, and the first failure.
struct Launch {
    run: Run,
    next_block: AtomicU64,
    failure: Mutex<Option<String>>,
}

impl Launch {
    /// Runs every block, on this thread and the helpers.
    fn run(self: &Arc<Self>) -> Result<(), String> {
        if self.run.cooperative {
            self.run_cooperative();
            self.write_printed();
            return self
                .failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .map_or(Ok(()), Err);
        }
        // A cluster launch's workers take whole clusters.
        let units = match self.run.cluster {
            Some(shape) => self.run.blocks() / shape.iter().map(|&s| s as u64).product::<u64>(),
            None => self.run.blocks(),
        };
        let helpers = (parallelism() as u64).min(units).saturating_sub(1) as usize;
        let done = Arc::new((Mutex::new(0usize), Condvar::new()));
        for _ in 0..helpers {
            let (launch, done) = (Arc::clone(self), Arc::clone(&done));
            pool().submit(Box::new(move || {
                launch.work_any();
                let (count, changed) = &*done;
                *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                changed.notify_all();
            }));
        }
        self.work_any();
        let (count, changed) = &*done;
        let mut finished = count.lock().unwrap_or_else(|e| e.into_inner());
        while *finished < helpers {
            finished = changed.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
        drop(finished);
        self.write_printed();
        match self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            Some(message) => Err(message),
            None => Ok(()),
        }
    }

    /// Runs every block of a cooperative launch at once, each on an OS
    /// thread of its own (this one and scoped helpers), so that a grid sync
    /// can wait for them all. The runtime has refused grids larger than the
    /// simulated device keeps resident.
    fn run_cooperative(&self) {
        let total = self.run.blocks();
        std::thread::scope(|scope| {
            for block in 1..total {
                let spawned = std::thread::Builder::new()
                    .name("gpu-sim-cooperative".into())
                    .spawn_scoped(scope, move || self.cooperative_block(block));
                if let Err(e) = spawned {
                    self.fail(format!(
                        "the simulator could not start a thread for block {block} of a cooperative launch of {total} blocks: {e}"
                    ));
                    // The blocks that started wait at their grid sync for
                    // this one: count it as finished, which fails them.
                    self.run.grid_block_finished();
                }
            }
            self.cooperative_block(0);
        });
    }

    /// Runs block `block` of a cooperative launch on this OS thread.
    fn cooperative_block(&self, block: u64) {
        let worker = watchdog::current_worker();
        with_shared_memory(|shared| {
            let mut blocks = std::iter::once(block);
            let outcome = run_blocks(&self.run, &worker, shared, || blocks.next(), None);
            if let Err(message) = outcome {
                self.fail(message);
            }
            self.run.grid_block_finished();
        });
    }

    /// Takes blocks ([`work`](Self::work)), or in a cluster launch whole
    /// clusters ([`work_clusters`](Self::work_clusters)), until none is left.
    fn work_any(&self) {
        match self.run.cluster {
            Some(shape) => self.work_clusters(shape),
            None => self.work(),
        }
    }

    /// Takes clusters one at a time until none is left or a block failed,
    /// running the blocks of each at once, each on an OS thread of its own
    /// (this one and scoped helpers), so that a cluster sync can wait for
    /// them all and a block can read a peer's shared memory.
    fn work_clusters(&self, shape: [u32; 3]) {
        let size: u32 = shape.iter().product();
        let total = self.run.blocks() / size as u64;
        loop {
            let cluster = self.next_block.fetch_add(1, Ordering::Relaxed);
            if cluster >= total || self.run.failed.load(Ordering::Relaxed) {
                return;
            }
            let blocks = cluster::blocks_of(self.run.grid, shape, cluster);
            let record = ClusterRecord::new(size);
            std::thread::scope(|scope| {
                for rank in 1..size {
                    let (record, block) = (&record, blocks[rank as usize]);
                    let spawned = std::thread::Builder::new()
                        .name("gpu-sim-cluster".into())
                        .spawn_scoped(scope, move || self.cluster_block(block, record, rank));
                    if let Err(e) = spawned {
                        self.fail(format!(
                            "the simulator could not start a thread for block rank {rank} of a cluster of {size} blocks: {e}"
                        ));
                        // The blocks that started wait at their cluster sync
                        // for this one: count it as finished, which fails them.
                        record.block_finished();
                    }
                }
                self.cluster_block(blocks[0], &record, 0);
            });
        }
    }

    /// Runs block `block`, rank `rank` of the cluster `record`, on this OS
    /// thread.
    fn cluster_block(&self, block: u64, record: &ClusterRecord, rank: u32) {
        let worker = watchdog::current_worker();
        with_shared_memory(|shared| {
            let mut blocks = std::iter::once(block);
            let cluster = Some((record, rank));
            let outcome = run_blocks(&self.run, &worker, shared, || blocks.next(), cluster);
            if let Err(message) = outcome {
                self.fail(message);
            }
            record.block_finished();
            // This block's shared memory is freed (or reused by the next
            // cluster) only once no peer can reach it.
            record.wait_all_finished();
        });
    }

    /// Records the launch's first failure; stops the other blocks.
    fn fail(&self, message: String) {
        self.run.failed.store(true, Ordering::Relaxed);
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(message);
    }

    /// Takes blocks, a few at a time, until none is left or one failed.
    fn work(&self) {
        let total = self.run.blocks();
        // Chunks small enough to share the blocks out evenly, large enough
        // that many small blocks do not meet at the counter for each one.
        let chunk = (total / (parallelism() as u64 * 8)).clamp(1, 64);
        let worker = watchdog::current_worker();
        // The blocks claimed and not run yet, and whether they are the last.
        let (mut claimed, mut last) = (0..0, false);
        let next = || loop {
            if let Some(block) = claimed.next() {
                return (!self.run.failed.load(Ordering::Relaxed)).then_some(block);
            }
            if last {
                return None;
            }
            let first = self.next_block.fetch_add(chunk, Ordering::Relaxed);
            claimed = first..(first + chunk).min(total);
            last = first + chunk >= total;
        };
        let outcome =
            with_shared_memory(|shared| run_blocks(&self.run, &worker, shared, next, None));
        if let Err(message) = outcome {
            self.run.failed.store(true, Ordering::Relaxed);
            self.failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(message);
        }
    }

    /// Writes what the blocks printed to standard output, block after block
    /// (by linear index), as one write: a launch's output arrives when it
    /// completes, as a GPU's does when the host synchronises with it.
    fn write_printed(&self) {
        use std::io::Write;
        let mut blocks =
            std::mem::take(&mut *self.run.printed.lock().unwrap_or_else(|e| e.into_inner()));
        if blocks.is_empty() {
            return;
        }
        blocks.sort_by_key(|(block, _)| *block);
        let bytes: Vec<u8> = blocks.into_iter().flat_map(|(_, b)| b).collect();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&bytes);
        let _ = out.flush();
    }
}
