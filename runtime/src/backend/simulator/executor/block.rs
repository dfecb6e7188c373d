//! One simulated block: its threads' contexts on this OS thread, and the
//! services they ask of their block ([`Block`]). How the threads take turns
//! is `rounds`; the state is kept from one block to the next that the OS
//! thread runs (`blocks`).

use super::call::Run;
use super::cluster::ClusterRecord;
use super::shared_memory::SharedMemory;
use super::thread_state::{ThreadSlot, ThreadState, Waiting};
use crate::backend::simulator::context::SavedContext;
use crate::backend::simulator::race_check::{Place, Shadow, Stamp};
use crate::backend::simulator::signals::BlockSignals;
use crate::backend::simulator::worker::Worker;
use corosensei::stack::DefaultStack;
use gpu_device::__private::simulation::{self, Access, Block, SimulatedThread};
use gpu_device::__private::ShuffleMode;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;

/// Why a thread failed the block.
pub(super) enum Failure {
    /// It panicked, with this message.
    Panicked(String),
    /// It spun without progress past the watchdog's limit.
    Stalled,
    /// No stack could be had for it.
    NoStack(String),
}

/// A static shared array asked for: its symbol's address and length, and
/// the bytes asked.
pub(super) type StaticKey = (usize, usize, usize);

/// The fiber function before `schedule` sets the block's.
pub(super) static NO_FIBER: fn() = || unreachable!("the scheduler sets the fiber function first");

/// A block's shared state: what its simulated threads ask for, and how
/// they take turns (`rounds`).
pub(super) struct BlockState<'a> {
    pub(super) run: &'a Run,
    /// In a cluster launch: the cluster's record and this block's rank.
    pub(super) cluster: Option<(&'a ClusterRecord, u32)>,
    /// The block's linear index in the grid.
    pub(super) linear: Cell<u64>,
    /// The serial of its thread 0.
    pub(super) first_serial: Cell<u64>,
    /// The number of threads.
    pub(super) count: usize,
    /// The block's threads (`count` of them), set for each block.
    pub(super) threads: Cell<*const SimulatedThread<'static>>,
    /// The kernel's parameter pointers (the launch's).
    pub(super) params: *const *mut c_void,
    /// Per thread: its status, saved context and stack.
    pub(super) slots: Vec<ThreadSlot>,
    /// Whether a thread of this block exchanged or voted: the next block
    /// sets the four vectors below back.
    pub(super) warp_state_used: Cell<bool>,
    /// Per thread: how many warp exchanges it has made (to pick a buffer).
    pub(super) exchanges: Vec<Cell<u64>>,
    /// Per warp: two buffers of lane values, used alternately.
    pub(super) warp_values: Vec<[[Cell<u32>; 32]; 2]>,
    /// Per thread: its predicates of the block votes, two buffers used
    /// alternately (by the parity of its vote count), so a thread that
    /// runs on to the next vote does not overwrite a vote others still read.
    pub(super) votes: Vec<[Cell<bool>; 2]>,
    /// Per thread: how many votes it has made.
    pub(super) vote_rounds: Vec<Cell<u64>>,
    /// Per warp: the lanes that `activemask()` last released together.
    pub(super) active_masks: Vec<Cell<u32>>,
    /// The lines the block's threads printed, in the order they printed.
    pub(super) printed: RefCell<Vec<u8>>,
    /// The threads of this round, in order, and the place reached in it.
    pub(super) round: RefCell<Vec<u32>>,
    pub(super) position: Cell<usize>,
    /// The threads that yielded: the next round's.
    pub(super) next: RefCell<Vec<u32>>,
    pub(super) waiting: Cell<Waiting>,
    /// Whether a thread reached a barrier or warp operation, or finished,
    /// in this round.
    pub(super) progress: Cell<bool>,
    /// The first thread no fiber has started.
    pub(super) next_unstarted: Cell<usize>,
    /// The thread that ran last.
    pub(super) current: Cell<usize>,
    /// The threads of this round that stopped at a barrier in thread order.
    pub(super) in_order: InOrder,
    /// The thread that failed the block, and why.
    pub(super) failure: Cell<Option<(usize, Failure)>>,
    /// The fibers' stacks (of every block this state ran), given back when
    /// the OS thread's run of the launch's blocks ends.
    pub(super) stacks: RefCell<Vec<DefaultStack>>,
    /// The fibers whose thread finished, waiting for a thread to start
    /// (`rounds`).
    pub(super) idle: RefCell<Vec<IdleFiber>>,
    /// The static shared array asked for last: its symbol (address and
    /// length), the bytes asked, and its memory (each thread of a block asks
    /// for the same arrays).
    pub(super) last_static: Cell<Option<(StaticKey, *mut u8)>>,
    /// What a fiber runs (`schedule` sets it).
    pub(super) fiber_main: Cell<*const dyn Fn()>,
    /// This OS thread's shared memory.
    pub(super) shared: &'a RefCell<SharedMemory>,
    /// The dynamic shared memory and the launch's size of it.
    pub(super) dynamic: (*mut u8, usize),
    /// The watchdog's record of this OS thread, for progress.
    pub(super) worker: &'a Worker,
    /// What the signal handlers look at.
    pub(super) signals: BlockSignals,
    /// Present when the launch is checked for races.
    pub(super) races: Option<BlockRaces>,
}

