//! One simulated block: its threads as coroutines on this OS thread, the
//! scheduler that runs them from barrier to barrier, and the services they
//! ask of their block ([`Block`]).
//!
//! The scheduler runs in rounds: each round resumes, in order, the threads
//! that can run, each until it suspends (at a barrier, a warp operation, or
//! to let others run after atomics) or finishes. Between rounds it releases
//! a barrier that every thread waits at, and the warp operations whose lanes
//! have all arrived; it counts waiting threads as they arrive, so a round
//! costs one resume per thread and no scan of the block.

use super::failures::{panic_message, stack_overflow, stalled};
use super::shared_memory::SharedMemory;
use super::stacks::{give_stack, take_stack};
use super::thread_state::{SimCoroutine, Suspend, ThreadState};
use super::Launch;
use crate::backend::simulator::race_check::{Place, Shadow, Stamp};
use crate::backend::simulator::signals::{BlockSignals, Finish, Interrupt};
use crate::backend::simulator::worker::Worker;
use corosensei::trap::CoroutineTrapHandler;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use gpu_device::__private::simulation::{self, Access, Block, SimulatedThread};
use gpu_device::__private::ShuffleMode;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a worker keeps from one block to the next: the buffers of the
/// scheduler, reused.
#[derive(Default)]
pub(super) struct Scratch {
    /// The block's fibers and their trap handlers (`None` once finished).
    fibers: Vec<Option<(SimCoroutine, CoroutineTrapHandler<Finish>)>>,
    /// Per thread, the fiber that runs it ([`NO_FIBER`] before it starts).
    fiber_of: Vec<u32>,
    status: Vec<ThreadState>,
    round: Vec<u32>,
    next: Vec<u32>,
}

/// Runs block `linear` of `launch` on this OS thread.
pub(super) fn run_block(
    launch: &Launch,
    linear: u64,
    worker: &Worker,
    shared: &RefCell<SharedMemory>,
    scratch: &mut Scratch,
) -> Result<(), String> {
    let [gx, gy, _] = launch.grid.map(u64::from);
    let block_idx = [
        (linear % gx) as u32,
        ((linear / gx) % gy) as u32,
        (linear / (gx * gy)) as u32,
    ];
    let [bx, by, bz] = launch.block;
    let count = (bx * by * bz) as usize;
    let first_serial = launch.serial_base + linear * count as u64;
    let dynamic = (
        shared.borrow_mut().dynamic(launch.shared_bytes),
        launch.shared_bytes,
    );
    let state = BlockState {
        launch,
        linear,
        first_serial,
        yielders: (0..count).map(|_| Cell::new(std::ptr::null())).collect(),
        exchanges: (0..count).map(|_| Cell::new(0)).collect(),
        warp_values: (0..count.div_ceil(32))
            .map(|_| Default::default())
            .collect(),
        shared,
        dynamic,
        next_unstarted: Cell::new(0),
        current: Cell::new(0),
        panic: Cell::new(None),
        worker,
        signals: BlockSignals::new(worker, launch.kernel, launch.stack_bytes),
        races: launch.races.as_ref().map(|_| BlockRaces {
            interval: Cell::new(0),
            clocks: RefCell::new(
                (0..count)
                    .map(|t| {
                        let mut clocks = [0; 32];
                        clocks[t % 32] = 1;
                        clocks
                    })
                    .collect(),
            ),
            shared: RefCell::new(HashMap::new()),
        }),
    };
    let threads: Vec<SimulatedThread<'_>> = (0..count as u32)
        .map(|t| SimulatedThread {
            thread_idx: [t % bx, (t / bx) % by, t / (bx * by)],
            block_idx,
            block_dim: launch.block,
            grid_dim: launch.grid,
            linear: t,
            serial: first_serial + t as u64,
            block: &state,
        })
        .collect();
    let params: Vec<*mut c_void> = launch
        .params
        .iter()
        .map(|p| p.as_ptr() as *mut c_void)
        .collect();
    let result = state
        .signals
        .watch(|| schedule(&state, &threads, &params, count, scratch));
    // The fibers borrow `state`, `threads` and `params`: none outlives this
    // call (dropping an unfinished one unwinds it first).
    scratch.fibers.clear();
    simulation::leave();
    result.map_err(|(t, what)| {
        let [x, y, z] = threads[t].thread_idx;
        format!(
            "kernel `{}`, block ({}, {}, {}), thread ({x}, {y}, {z}): {what}",
            launch.kernel, block_idx[0], block_idx[1], block_idx[2]
        )
    })
}

