//! Simulated kernel launches.
//!
//! Every thread of a block runs as a stackful coroutine on one OS thread. A
//! thread that reaches `sync_threads` or a warp operation suspends; the block
//! scheduler resumes threads until all have finished, releasing a barrier when
//! every thread of the block waits at it and a warp operation when every lane
//! of the warp waits at it. A barrier or warp operation that can never be
//! released (some threads exited, or wait elsewhere) is reported, not hung
//! on; so is a panic (an out-of-bounds index among them), with the kernel's
//! name and the block and thread indices. Blocks run in parallel on a pool of
//! persistent helper threads.

use super::super::KernelLaunch;
use super::stream;
use crate::panic_message::panic_message;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use gpu_device::__private::simulation::{Block, SimulatedThread};
use gpu_device::__private::ShuffleMode;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Stack of one simulated thread: kernel bodies are small, but debug builds
/// and `catch_unwind` want room.
const STACK_BYTES: usize = 256 * 1024;

/// The number of blocks run at once: the host's cores.
pub(crate) fn parallelism() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Queues a launch on its stream: the parameters are copied now, as the
/// driver copies kernel parameters at launch.
///
/// # Safety
/// As [`Driver::launch`](super::super::Driver::launch).
pub(crate) unsafe fn launch(launch: KernelLaunch<'_>) {
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
    let run = Arc::new(Launch {
        kernel: launch.name,
        call: entry.call,
        params: copies,
        grid: launch.grid,
        block: launch.block,
        shared_bytes: launch.shared_bytes as usize,
        next_block: AtomicU64::new(0),
        failed: AtomicBool::new(false),
        failure: Mutex::new(None),
    });
    stream::enqueue(launch.stream, Box::new(move || run.run()));
}

struct Launch {
    kernel: &'static str,
    call: unsafe fn(*const *mut c_void),
    params: Vec<Box<[u128]>>,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: usize,
    next_block: AtomicU64,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
}