/// A fiber whose thread finished, waiting in `rounds`' `fiber` for the next
/// thread to start.
#[derive(Clone, Copy)]
pub(super) struct IdleFiber {
    /// The top of its stack.
    pub(super) stack: usize,
    /// Where its context is saved (in its own frame).
    pub(super) context: *const SavedContext,
}

impl<'a> BlockState<'a> {
    /// The block's threads.
    pub(super) fn threads(&self) -> &[SimulatedThread<'a>] {
        // SAFETY: set by `run_block` to its `count` threads, which outlive
        // every use (the block's contexts, the scheduler).
        unsafe { std::slice::from_raw_parts(self.threads.get().cast(), self.count) }
    }

    /// Stops `thread` (running now) in `state`, runs the others until it is
    /// released, and makes it the current thread again.
    fn suspend(&self, thread: &SimulatedThread<'_>, state: ThreadState) {
        let t = thread.linear as usize;
        self.signals.runtime_code(|| {
            match state {
                ThreadState::AtBarrier(id) => self.add_waiting(|w| w.barrier[id as usize] += 1),
                ThreadState::AtWarp(_) => self.add_waiting(|w| w.warp += 1),
                ThreadState::AtActiveMask => self.add_waiting(|w| w.active_mask += 1),
                _ => self.next.borrow_mut().push(t as u32),
            }
            if state != ThreadState::Yielded {
                self.progress.set(true);
            }
            let slot = &self.slots[t];
            slot.status.set(state);
            // SAFETY: `t` is the running thread; its context is saved in
            // its own slot, which the scheduler resumes once it is released.
            unsafe { self.run_next::<false>(slot.context.as_ptr()) };
        });
        // SAFETY: `thread` was current when it stopped (the fiber made it
        // current, see `rounds`), and is again.
        unsafe { simulation::enter(thread) };
        self.current.set(t);
    }