/// Runs the block's threads to the end; on failure the thread that failed
/// and what happened.
///
/// Threads run on fibers (coroutines with a stack each): a fiber runs a
/// thread, and when the thread finishes without suspending it runs the
/// next thread not yet started on the same stack, so a kernel without
/// barriers or warp operations runs its block on one fiber, a thread after
/// the other, with no switch between them. A thread that suspends keeps its
/// fiber until it finishes; the round goes on with a new fiber.
fn schedule(
    state: &BlockState<'_>,
    threads: &[SimulatedThread<'_>],
    params: &[*mut c_void],
    count: usize,
    scratch: &mut Scratch,
) -> Result<(), (usize, String)> {
    let stack_bytes = state.launch.stack_bytes;
    let Scratch {
        fibers,
        fiber_of,
        status,
        round,
        next,
    } = scratch;
    fibers.clear();
    fiber_of.clear();
    fiber_of.resize(count, NO_FIBER);
    status.clear();
    status.resize(count, ThreadState::Ready);
    round.clear();
    round.extend(0..count as u32);
    state.next_unstarted.set(0);
    let mut waiting = Waiting::default();
    loop {
        let mut progress = false;
        for position in 0..round.len() {
            let t = round[position] as usize;
            if status[t] != ThreadState::Ready {
                // Run (and suspended, or finished) by a fiber earlier in the round.
                continue;
            }
            if fiber_of[t] == NO_FIBER {
                debug_assert_eq!(state.next_unstarted.get(), t, "threads start in order");
                fiber_of[t] = fibers.len() as u32;
                let fiber = new_fiber(state, threads, params, stack_bytes).map_err(|e| (t, e))?;
                fibers.push(Some(fiber));
            }
            let fiber = fiber_of[t] as usize;
            let (coroutine, trap) = fibers[fiber]
                .as_mut()
                .expect("a suspended thread's fiber lives");
            let outcome = state.signals.resume(*trap, || coroutine.resume(()));
            // The fiber ran `t`, finished every thread up to `current`, and
            // stopped in `current`.
            let current = state.current.get();
            for finished in t..current {
                status[finished] = ThreadState::Done;
            }
            waiting.done += current - t;
            fiber_of[current] = fiber as u32;
            progress |= current > t;
            let new = match outcome {
                CoroutineResult::Yield(Suspend::Yield) => {
                    // A thread that yielded after atomics may be spinning:
                    // here the watchdog's verdict is read.
                    if state.worker.stalled() {
                        let started =
                            |t: usize| fiber_of[t] != NO_FIBER || status[t] == ThreadState::Done;
                        return Err((current, stalled(status, &started, current, threads)));
                    }
                    next.push(current as u32);
                    ThreadState::Yielded
                }
                CoroutineResult::Yield(Suspend::Barrier(id)) => {
                    progress = true;
                    waiting.barrier[id as usize] += 1;
                    ThreadState::AtBarrier(id)
                }
                CoroutineResult::Yield(Suspend::Warp { mask }) => {
                    progress = true;
                    waiting.warp += 1;
                    ThreadState::AtWarp(mask)
                }
                CoroutineResult::Return(Finish::Returned) => {
                    progress = true;
                    waiting.done += 1;
                    let (finished, _) = fibers[fiber].take().expect("just resumed");
                    give_stack(finished.into_stack());
                    ThreadState::Done
                }
                CoroutineResult::Return(Finish::Panicked) => {
                    let message = state.panic.take().unwrap_or_default();
                    return Err((current, format!("panicked: {message}")));
                }
                CoroutineResult::Return(Finish::Interrupted(Interrupt::StackOverflow)) => {
                    return Err((current, stack_overflow(stack_bytes)));
                }
                CoroutineResult::Return(Finish::Interrupted(Interrupt::Stalled)) => {
                    let started =
                        |t: usize| fiber_of[t] != NO_FIBER || status[t] == ThreadState::Done;
                    return Err((current, stalled(status, &started, current, threads)));
                }
            };
            status[current] = new;
        }
        // Progress for the watchdog: a thread reached a barrier or warp
        // operation, or finished.
        if progress {
            state.worker.progress();
        }
        round.clear();
        if waiting.done == count {
            return Ok(());
        }
        std::mem::swap(round, next);
        for &t in round.iter() {
            status[t as usize] = ThreadState::Ready;
        }
        if let Err((thread, reason)) = release(state, status, &mut waiting, round, count) {
            return Err((thread, reason));
        }
    }
}

/// No fiber runs the thread (yet).
const NO_FIBER: u32 = u32::MAX;

/// A fiber for the block's threads not started yet (see [`schedule`]), and
/// its trap handler.
fn new_fiber(
    state: &BlockState<'_>,
    threads: &[SimulatedThread<'_>],
    params: &[*mut c_void],
    stack_bytes: usize,
) -> Result<(SimCoroutine, CoroutineTrapHandler<Finish>), String> {
    let (call, params) = (state.launch.call, params.as_ptr() as usize);
    let threads = threads.as_ptr() as usize;
    let count = state.yielders.len();
    let body = move |yielder: &Yielder<(), Suspend>, ()| -> Finish {
        let threads = threads as *const SimulatedThread<'_>;
        loop {
            let t = state.next_unstarted.get();
            state.next_unstarted.set(t + 1);
            state.current.set(t);
            state.yielders[t].set(yielder as *const Yielder<(), Suspend>);
            // SAFETY: `t < count` (the fiber runs only while threads are
            // left, below); `threads[t]` is thread `t` of this block of the
            // launch, made by `run_block` from the block's and the launch's
            // coordinates (unique in the launch, within its extents, with a
            // serial of its own), and `state` is this block's own state
            // (`BlockState` implements the block's services as `Block`
            // requires). It stays current until the next `enter`, and
            // `run_block` leaves it before the threads go.
            unsafe { simulation::enter(&*threads.add(t)) };
            let outcome = state.signals.kernel_code(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    // SAFETY: the parameter copies outlive the block, and
                    // the call runs as simulated thread `t` (made current
                    // above, and again at each resume by `suspend`).
                    unsafe { call(params as *const *mut c_void) }
                }))
            });
            if let Err(payload) = outcome {
                state.panic.replace(Some(panic_message(&*payload)));
                return Finish::Panicked;
            }
            // The next thread, if one is left to start and the scheduler
            // is not yet past it (it starts them in order).
            if state.next_unstarted.get() >= count {
                return Finish::Returned;
            }
        }
    };
    let stack = take_stack(stack_bytes)?;
    // SAFETY: the coroutine borrows `state`, `threads` and `params`, which
    // live until `run_block` returns; `run_block` clears the fibers
    // (finishing or unwinding every one) before that.
    let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
    let trap = coroutine.trap_handler();
    Ok((coroutine, trap))
}