impl Launch {
    fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// Runs every block, on this thread and the helpers.
    fn run(self: Arc<Self>) -> Result<(), String> {
        let helpers = (parallelism() as u64).min(self.blocks()).saturating_sub(1) as usize;
        let done = Arc::new((Mutex::new(0usize), Condvar::new()));
        for _ in 0..helpers {
            let (launch, done) = (Arc::clone(&self), Arc::clone(&done));
            pool().submit(Box::new(move || {
                launch.work();
                let (count, changed) = &*done;
                *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                changed.notify_all();
            }));
        }
        self.work();
        let (count, changed) = &*done;
        let mut finished = count.lock().unwrap_or_else(|e| e.into_inner());
        while *finished < helpers {
            finished = changed.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
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

    /// Takes blocks until none is left or one failed.
    fn work(&self) {
        let total = self.blocks();
        loop {
            let block = self.next_block.fetch_add(1, Ordering::Relaxed);
            if block >= total || self.failed.load(Ordering::Relaxed) {
                return;
            }
            if let Err(message) = self.run_block(block) {
                self.failed.store(true, Ordering::Relaxed);
                self.failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(message);
                return;
            }
        }
    }

    fn run_block(&self, linear: u64) -> Result<(), String> {
        let [gx, gy, _] = self.grid.map(u64::from);
        let block_idx = [
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        ];
        let [bx, by, bz] = self.block;
        let count = (bx * by * bz) as usize;
        let state = BlockState::new(count, self.shared_bytes);
        let threads: Vec<SimulatedThread<'_>> = (0..count as u32)
            .map(|t| SimulatedThread {
                thread_idx: [t % bx, (t / bx) % by, t / (bx * by)],
                block_idx,
                block_dim: self.block,
                grid_dim: self.grid,
                linear: t,
                block: &state,
            })
            .collect();
        let params: Vec<*mut c_void> = self
            .params
            .iter()
            .map(|p| p.as_ptr() as *mut c_void)
            .collect();
        let describe = |t: usize, what: &str| {
            let [x, y, z] = threads[t].thread_idx;
            format!(
                "kernel `{}`, block ({}, {}, {}), thread ({x}, {y}, {z}): {what}",
                self.kernel, block_idx[0], block_idx[1], block_idx[2]
            )
        };

        let mut coroutines: Vec<Option<SimCoroutine>> = Vec::with_capacity(count);
        for t in 0..count {
            let (call, params, slot) = (self.call, params.as_ptr() as usize, &state.yielders[t]);
            let body = move |yielder: &Yielder<(), Suspend>, ()| -> Result<(), String> {
                slot.set(yielder as *const Yielder<(), Suspend>);
                // SAFETY: the parameter copies outlive the block, and the call
                // runs as a simulated thread (the executor set it current).
                catch_unwind(AssertUnwindSafe(|| unsafe {
                    call(params as *const *mut c_void)
                }))
                .map_err(|panic| panic_message(&*panic))
            };
            let stack = take_stack()?;
            // SAFETY: the coroutine borrows `state` and `params`, which live
            // until the end of this function; every coroutine is finished or
            // dropped (unwinding it) before then, as `coroutines` is declared
            // after them and dropped first.
            coroutines.push(Some(unsafe {
                Coroutine::with_stack_unchecked(stack, body)
            }));
        }

        let mut status = vec![ThreadState::Ready; count];
        loop {
            for t in 0..count {
                if status[t] != ThreadState::Ready {
                    continue;
                }
                let coroutine = coroutines[t]
                    .as_mut()
                    .expect("ready threads have a coroutine");
                let outcome =
                    gpu_device::__private::simulation::run_as(&threads[t], || coroutine.resume(()));
                status[t] = match outcome {
                    CoroutineResult::Yield(Suspend::Barrier(id)) => ThreadState::AtBarrier(id),
                    CoroutineResult::Yield(Suspend::Warp { mask }) => ThreadState::AtWarp(mask),
                    CoroutineResult::Return(Ok(())) => {
                        let finished = coroutines[t].take().expect("just resumed");
                        give_stack(finished.into_stack());
                        ThreadState::Done
                    }
                    CoroutineResult::Return(Err(message)) => {
                        return Err(describe(t, &format!("panicked: {message}")))
                    }
                };
            }
            if status.iter().all(|s| *s == ThreadState::Done) {
                return Ok(());
            }
            let released = release(&mut status, count);
            if let Err(stuck) = released {
                return Err(describe(stuck.thread, &stuck.reason));
            }
        }
    }
}

/// Where a suspended simulated thread waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ThreadState {
    Ready,
    /// At barrier `id` (0: `sync_threads`, 1: the phase token's `sync`).
    AtBarrier(u32),
    AtWarp(u32),
    Done,
}

/// What a simulated thread yields to the scheduler.
#[derive(Clone, Copy, Debug)]
enum Suspend {
    Barrier(u32),
    Warp { mask: u32 },
}

type SimCoroutine = Coroutine<(), Suspend, Result<(), String>, DefaultStack>;

struct Stuck {
    thread: usize,
    reason: String,
}

/// Releases the barrier or the warps whose threads all wait; an error when
/// nothing can be released.
fn release(status: &mut [ThreadState], count: usize) -> Result<(), Stuck> {
    let mut released = false;
    let at_barrier = |s: &ThreadState| matches!(s, ThreadState::AtBarrier(_));
    let waiting_at_barrier = status.iter().filter(|s| at_barrier(s)).count();
    let done = status.iter().filter(|s| **s == ThreadState::Done).count();
    if waiting_at_barrier > 0 && waiting_at_barrier + done == count {
        let first = status.iter().position(at_barrier).expect("some wait");
        let ThreadState::AtBarrier(id) = status[first] else {
            unreachable!("found by position")
        };
        if let Some(other) = status
            .iter()
            .position(|s| matches!(s, ThreadState::AtBarrier(i) if *i != id))
        {
            return Err(Stuck {
                thread: first,
                reason: format!(
                    "threads of the block wait at different barriers (thread {first} at {}, thread {other} at {}); on a GPU this block would hang",
                    barrier_name(id),
                    barrier_name(1 - id.min(1))
                ),
            });
        }
        if done > 0 {
            let waiting = first;
            let exited = status
                .iter()
                .position(|s| *s == ThreadState::Done)
                .expect("some exited");
            return Err(Stuck {
                thread: waiting,
                reason: format!(
                    "{} is not reached by every thread of the block (thread {exited} exited first); on a GPU this block would hang",
                    barrier_name(id)
                ),
            });
        }
        for s in status.iter_mut() {
            *s = ThreadState::Ready;
        }
        return Ok(());
    }
    for warp in 0..count.div_ceil(32) {
        let lanes = warp * 32..((warp + 1) * 32).min(count);
        let waiting: Vec<usize> = lanes
            .clone()
            .filter(|&t| matches!(status[t], ThreadState::AtWarp(_)))
            .collect();
        if waiting.is_empty() {
            continue;
        }
        let ThreadState::AtWarp(mask) = status[waiting[0]] else {
            unreachable!("filtered")
        };
        let needed = lanes.clone().filter(|&t| mask & (1 << (t % 32)) != 0);
        let mut ready = true;
        for t in needed {
            match status[t] {
                ThreadState::AtWarp(_) => {}
                ThreadState::Done => {
                    return Err(Stuck {
                        thread: waiting[0],
                        reason: format!(
                            "a warp shuffle or vote names lane {} in its mask, but that thread exited; on a GPU this is undefined",
                            t % 32
                        ),
                    })
                }
                _ => ready = false,
            }
        }
        if ready {
            for t in waiting {
                status[t] = ThreadState::Ready;
            }
            released = true;
        }
    }
    if released {
        return Ok(());
    }
    let waiting = status
        .iter()
        .position(|s| *s != ThreadState::Done)
        .expect("not all done");
    Err(Stuck {
        thread: waiting,
        reason: "deadlock: threads wait at a barrier (sync_threads() or Block::sync()) while others of the block wait at a warp operation".into(),
    })
}

/// How a barrier is called in kernel code.
fn barrier_name(id: u32) -> &'static str {
    if id == 0 {
        "sync_threads()"
    } else {
        "the phase barrier Block::sync()"
    }
}