    /// Checks and records an access for the race detector.
    fn check_access(&self, thread: &SimulatedThread<'_>, access: Access) {
        let (Some(races), Some(launch_races)) = (&self.races, &self.run.races) else {
            return;
        };
        let t = thread.linear as usize;
        let clocks = races.clocks.borrow();
        let stamp = Stamp {
            block: self.linear.get(),
            thread: thread.linear as u16,
            interval: races.interval.get(),
            grid: races.grid.get(),
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

impl BlockState<'_> {
    /// Every thread of the block has reached a cluster sync: waits for the
    /// other blocks of the cluster (see [`ClusterRecord::arrive`]).
    pub(super) fn cluster_arrive(&self) -> Result<(), String> {
        match self.cluster {
            Some((record, _)) => record.arrive(self.worker, &self.run.failed),
            None => {
                Err("cluster sync (Cluster::sync) in a launch that is not a cluster launch".into())
            }
        }
    }
}

// SAFETY: one `BlockState` per block. Its static arrays and dynamic memory
// are this OS thread's shared memory, which runs one block at a time: kept
// for the thread's life, aligned to 16 and at least as large as asked
// (`SharedMemory::static_array` and `dynamic`); barriers and warp exchanges
// stop the thread until `release` finds every thread (or every lane in the
// mask) waiting, and `exchange` returns the named lane's value of that
// round; a vote is a barrier of its own id that counts its round's votes;
// a module global is simulated device memory of the launch's module, as
// large as asked (or the thread fails).
unsafe impl Block for BlockState<'_> {
    fn barrier(&self, thread: &SimulatedThread<'_>, id: u32) {
        if self.continues_in_order(thread, id) {
            self.barrier_in_order(thread, id);
        } else {
            self.suspend(thread, ThreadState::AtBarrier(id));
        }
    }

    fn vote(&self, thread: &SimulatedThread<'_>, id: u32, predicate: bool) -> u32 {
        let t = thread.linear as usize;
        self.warp_state_used.set(true);
        let round = self.vote_rounds[t].get();
        self.vote_rounds[t].set(round + 1);
        let parity = (round % 2) as usize;
        self.votes[t][parity].set(predicate);
        // Released once every thread has voted: each then reads the votes of
        // this round, which nobody overwrites before all have voted again.
        self.suspend(thread, ThreadState::AtBarrier(id));
        self.votes.iter().filter(|v| v[parity].get()).count() as u32
    }

    fn active_lanes(&self, thread: &SimulatedThread<'_>) -> u32 {
        self.suspend(thread, ThreadState::AtActiveMask);
        // Set by `release` for this round, before any lane of the warp runs.
        self.active_masks[thread.linear as usize / 32].get()
    }

    fn module_global(&self, symbol: &'static str, bytes: usize) -> *mut u8 {
        let found = self
            .signals
            .runtime_code(|| match self.run.globals.as_deref() {
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
        self.warp_state_used.set(true);
        let round = self.exchanges[t].get();
        self.exchanges[t].set(round + 1);
        let values = &self.warp_values[warp][(round % 2) as usize];
        values[lane as usize].set(value);
        self.suspend(thread, ThreadState::AtWarp(mask));
        let lanes_in_warp = (self.count - warp * 32).min(32) as u32;
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

    fn static_shared(&self, symbol: &'static str, bytes: usize, align: usize) -> *mut u8 {
        let key = (symbol.as_ptr() as usize, symbol.len(), bytes);
        // The same question in the same block has the same answer
        // (`static_array`: the array stays, and `bytes` is what it was made
        // with in this block).
        if let Some((last, array)) = self.last_static.get() {
            if last == key {
                return array;
            }
        }
        let array = self.signals.runtime_code(|| {
            self.shared
                .borrow_mut()
                .static_array(symbol, bytes, self.first_serial.get())
        });
        let array = array.unwrap_or_else(|message| panic!("{message}"));
        if let Some((record, rank)) = self.cluster {
            // The array as the device code uses it: from the first byte at
            // `align` (its `static_shared` asks for `align` more bytes and
            // starts there), so that the same array's bytes are at the same
            // offsets in every block of the cluster.
            let skip = array.align_offset(align).min(bytes);
            record.publish(rank, symbol, array.wrapping_add(skip), bytes - skip);
        }
        self.last_static.set(Some((key, array)));
        array
    }

    fn dynamic_shared(&self) -> (*mut u8, usize) {
        self.dynamic
    }

    fn cluster_dim(&self) -> [u32; 3] {
        self.run.cluster.unwrap_or([1, 1, 1])
    }

    fn map_shared_rank(
        &self,
        _thread: &SimulatedThread<'_>,
        address: *const u8,
        rank: u32,
    ) -> *const u8 {
        let mapped = self.signals.runtime_code(|| match self.cluster {
            Some((record, own)) => record.map(own, address as usize, rank),
            None => Err(
                "distributed shared memory (mapa) in a launch that is not a cluster launch".into(),
            ),
        });
        mapped.unwrap_or_else(|message| panic!("{message}")) as *const u8
    }

    fn shared_identity(&self, _thread: &SimulatedThread<'_>, address: *const u8) -> u64 {
        let identity = self.signals.runtime_code(|| match self.cluster {
            Some((record, own)) => record.identity(own, address as usize),
            None => Err(
                "distributed shared memory (a Cluster's exchange) in a launch that is not a cluster launch"
                    .into(),
            ),
        });
        identity.unwrap_or_else(|message| panic!("{message}"))
    }

    fn after_atomics(&self, thread: &SimulatedThread<'_>, changed: bool) {
        if self.run.failed.load(std::sync::atomic::Ordering::Relaxed) {
            // A spin-wait on another block (a look-back) that failed.
            panic!("stopped: another block of the launch failed first");
        }
        if changed {
            self.worker.progress();
        }
        // A thread that yields after atomics may be spinning: here the
        // watchdog's verdict is read.
        if self.worker.stalled() {
            self.signals
                .runtime_code(|| self.fail(thread.linear as usize, Failure::Stalled));
        }
        self.suspend(thread, ThreadState::Yielded);
    }

    fn thread_of(&self, serial: u64) -> Option<([u32; 3], [u32; 3])> {
        let launch = self.run;
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

/// A block's share of a checked launch: its barrier interval, its threads'
/// warp clocks, and its shared memory's shadow.
pub(super) struct BlockRaces {
    /// How many barriers the block has passed.
    pub(super) interval: Cell<u32>,
    /// How many grid syncs the block has passed (every block of the launch
    /// passes each together).
    pub(super) grid: Cell<u32>,
    /// Per thread, what it knows of each lane of its warp's clock (its own
    /// entry is its clock; see `race_check::shadow`).
    pub(super) clocks: RefCell<Vec<[u32; 32]>>,
    /// Shared memory, by word address.
    pub(super) shared: RefCell<HashMap<usize, Shadow>>,
}

impl BlockRaces {
    /// The lanes `lanes` of one warp completed a warp operation together:
    /// each now knows what any of them knew, and moves its own clock on.
    pub(super) fn synchronise(&self, lanes: &[u32]) {
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

/// Which threads of the current round stopped at a barrier in order (the
/// in-order barrier, `in_order.rs`, which this module does not name: it
/// only adds methods to [`BlockState`]).
#[derive(Default)]
pub(super) struct InOrder {
    /// Threads `0..stopped` of the round (at positions `0..stopped`) stopped
    /// at barrier `id`, and are not yet in the block's counts.
    pub(super) stopped: std::cell::Cell<usize>,
    pub(super) id: std::cell::Cell<u32>,
}