/// How many threads of the block wait where, or have finished.
#[derive(Default)]
struct Waiting {
    /// At barrier 0 (`sync_threads`) and 1 (the phase token's `sync`).
    barrier: [usize; 2],
    warp: usize,
    done: usize,
}

/// Adds to `round` (the threads that yielded) the threads of the barrier or
/// the warp operations whose threads all wait; an error when nothing can run
/// and nothing can be released.
fn release(
    state: &BlockState<'_>,
    status: &mut [ThreadState],
    waiting: &mut Waiting,
    round: &mut Vec<u32>,
    count: usize,
) -> Result<(), (usize, String)> {
    let at_barrier = waiting.barrier[0] + waiting.barrier[1];
    if at_barrier > 0 && at_barrier + waiting.done == count {
        let first = status
            .iter()
            .position(|s| matches!(s, ThreadState::AtBarrier(_)))
            .expect("some wait");
        let ThreadState::AtBarrier(id) = status[first] else {
            unreachable!("found by position")
        };
        if waiting.barrier[0] > 0 && waiting.barrier[1] > 0 {
            let other = status
                .iter()
                .position(|s| matches!(s, ThreadState::AtBarrier(i) if *i != id))
                .expect("both barriers have threads");
            return Err((
                first,
                format!(
                    "threads of the block wait at different barriers (thread {first} at {}, thread {other} at {}); on a GPU this block would hang",
                    barrier_name(id),
                    barrier_name(1 - id.min(1))
                ),
            ));
        }
        if waiting.done > 0 {
            let exited = status
                .iter()
                .position(|s| *s == ThreadState::Done)
                .expect("some exited");
            return Err((
                first,
                format!(
                    "{} is not reached by every thread of the block (thread {exited} exited first); on a GPU this block would hang",
                    barrier_name(id)
                ),
            ));
        }
        status.fill(ThreadState::Ready);
        round.clear();
        round.extend(0..count as u32);
        waiting.barrier = [0, 0];
        if let Some(races) = &state.races {
            races.interval.set(races.interval.get() + 1);
        }
        return Ok(());
    }
    let mut released = false;
    if waiting.warp > 0 {
        let before = round.len();
        for warp in 0..count.div_ceil(32) {
            let lanes = warp * 32..((warp + 1) * 32).min(count);
            let Some(first) = lanes
                .clone()
                .find(|&t| matches!(status[t], ThreadState::AtWarp(_)))
            else {
                continue;
            };
            let ThreadState::AtWarp(mask) = status[first] else {
                unreachable!("found")
            };
            let mut ready = true;
            for t in lanes.clone().filter(|&t| mask & (1 << (t % 32)) != 0) {
                match status[t] {
                    ThreadState::AtWarp(_) => {}
                    ThreadState::Done => {
                        return Err((
                            first,
                            format!(
                                "a warp shuffle or vote names lane {} in its mask, but that thread exited; on a GPU this is undefined",
                                t % 32
                            ),
                        ))
                    }
                    _ => ready = false,
                }
            }
            if ready {
                let from = round.len();
                for t in lanes {
                    if !matches!(status[t], ThreadState::AtWarp(_)) {
                        continue;
                    }
                    status[t] = ThreadState::Ready;
                    waiting.warp -= 1;
                    round.push(t as u32);
                }
                if let Some(races) = &state.races {
                    races.synchronise(&round[from..]);
                }
                released = true;
            }
        }
        if released && before > 0 {
            // Yielded threads and released lanes, in thread order.
            round.sort_unstable();
        }
    }
    if released || !round.is_empty() {
        return Ok(());
    }
    let waiting = status
        .iter()
        .position(|s| *s != ThreadState::Done)
        .expect("not all done");
    Err((
        waiting,
        "deadlock: threads wait at a barrier (sync_threads() or Block::sync()) while others of the block wait at a warp operation".into(),
    ))
}