/// A block's shared state: what its simulated threads ask for.
struct BlockState {
    yielders: Vec<Cell<*const Yielder<(), Suspend>>>,
    /// Per thread: how many warp exchanges it has made (to pick a buffer).
    exchanges: Vec<Cell<u64>>,
    /// Per warp: two buffers of lane values, used alternately.
    warp_values: Vec<[[Cell<u32>; 32]; 2]>,
    dynamic: RefCell<Box<[u128]>>,
    dynamic_bytes: usize,
    statics: RefCell<HashMap<&'static str, Box<[u128]>>>,
}

impl BlockState {
    fn new(count: usize, shared_bytes: usize) -> BlockState {
        BlockState {
            yielders: (0..count).map(|_| Cell::new(std::ptr::null())).collect(),
            exchanges: (0..count).map(|_| Cell::new(0)).collect(),
            warp_values: (0..count.div_ceil(32))
                .map(|_| Default::default())
                .collect(),
            dynamic: RefCell::new(vec![0u128; shared_bytes.div_ceil(16)].into_boxed_slice()),
            dynamic_bytes: shared_bytes,
            statics: RefCell::new(HashMap::new()),
        }
    }

    fn suspend(&self, thread: &SimulatedThread<'_>, why: Suspend) {
        let yielder = self.yielders[thread.linear as usize].get();
        // SAFETY: set by the thread's coroutine when it started; the thread is
        // running inside that coroutine now.
        unsafe { &*yielder }.suspend(why);
    }
}

impl Block for BlockState {
    fn barrier(&self, thread: &SimulatedThread<'_>, id: u32) {
        self.suspend(thread, Suspend::Barrier(id));
    }

    fn exchange(
        &self,
        thread: &SimulatedThread<'_>,
        mask: u32,
        value: u32,
        mode: ShuffleMode,
        b: u32,
    ) -> u32 {
        let t = thread.linear as usize;
        let (warp, lane) = (t / 32, (t % 32) as u32);
        let round = self.exchanges[t].get();
        self.exchanges[t].set(round + 1);
        let values = &self.warp_values[warp][(round % 2) as usize];
        values[lane as usize].set(value);
        self.suspend(thread, Suspend::Warp { mask });
        let lanes_in_warp = (self.yielders.len() - warp * 32).min(32) as u32;
        let source = match mode {
            ShuffleMode::Down => lane.checked_add(b).filter(|&s| s < 32),
            ShuffleMode::Up => lane.checked_sub(b),
            ShuffleMode::Xor => Some(lane ^ (b & 31)),
            ShuffleMode::Index => Some(b & 31),
        };
        match source {
            Some(s) if s < lanes_in_warp => values[s as usize].get(),
            _ => value,
        }
    }

    fn static_shared(&self, symbol: &'static str, bytes: usize, _align: usize) -> *mut u8 {
        let mut statics = self.statics.borrow_mut();
        let array = statics
            .entry(symbol)
            .or_insert_with(|| vec![0u128; bytes.div_ceil(16)].into_boxed_slice());
        array.as_mut_ptr().cast()
    }

    fn dynamic_shared(&self) -> (*mut u8, usize) {
        (
            self.dynamic.borrow_mut().as_mut_ptr().cast(),
            self.dynamic_bytes,
        )
    }
}

thread_local! {
    /// Stacks of finished coroutines, for the next ones on this OS thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

fn take_stack() -> Result<DefaultStack, String> {
    match STACKS.with(|s| s.borrow_mut().pop()) {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(STACK_BYTES)
            .map_err(|e| format!("cannot allocate a simulated thread's stack: {e}")),
    }
}

fn give_stack(stack: DefaultStack) {
    STACKS.with(|s| s.borrow_mut().push(stack));
}

/// Persistent helper threads that run blocks of launches in parallel.
struct Pool {
    tasks: Mutex<VecDeque<Box<dyn FnOnce() + Send>>>,
    available: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            tasks: Mutex::new(VecDeque::new()),
            available: Condvar::new(),
        }));
        for _ in 0..parallelism().saturating_sub(1) {
            std::thread::Builder::new()
                .name("gpu-sim-blocks".into())
                .spawn(move || loop {
                    let task = {
                        let mut tasks = pool.tasks.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if let Some(task) = tasks.pop_front() {
                                break task;
                            }
                            tasks = pool
                                .available
                                .wait(tasks)
                                .unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    task();
                })
                .expect("the simulator can start its helper threads");
        }
        pool
    })
}

impl Pool {
    fn submit(&self, task: Box<dyn FnOnce() + Send>) {
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(task);
        self.available.notify_one();
    }
}
