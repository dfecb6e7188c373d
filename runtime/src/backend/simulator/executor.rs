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
//!
//! A thread also hands control back every few atomic operations
//! ([`Block::after_atomics`]), so a thread spinning on an atomic lets the other
//! threads of its block run: a spin-wait on a flag that another thread of the
//! block sets finishes, as on GPUs with independent thread scheduling. A
//! block that makes no progress for `GPU_SIM_TIMEOUT_SECS` fails its launch
//! ([`super::watchdog`]), and a thread that overflows its stack
//! (`GPU_SIM_STACK_BYTES`) fails it too ([`super::signals`]).

mod failures;
mod pool;
mod stacks;
mod thread_state;

pub(crate) use pool::parallelism;

use super::super::{DriverError, GraphNodeKind, KernelLaunch, StreamHandle};
use super::errors::invalid_handle;
use super::settings::settings;
use super::signals::{self, BlockSignals, Finish, Interrupt};
use super::stream;
use super::watchdog;
use super::worker::Worker;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use failures::{panic_message, stack_overflow, stalled};
use gpu_device::__private::simulation::{Block, SimulatedThread};
use gpu_device::__private::ShuffleMode;
use pool::pool;
use stacks::{give_stack, take_stack};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use thread_state::{SimCoroutine, Suspend, ThreadState};

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
    // SAFETY: forwarded to the caller.
    let call = unsafe { prepare(&launch) };
    stream::submit(stream, GraphNodeKind::Kernel, Arc::new(move || run(&call)))
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
    })
}

/// Runs every block of `call` once.
pub(crate) fn run(call: &Arc<KernelCall>) -> Result<(), String> {
    Arc::new(Launch {
        kernel_call: Arc::clone(call),
        next_block: AtomicU64::new(0),
        failed: AtomicBool::new(false),
        failure: Mutex::new(None),
        printed: Mutex::new(Vec::new()),
    })
    .run()
}

/// What a launch runs: the kernel, its parameter values and its shape.
pub(crate) struct KernelCall {
    kernel: &'static str,
    /// The globals of the kernel's module (`None` for the simulator's own
    /// launches, which have no module).
    globals: Option<Arc<super::globals::ModuleGlobals>>,
    call: unsafe fn(*const *mut c_void),
    params: Vec<Box<[u128]>>,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: usize,
}

/// One run of a [`KernelCall`]: which blocks are taken, and the first failure.
struct Launch {
    kernel_call: Arc<KernelCall>,
    next_block: AtomicU64,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
    /// What each block printed, by its linear index.
    printed: Mutex<Vec<(u64, Vec<u8>)>>,
}

impl std::ops::Deref for Launch {
    type Target = KernelCall;
    fn deref(&self) -> &KernelCall {
        &self.kernel_call
    }
}