/// How a barrier is called in kernel code.
fn barrier_name(id: u32) -> &'static str {
    if id == 0 {
        "sync_threads()"
    } else {
        "the phase barrier Block::sync()"
    }
}

/// A block's share of a checked launch: its barrier interval, its threads'
/// warp clocks, and its shared memory's shadow.
struct BlockRaces {
    /// How many barriers the block has passed.
    interval: Cell<u32>,
    /// Per thread, what it knows of each lane of its warp's clock (its own
    /// entry is its clock; see `race_check::shadow`).
    clocks: RefCell<Vec<[u32; 32]>>,
    /// Shared memory, by word address.
    shared: RefCell<HashMap<usize, Shadow>>,
}

impl BlockRaces {
    /// The lanes `lanes` of one warp completed a warp operation together:
    /// each now knows what any of them knew, and moves its own clock on.
    fn synchronise(&self, lanes: &[u32]) {
        let mut clocks = self.clocks.borrow_mut();
        let mut merged = [0u32; 32];
        for &t in lanes {
            for (m, c) in merged.iter_mut().zip(clocks[t as usize]) {
                *m = (*m).max(c);
            }
        }
        for &t in lanes {
            let own = t as usize % 32;
            clocks[t as usize] = merged;
            clocks[t as usize][own] += 1;
        }
    }
}

/// A block's shared state: what its simulated threads ask for.
struct BlockState<'a> {
    launch: &'a Launch,
    /// The block's linear index in the grid.
    linear: u64,
    /// The serial of its thread 0.
    first_serial: u64,
    yielders: Vec<Cell<*const Yielder<(), Suspend>>>,
    /// Per thread: how many warp exchanges it has made (to pick a buffer).
    exchanges: Vec<Cell<u64>>,
    /// Per warp: two buffers of lane values, used alternately.
    warp_values: Vec<[[Cell<u32>; 32]; 2]>,
    /// This OS thread's shared memory.
    shared: &'a RefCell<SharedMemory>,
    /// The dynamic shared memory and the launch's size of it.
    dynamic: (*mut u8, usize),
    /// The first thread no fiber has started.
    next_unstarted: Cell<usize>,
    /// The thread the fiber that ran last was running when it stopped.
    current: Cell<usize>,
    /// The message of the thread that panicked.
    panic: Cell<Option<String>>,
    /// The watchdog's record of this OS thread, for progress.
    worker: &'a Worker,
    /// What the signal handlers look at.
    signals: BlockSignals,
    /// Present when the launch is checked for races.
    races: Option<BlockRaces>,
}