impl Launch {
    fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// Runs every block, on this thread and the helpers.
    fn run(self: Arc<Self>) -> Result<(), String> {
        let settings = settings()?;
        signals::install();
        watchdog::start(settings.timeout);
        let stack_bytes = settings.stack_bytes;
        let helpers = (parallelism() as u64).min(self.blocks()).saturating_sub(1) as usize;
        let done = Arc::new((Mutex::new(0usize), Condvar::new()));
        for _ in 0..helpers {
            let (launch, done) = (Arc::clone(&self), Arc::clone(&done));
            pool().submit(Box::new(move || {
                launch.work(stack_bytes);
                let (count, changed) = &*done;
                *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                changed.notify_all();
            }));
        }
        self.work(stack_bytes);
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

    /// Takes blocks until none is left or one failed; gives their threads
    /// stacks of `stack_bytes`.
    fn work(&self, stack_bytes: usize) {
        let total = self.blocks();
        let worker = watchdog::current_worker();
        loop {
            let block = self.next_block.fetch_add(1, Ordering::Relaxed);
            if block >= total || self.failed.load(Ordering::Relaxed) {
                return;
            }
            worker.start_block();
            let outcome = self.run_block(block, &worker, stack_bytes);
            worker.end_block();
            if let Err(message) = outcome {
                self.failed.store(true, Ordering::Relaxed);
                self.failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(message);
                return;
            }
        }
    }

    fn run_block(&self, linear: u64, worker: &Worker, stack_bytes: usize) -> Result<(), String> {
        let [gx, gy, _] = self.grid.map(u64::from);
        let block_idx = [
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        ];
        let [bx, by, bz] = self.block;
        let count = (bx * by * bz) as usize;
        let state = BlockState::new(
            count,
            self.shared_bytes,
            self.globals.as_deref(),
            worker,
            BlockSignals::new(worker, self.kernel, stack_bytes),
            &self.failed,
        );
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
            let (call, params) = (self.call, params.as_ptr() as usize);
            let (slot, state) = (&state.yielders[t], &state);
            let body = move |yielder: &Yielder<(), Suspend>, ()| -> Finish {
                slot.set(yielder as *const Yielder<(), Suspend>);
                let outcome = state.signals.kernel_code(|| {
                    catch_unwind(AssertUnwindSafe(|| {
                        // SAFETY: the parameter copies outlive the block, and
                        // the call runs as a simulated thread (the executor set
                        // it current).
                        unsafe { call(params as *const *mut c_void) }
                    }))
                });
                match outcome {
                    Ok(()) => Finish::Returned,
                    Err(payload) => {
                        state.panic.replace(Some(panic_message(&*payload)));
                        Finish::Panicked
                    }
                }
            };
            let stack = take_stack(stack_bytes)?;
            // SAFETY: the coroutine borrows `state` and `params`, which live
            // until the end of this function; every coroutine is finished or
            // dropped (unwinding it) before then, as `coroutines` is declared
            // after them and dropped first.
            coroutines.push(Some(unsafe {
                Coroutine::with_stack_unchecked(stack, body)
            }));
        }

        let mut status = vec![ThreadState::Ready; count];
        let outcome = state.signals.watch(|| loop {
            for t in 0..count {
                if status[t] != ThreadState::Ready {
                    continue;
                }
                let coroutine = coroutines[t]
                    .as_mut()
                    .expect("ready threads have a coroutine");
                let trap = coroutine.trap_handler();
                // SAFETY: `threads[t]` is thread `t` of this block of the
                // launch, made above from the block's and the launch's
                // coordinates (unique in the launch, within its extents), and
                // `state` is this block's own state (`BlockState` implements
                // the block's services as `Block` requires).
                let outcome = unsafe {
                    gpu_device::__private::simulation::run_as(&threads[t], || {
                        state.signals.resume(trap, || coroutine.resume(()))
                    })
                };
                // Progress for the watchdog: a thread reaches a barrier or
                // warp operation, or finishes. A thread that yielded after
                // atomics may be spinning: there the watchdog's verdict is read.
                status[t] = match outcome {
                    CoroutineResult::Yield(Suspend::Yield) => {
                        if worker.stalled() {
                            return Err(describe(t, &stalled(&status, &coroutines, t, &threads)));
                        }
                        ThreadState::Ready
                    }
                    CoroutineResult::Yield(Suspend::Barrier(id)) => {
                        worker.progress();
                        ThreadState::AtBarrier(id)
                    }
                    CoroutineResult::Yield(Suspend::Warp { mask }) => {
                        worker.progress();
                        ThreadState::AtWarp(mask)
                    }
                    CoroutineResult::Yield(Suspend::ActiveMask) => ThreadState::AtActiveMask,
                    CoroutineResult::Return(Finish::Returned) => {
                        worker.progress();
                        let finished = coroutines[t].take().expect("just resumed");
                        give_stack(finished.into_stack());
                        ThreadState::Done
                    }
                    CoroutineResult::Return(Finish::Panicked) => {
                        let message = state.panic.take().unwrap_or_default();
                        return Err(describe(t, &format!("panicked: {message}")));
                    }
                    CoroutineResult::Return(Finish::Interrupted(Interrupt::StackOverflow)) => {
                        return Err(describe(t, &stack_overflow(stack_bytes)));
                    }
                    CoroutineResult::Return(Finish::Interrupted(Interrupt::Stalled)) => {
                        return Err(describe(t, &stalled(&status, &coroutines, t, &threads)));
                    }
                };
            }
            if status.iter().all(|s| *s == ThreadState::Done) {
                return Ok(());
            }
            let released = release(&mut status, count, &state.active_masks);
            if let Err(stuck) = released {
                return Err(describe(stuck.thread, &stuck.reason));
            }
        });
        let printed = state.printed.take();
        if !printed.is_empty() {
            self.printed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((linear, printed));
        }
        outcome
    }

    /// Writes what the blocks printed to standard output, block after block
    /// (by linear index), as one write: a launch's output arrives when it
    /// completes, as a GPU's does when the host synchronises with it.
    fn write_printed(&self) {
        use std::io::Write;
        let mut blocks =
            std::mem::take(&mut *self.printed.lock().unwrap_or_else(|e| e.into_inner()));
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

struct Stuck {
    thread: usize,
    reason: String,
}

/// Releases the barrier or the warps whose threads all wait; an error when
/// nothing can be released and no thread is ready (one that yielded).
///
/// The lanes of a warp at `activemask()` are released together, each warp's
/// mask of them in `active_masks`: every lane of the warp that was ready has
/// run until it waits or exits since the last release, so the lanes there
/// are those that reached it together (a lane that returned early is not).
fn release(
    status: &mut [ThreadState],
    count: usize,
    active_masks: &[Cell<u32>],
) -> Result<(), Stuck> {
    let mut released = false;
    for (warp, active) in active_masks.iter().enumerate() {
        let lanes = warp * 32..((warp + 1) * 32).min(count);
        let at_mask = lanes
            .filter(|&t| status[t] == ThreadState::AtActiveMask)
            .fold(0u32, |mask, t| mask | 1 << (t % 32));
        if at_mask != 0 {
            active.set(at_mask);
            for (t, s) in status.iter_mut().enumerate().skip(warp * 32).take(32) {
                if *s == ThreadState::AtActiveMask && at_mask & 1 << (t % 32) != 0 {
                    *s = ThreadState::Ready;
                }
            }
            released = true;
        }
    }
    let at_barrier = |s: &ThreadState| matches!(s, ThreadState::AtBarrier(_));
    let waiting_at_barrier = status.iter().filter(|s| at_barrier(s)).count();
    let done = status.iter().filter(|s| **s == ThreadState::Done).count();
    if waiting_at_barrier > 0 && waiting_at_barrier + done == count {
        let first = status.iter().position(at_barrier).expect("some wait");
        let ThreadState::AtBarrier(id) = status[first] else {
            unreachable!("found by position")
        };
        if let Some((other, other_id)) = status.iter().enumerate().find_map(|(t, s)| match s {
            ThreadState::AtBarrier(i) if *i != id => Some((t, *i)),
            _ => None,
        }) {
            return Err(Stuck {
                thread: first,
                reason: format!(
                    "threads of the block wait at different barriers (thread {first} at {}, thread {other} at {}); on a GPU this block would hang",
                    barrier_name(id),
                    barrier_name(other_id)
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
    if released || status.contains(&ThreadState::Ready) {
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
    match id {
        0 => "sync_threads()",
        gpu_device::__private::simulation::VOTE_BARRIER => {
            "a block vote (sync_threads_count/_and/_or)"
        }
        gpu_device::__private::simulation::COLLECTIVE_BARRIER => {
            "the barrier inside a block collective (a tile claim or look-back)"
        }
        _ => "the phase barrier Block::sync()",
    }
}

/// A block's shared state: what its simulated threads ask for.
struct BlockState<'a> {
    yielders: Vec<Cell<*const Yielder<(), Suspend>>>,
    /// Per thread: how many warp exchanges it has made (to pick a buffer).
    exchanges: Vec<Cell<u64>>,
    /// Per warp: two buffers of lane values, used alternately.
    warp_values: Vec<[[Cell<u32>; 32]; 2]>,
    /// Per thread: its predicates of the block votes, two buffers used
    /// alternately (by the parity of its vote count), so a thread that
    /// runs on to the next vote does not overwrite a vote others still read.
    votes: Vec<[Cell<bool>; 2]>,
    /// Per thread: how many votes it has made.
    vote_rounds: Vec<Cell<u64>>,
    /// Per warp: the lanes that `activemask()` last released together.
    active_masks: Vec<Cell<u32>>,
    /// The lines the block's threads printed, in the order they printed.
    printed: RefCell<Vec<u8>>,
    /// The globals of the launch's module.
    globals: Option<&'a super::globals::ModuleGlobals>,
    dynamic: RefCell<Box<[u128]>>,
    dynamic_bytes: usize,
    statics: RefCell<HashMap<&'static str, Box<[u128]>>>,
    /// The message of the thread that panicked.
    panic: Cell<Option<String>>,
    /// The watchdog's record of this OS thread, for progress.
    worker: &'a Worker,
    /// What the signal handlers look at.
    signals: BlockSignals,
    /// Set when another block of the launch failed: a thread waiting on
    /// memory (after atomics) then stops, as the launch has failed and what
    /// it waits for may never come.
    launch_failed: &'a AtomicBool,
}

impl<'a> BlockState<'a> {
    fn new(
        count: usize,
        shared_bytes: usize,
        globals: Option<&'a super::globals::ModuleGlobals>,
        worker: &'a Worker,
        signals: BlockSignals,
        launch_failed: &'a AtomicBool,
    ) -> BlockState<'a> {
        BlockState {
            yielders: (0..count).map(|_| Cell::new(std::ptr::null())).collect(),
            exchanges: (0..count).map(|_| Cell::new(0)).collect(),
            warp_values: (0..count.div_ceil(32))
                .map(|_| Default::default())
                .collect(),
            votes: (0..count).map(|_| Default::default()).collect(),
            vote_rounds: (0..count).map(|_| Cell::new(0)).collect(),
            active_masks: (0..count.div_ceil(32)).map(|_| Cell::new(0)).collect(),
            printed: RefCell::new(Vec::new()),
            globals,
            dynamic: RefCell::new(vec![0u128; shared_bytes.div_ceil(16)].into_boxed_slice()),
            dynamic_bytes: shared_bytes,
            statics: RefCell::new(HashMap::new()),
            panic: Cell::new(None),
            worker,
            signals,
            launch_failed,
        }
    }

    fn suspend(&self, thread: &SimulatedThread<'_>, why: Suspend) {
        let yielder = self.yielders[thread.linear as usize].get();
        // SAFETY: set by the thread's coroutine when it started; the thread is
        // running inside that coroutine now.
        self.signals
            .runtime_code(|| unsafe { &*yielder }.suspend(why));
    }
}

// SAFETY: one `BlockState` per block. Its static arrays and dynamic memory
// are this block's own boxes, kept for the block's life, aligned to 16 and
// at least as large as asked (`static_shared` checks the recorded size);
// barriers and warp exchanges suspend the thread until `release` finds every
// thread (or every lane in the mask) waiting, and `exchange` returns the
// named lane's value of that round; a vote is a barrier of its own id that
// counts its round's votes; a module global is simulated device memory of
// the launch's module, as large as asked (or the thread fails).
unsafe impl Block for BlockState<'_> {
    fn barrier(&self, thread: &SimulatedThread<'_>, id: u32) {
        self.suspend(thread, Suspend::Barrier(id));
    }

    fn vote(&self, thread: &SimulatedThread<'_>, predicate: bool) -> u32 {
        let t = thread.linear as usize;
        let round = self.vote_rounds[t].get();
        self.vote_rounds[t].set(round + 1);
        let parity = (round % 2) as usize;
        self.votes[t][parity].set(predicate);
        // Released once every thread has voted: each then reads the votes of
        // this round, which nobody overwrites before all have voted again.
        self.suspend(
            thread,
            Suspend::Barrier(gpu_device::__private::simulation::VOTE_BARRIER),
        );
        self.votes.iter().filter(|v| v[parity].get()).count() as u32
    }

    fn active_lanes(&self, thread: &SimulatedThread<'_>) -> u32 {
        self.suspend(thread, Suspend::ActiveMask);
        // Set by `release` for this round, before any lane of the warp runs.
        self.active_masks[thread.linear as usize / 32].get()
    }

    fn module_global(&self, symbol: &'static str, bytes: usize) -> *mut u8 {
        let found = self.signals.runtime_code(|| match self.globals {
            Some(globals) => globals.get(symbol, bytes).map_err(|e| e.description),
            None => Err("this launch belongs to no module".to_string()),
        });
        match found {
            Ok(ptr) => ptr as *mut u8,
            Err(why) => panic!("the module global `{symbol}`: {why}"),
        }
    }

    fn print(&self, _thread: &SimulatedThread<'_>, line: &[u8]) {
        self.signals
            .runtime_code(|| self.printed.borrow_mut().extend_from_slice(line));
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
        // As PTX's `shfl.sync` with a clamp of 31: the low five bits of `b`.
        let b = b & 31;
        let source = match mode {
            ShuffleMode::Down => Some(lane + b).filter(|&s| s < 32),
            ShuffleMode::Up => lane.checked_sub(b),
            ShuffleMode::Xor => Some(lane ^ b),
            ShuffleMode::Index => Some(b),
        };
        match source {
            Some(s) if s < lanes_in_warp => values[s as usize].get(),
            _ => value,
        }
    }

    fn static_shared(&self, symbol: &'static str, bytes: usize, _align: usize) -> *mut u8 {
        let (array, held) = self.signals.runtime_code(|| {
            let mut statics = self.statics.borrow_mut();
            let array = statics
                .entry(symbol)
                .or_insert_with(|| vec![0u128; bytes.div_ceil(16)].into_boxed_slice());
            (array.as_mut_ptr().cast::<u8>(), array.len() * 16)
        });
        // One symbol is one array of one size; a symbol asked for again
        // with more bytes (two arrays under one name, which the device's
        // linker would refuse) must not get the smaller allocation.
        if held < bytes {
            panic!(
                "the shared array `{symbol}` was made with {held} bytes and is now asked for {bytes}: two shared arrays have the same symbol"
            );
        }
        array
    }

    fn dynamic_shared(&self) -> (*mut u8, usize) {
        self.signals.runtime_code(|| {
            (
                self.dynamic.borrow_mut().as_mut_ptr().cast(),
                self.dynamic_bytes,
            )
        })
    }

    fn after_atomics(&self, thread: &SimulatedThread<'_>, changed: bool) {
        if self.launch_failed.load(Ordering::Relaxed) {
            // A spin-wait on another block (a look-back) that failed.
            panic!("stopped: another block of the launch failed first");
        }
        if changed {
            self.worker.progress();
        }
        self.suspend(thread, Suspend::Yield);
    }
}