impl BlockState<'_> {
    /// Suspends `thread` (running now) until the scheduler resumes it, and
    /// makes it the current thread again then.
    fn suspend(&self, thread: &SimulatedThread<'_>, why: Suspend) {
        let yielder = self.yielders[thread.linear as usize].get();
        // SAFETY: set by the fiber when it started the thread; the thread is
        // running on that fiber now.
        self.signals
            .runtime_code(|| unsafe { &*yielder }.suspend(why));
        // SAFETY: `thread` was current when it suspended (the scheduler's
        // contract of `enter`, see `new_fiber`), and is again.
        unsafe { simulation::enter(thread) };
        self.current.set(thread.linear as usize);
    }

    /// Checks and records an access for the race detector.
    fn check_access(&self, thread: &SimulatedThread<'_>, access: Access) {
        let (Some(races), Some(launch_races)) = (&self.races, &self.launch.races) else {
            return;
        };
        let t = thread.linear as usize;
        let clocks = races.clocks.borrow();
        let stamp = Stamp {
            block: self.linear,
            thread: thread.linear as u16,
            interval: races.interval.get(),
            clock: clocks[t][t % 32],
        };
        let known = |lane: u16| clocks[t][lane as usize];
        let place = self.shared.borrow().place_of(access.address);
        match place {
            Some(place) => {
                let mut shadow = races.shared.borrow_mut();
                for (word, mask) in
                    crate::backend::simulator::race_check::words(access.address, access.bytes)
                {
                    let conflict = shadow.entry(word).or_insert_with(Shadow::new).access(
                        access.kind,
                        mask,
                        stamp,
                        &known,
                    );
                    if let Some(other) = conflict {
                        launch_races.report(
                            access.address,
                            access.bytes,
                            access.kind,
                            &stamp,
                            &other,
                            Place::Shared {
                                array: place.name,
                                start: place.start,
                                bytes: place.bytes,
                            },
                        );
                        return;
                    }
                }
            }
            None => {
                launch_races.global_access(access.address, access.bytes, access.kind, stamp, &known)
            }
        }
    }
}

// SAFETY: one `BlockState` per block. Its static arrays and dynamic memory
// are this OS thread's shared memory, which runs one block at a time: kept
// for the thread's life, aligned to 16 and at least as large as asked
// (`SharedMemory::static_array` and `dynamic`); barriers and warp exchanges
// suspend the thread until `release` finds every thread (or every lane in
// the mask) waiting, and `exchange` returns the named lane's value of that
// round.
unsafe impl Block for BlockState<'_> {
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
        let array = self.signals.runtime_code(|| {
            self.shared
                .borrow_mut()
                .static_array(symbol, bytes, self.first_serial)
        });
        array.unwrap_or_else(|message| panic!("{message}"))
    }

    fn dynamic_shared(&self) -> (*mut u8, usize) {
        self.dynamic
    }

    fn after_atomics(&self, thread: &SimulatedThread<'_>, changed: bool) {
        if changed {
            self.worker.progress();
        }
        self.suspend(thread, Suspend::Yield);
    }

    fn thread_of(&self, serial: u64) -> Option<([u32; 3], [u32; 3])> {
        let launch = self.launch;
        let index = serial.checked_sub(launch.serial_base)?;
        let [bx, by, bz] = launch.block;
        let count = u64::from(bx * by * bz);
        let (block, thread) = (index / count, (index % count) as u32);
        if block >= launch.blocks() {
            return None;
        }
        let [gx, gy, _] = launch.grid.map(u64::from);
        Some((
            [
                (block % gx) as u32,
                (block / gx % gy) as u32,
                (block / (gx * gy)) as u32,
            ],
            [thread % bx, thread / bx % by, thread / (bx * by)],
        ))
    }

    fn record(&self, thread: &SimulatedThread<'_>, access: Access) {
        self.signals
            .runtime_code(|| self.check_access(thread, access));
    }
}
