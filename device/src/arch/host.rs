//! Host implementations of the device primitives.
//!
//! Math and atomics are real. Thread coordinates, barriers, warp operations
//! and shared memory read the simulated thread that a CPU executor has made
//! current on this OS thread ([`simulation`]); with none, they panic, naming
//! themselves.

use super::ShuffleMode;

/// The context of a simulated GPU thread, for a CPU executor: the executor
/// sets one per simulated thread it runs (see [`simulation::run_as`]).
pub mod simulation {
    use super::ShuffleMode;
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

    /// What a simulated thread asks of its block.
    ///
    /// # Safety
    /// Device code trusts the answers: `static_shared` and `dynamic_shared`
    /// return memory valid for the bytes asked (`dynamic_shared`: for the
    /// bytes it reports), aligned as asked, private to the block and the same
    /// for every thread of it, alive while the block runs; `barrier` returns
    /// only once every thread of the block has called it with the same `id`;
    /// `exchange` returns only once the lanes in `mask` have called it, with
    /// the value of the lane that the mode names (or the caller's own).
    pub unsafe trait Block {
        /// Waits until every thread of the block has reached barrier `id`
        /// (0: `sync_threads`, 1: the shared-memory phase token's `sync`);
        /// for [`GRID_BARRIER`], until every thread of every block of the
        /// launch has.
        fn barrier(&self, thread: &SimulatedThread, id: u32);
        /// Waits, as at barrier `id` ([`VOTE_BARRIER`] for the block votes),
        /// until every thread of the block has voted, then returns how many
        /// voted `predicate` true (`sync_threads_count`; `_and` and `_or`
        /// compare it with the block's size and with 0).
        fn vote(&self, thread: &SimulatedThread, id: u32, predicate: bool) -> u32;
        /// The lanes of this thread's warp that call it together, the
        /// caller's included (`activemask`): the simulator runs each lane
        /// until it waits or exits, then releases the lanes waiting here
        /// together, so a lane that returned early is not among them.
        fn active_lanes(&self, thread: &SimulatedThread) -> u32;
        /// Keeps a line a thread printed (formatted) with the launch's
        /// output, which the executor writes to standard output when the
        /// launch completes.
        fn print(&self, thread: &SimulatedThread, line: &[u8]);
        /// The address of the module global `symbol` of `bytes` bytes for
        /// the launch's module on its device (made zeroed on first use, as
        /// a module's globals start), valid while the module is loaded:
        /// what the runtime writes through its driver's `module_global`.
        fn module_global(&self, symbol: &'static str, bytes: usize) -> *mut u8;
        /// Waits until the lanes in `mask` of this thread's warp have called
        /// it, then returns lane `source`'s `value` (for `mode` and `b`).
        fn exchange(
            &self,
            thread: &SimulatedThread,
            mask: u32,
            value: u32,
            mode: ShuffleMode,
            b: u32,
        ) -> u32;
        /// The block's instance of the static shared array `symbol`.
        fn static_shared(&self, symbol: &'static str, bytes: usize, align: usize) -> *mut u8;
        /// The block's dynamic shared memory.
        fn dynamic_shared(&self) -> (*mut u8, usize);
        /// Called by `thread` after a run of atomic operations and memory
        /// fences made on this OS thread: [`SPIN_ATOMICS_PER_CALL`] of them
        /// when one changed no memory (a load, a fence, a failed
        /// compare-and-swap or an exchange of equal values: what a spin loop
        /// does), [`ATOMICS_PER_CALL`] when all changed memory. `changed`
        /// tells whether any of them changed memory. A thread spinning on an
        /// atomic comes here regularly, so the executor can run other threads
        /// of the block from here: a spin-wait on a flag that another thread
        /// of the block sets then finishes, as it does on GPUs with
        /// independent thread scheduling (sm_70+).
        fn after_atomics(&self, thread: &SimulatedThread, changed: bool);
        /// The block and thread indices (`blockIdx`, `threadIdx`) of the
        /// simulated thread whose [`SimulatedThread::serial`] is `serial`,
        /// if it is a thread of this launch: for reports of a per-thread
        /// value used by another thread.
        fn thread_of(&self, serial: u64) -> Option<([u32; 3], [u32; 3])>;
        /// Records a memory access of `thread` for the race detector. Device
        /// code calls it only while [`set_recording`] is on, for the
        /// accesses it makes through the crate's types.
        fn record(&self, thread: &SimulatedThread, access: Access);
        /// The launch's thread-block cluster shape: `[1, 1, 1]` outside a
        /// cluster launch.
        fn cluster_dim(&self) -> [u32; 3] {
            [1, 1, 1]
        }
        /// The address in the shared memory of block `rank` of this
        /// block's cluster of what `address` is in this block's shared
        /// memory (a static array's byte, or the dynamic memory's). Fails
        /// the thread (a panic naming the problem) for an address outside
        /// the block's shared memory or a rank outside the cluster.
        fn map_shared_rank(
            &self,
            thread: &SimulatedThread,
            address: *const u8,
            rank: u32,
        ) -> *const u8 {
            let _ = (thread, address, rank);
            panic!("distributed shared memory (a Cluster's) outside a cluster launch")
        }
        /// A number naming the shared array (static, or the dynamic
        /// memory) that `address` lies in, the same in every block of the
        /// cluster for the same array and byte, and different for others:
        /// what a `Cluster::exchange` tags its pair with. Fails as
        /// [`map_shared_rank`](Self::map_shared_rank).
        fn shared_identity(&self, thread: &SimulatedThread, address: *const u8) -> u64 {
            let _ = (thread, address);
            panic!("distributed shared memory (a Cluster's) outside a cluster launch")
        }
    }

    /// A memory access that device code made through the crate's types
    /// (see [`Block::record`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Access {
        /// The first byte.
        pub address: usize,
        /// How many bytes from there.
        pub bytes: usize,
        /// A read, a write or an atomic operation.
        pub kind: AccessKind,
    }

    /// What an [`Access`] does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum AccessKind {
        /// A plain read (or a reference that allows reading).
        Read,
        /// A plain write (or a reference that allows writing).
        Write,
        /// An atomic operation: it races with plain accesses only.
        Atomic,
    }

    static RECORDING: AtomicBool = AtomicBool::new(false);

    /// Turns the reports of memory accesses ([`Block::record`]) on or off
    /// for the whole process (an executor turns them on while a launch it
    /// checks for races runs).
    pub fn set_recording(on: bool) {
        RECORDING.store(on, Relaxed);
    }

    /// Whether device code reports its memory accesses.
    #[inline(always)]
    pub(crate) fn recording() -> bool {
        RECORDING.load(Relaxed)
    }

    /// The barrier id of the block votes (`sync_threads_count` and its
    /// peers), as on the GPU: one of its own.
    pub const VOTE_BARRIER: u32 = 2;

    /// The barrier id inside block collectives (between one thread's write
    /// of their private scratch and the others' reads), as on the GPU: one
    /// of its own.
    pub const COLLECTIVE_BARRIER: u32 = 3;

    /// The barrier id of a grid sync (`Grid::sync`), as on the GPU: the
    /// executor releases it once every thread of the block is there *and*
    /// every block of the launch has reached it (a cooperative launch runs
    /// all its blocks at once).
    pub const GRID_BARRIER: u32 = 4;

    /// The barrier id of a `cp.async` ring's waits, as on the GPU: one of
    /// its own.
    pub const PIPELINE_BARRIER: u32 = 5;

    /// The barrier id of `mbarrier`s' initialisation (`MBarriers::init`),
    /// as on the GPU: one of its own.
    pub const MBARRIER_BARRIER: u32 = 6;

    /// The barrier id of a cluster sync (`Cluster::sync`): the executor
    /// releases it once every thread of the block is there *and* every
    /// block of the cluster has reached it (the blocks of a cluster run at
    /// once).
    pub const CLUSTER_BARRIER: u32 = 7;

    /// How many atomic operations and fences, one of which changed no
    /// memory, an OS thread makes between two calls of
    /// [`Block::after_atomics`]: often enough that a spinning thread lets the
    /// others of its block run soon.
    pub const SPIN_ATOMICS_PER_CALL: u32 = 64;

    /// How many atomic operations that all changed memory an OS thread makes
    /// between two calls of [`Block::after_atomics`]: rarely enough that
    /// atomic-heavy kernels (histograms) barely notice.
    pub const ATOMICS_PER_CALL: u32 = 1024;

    /// One simulated GPU thread's coordinates and its block.
    pub struct SimulatedThread<'a> {
        /// `threadIdx`.
        pub thread_idx: [u32; 3],
        /// `blockIdx`.
        pub block_idx: [u32; 3],
        /// `blockDim`.
        pub block_dim: [u32; 3],
        /// `gridDim`.
        pub grid_dim: [u32; 3],
        /// The linear index of the thread in its block.
        pub linear: u32,
        /// A number no other simulated thread of the process has (not 0):
        /// the identity that per-thread values (witnesses, phase tokens)
        /// record, and check at each use.
        pub serial: u64,
        /// The block's services.
        pub block: &'a dyn Block,
    }

    thread_local! {
        static CURRENT: Cell<*const SimulatedThread<'static>> = const { Cell::new(std::ptr::null()) };
    }

    /// Runs `f` as simulated thread `thread` on this OS thread: the device
    /// functions `f` calls read `thread`.
    ///
    /// # Safety
    /// `thread` is one thread of a launch that an executor runs: its
    /// coordinates are within `block_dim` and `grid_dim`, no other simulated
    /// thread of the launch has the same ones, and `linear` is its linear
    /// index in its block. The witnesses (`thread_index()` and its 2-D and
    /// 3-D forms) are unique only under these conditions, and the phase token
    /// and shared memory trust `block` (see [`Block`]).
    pub unsafe fn run_as<R>(thread: &SimulatedThread<'_>, f: impl FnOnce() -> R) -> R {
        struct Restore(*const SimulatedThread<'static>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| c.set(self.0));
            }
        }
        let erased = (thread as *const SimulatedThread<'_>).cast::<SimulatedThread<'static>>();
        let _restore = Restore(CURRENT.with(|c| c.replace(erased)));
        f()
    }

    /// Makes `thread` the current simulated thread of this OS thread until
    /// [`leave`] (or the next `enter`): what [`run_as`] does, without
    /// restoring the previous one, for an executor that switches between
    /// the threads of a block on every barrier.
    ///
    /// # Safety
    /// As [`run_as`], and `thread` stays alive and current only while the
    /// code it runs may call device functions: the executor calls [`leave`]
    /// (or `enter` with another thread) before `thread` goes away.
    #[inline(always)]
    pub unsafe fn enter(thread: &SimulatedThread<'_>) {
        let erased = (thread as *const SimulatedThread<'_>).cast::<SimulatedThread<'static>>();
        CURRENT.with(|c| c.set(erased));
    }

    /// No simulated thread is current on this OS thread any more.
    #[inline(always)]
    pub fn leave() {
        CURRENT.with(|c| c.set(std::ptr::null()));
    }

    /// The current simulated thread, if any.
    #[inline(always)]
    pub(crate) fn with<R>(f: impl FnOnce(Option<&SimulatedThread<'_>>) -> R) -> R {
        let ptr = CURRENT.with(Cell::get);
        // SAFETY: a non-null pointer was set by `run_as` or `enter`, whose
        // `thread` outlives the time it is current (their contracts).
        f(unsafe { ptr.as_ref() })
    }
}

use simulation::SimulatedThread;

#[cold]
#[track_caller]
fn outside_kernel(function: &str) -> ! {
    panic!(
        "gpu_device::{function} was called outside a kernel: it only runs inside a #[kernel] function launched on the GPU or the simulator"
    )
}

#[inline(always)]
#[track_caller]
fn current<R>(function: &str, f: impl FnOnce(&SimulatedThread<'_>) -> R) -> R {
    simulation::with(|t| match t {
        Some(t) => f(t),
        None => outside_kernel(function),
    })
}

/// The [`serial`](SimulatedThread::serial) of the current simulated thread;
/// 0 outside a kernel.
#[inline(always)]
pub(crate) fn current_serial() -> u64 {
    simulation::with(|t| t.map_or(0, |t| t.serial))
}

/// Fails the current simulated thread: `what`, made by the thread of
/// `serial`, is used by another one.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn used_by_another_thread(serial: u64, what: &str) -> ! {
    let maker = simulation::with(|t| {
        let t = t?;
        let ([bx, by, bz], [tx, ty, tz]) = t.block.thread_of(serial)?;
        Some(format!(
            "thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz})"
        ))
    })
    .unwrap_or_else(|| "a thread of another launch".into());
    panic!(
        "{what} made by {maker} was used by another thread: a per-thread value never leaves the thread that made it (it is neither Send nor Sync; host-only code such as a `thread_local!` shares it between the simulator's threads, which a GPU cannot do)"
    )
}

/// Reports an access of `bytes` bytes at `address` to the race detector,
/// when it is on ([`simulation::set_recording`]).
#[inline(always)]
pub(crate) fn record(address: *const u8, bytes: usize, kind: simulation::AccessKind) {
    if simulation::recording() {
        record_access(address as usize, bytes, kind)
    }
}

#[cold]
#[inline(never)]
fn record_access(address: usize, bytes: usize, kind: simulation::AccessKind) {
    simulation::with(|t| {
        if let Some(t) = t {
            let access = simulation::Access {
                address,
                bytes,
                kind,
            };
            t.block.record(t, access)
        }
    })
}

/// On the host, only checked in debug builds: the simulator's coordinates
/// are not trusted as optimisation facts.
///
/// # Safety
/// `condition` is true (as on the GPU, where it is an optimisation fact).
#[inline(always)]
pub(crate) unsafe fn assume(condition: bool) {
    debug_assert!(condition, "an assumed fact is false");
}

/// `x` (a register copy on the GPU, see the PTX side).
#[inline(always)]
pub(crate) fn computed_here(x: u32) -> u32 {
    x
}

/// Two words that name this block apart from every other simulated block
/// of the process: the serial of its thread 0 (unique per block and
/// launch, and never 0) and its linear rank, negated (as on the GPU).
#[inline]
pub(crate) fn block_identity() -> [u64; 2] {
    let first = current("block_identity", |t| t.serial - u64::from(t.linear));
    [first, !(crate::leader::block_rank() as u64)]
}

/// Reads the word at `ptr` as whatever bits it holds (an earlier block's
/// value, or the simulator's zeros), as the GPU's PTX load.
///
/// # Safety
/// `ptr` is an 8-byte aligned word of the block's shared memory that no
/// other thread writes meanwhile.
#[inline]
pub(crate) unsafe fn load_any_bits_u64(ptr: *const u64) -> u64 {
    // SAFETY: the caller's contract; an atomic read, as the simulator's
    // barrier records are read (its shared memory is allocated zeroed).
    unsafe { std::sync::atomic::AtomicU64::from_ptr(ptr.cast_mut()) }
        .load(std::sync::atomic::Ordering::Relaxed)
}

#[inline]
pub(crate) fn thread_idx() -> [u32; 3] {
    current("thread_idx", |t| t.thread_idx)
}

#[inline]
pub(crate) fn block_idx() -> [u32; 3] {
    current("block_idx", |t| t.block_idx)
}

#[inline]
pub(crate) fn block_dim() -> [u32; 3] {
    current("block_dim", |t| t.block_dim)
}

#[inline]
pub(crate) fn grid_dim() -> [u32; 3] {
    current("grid_dim", |t| t.grid_dim)
}

#[inline]
pub(crate) fn lane_id() -> u32 {
    current("warp::lane_id", |t| t.linear % 32)
}

/// The barrier of `sync_threads`.
pub(crate) const THREADS_BARRIER: u32 = 0;
/// The barrier of the shared-memory phase token (`Block::sync`).
pub(crate) const PHASE_BARRIER: u32 = 1;
/// The barrier inside a block collective (see the PTX side).
pub(crate) const COLLECTIVE_BARRIER: u32 = simulation::COLLECTIVE_BARRIER;
/// The barrier of a `cp.async` ring's waits (see the PTX side).
#[allow(dead_code)]
pub(crate) const PIPELINE_BARRIER: u32 = simulation::PIPELINE_BARRIER;
/// The barrier of `mbarrier`s' initialisation (see the PTX side).
pub(crate) const MBARRIER_BARRIER: u32 = simulation::MBARRIER_BARRIER;

/// Waits for every thread of the grid: barrier [`simulation::GRID_BARRIER`],
/// which the executor releases across the blocks of a cooperative launch.
#[inline]
pub(crate) fn grid_sync() {
    current("Grid::sync", |t| {
        t.block.barrier(t, simulation::GRID_BARRIER)
    })
}

#[inline]
pub(crate) fn barrier(id: u32) {
    current(barrier_name(id), |t| t.block.barrier(t, id))
}

/// What waits at barrier `id`, for the report of a call outside a kernel.
fn barrier_name(id: u32) -> &'static str {
    match id {
        PHASE_BARRIER => "shared::Block::sync",
        COLLECTIVE_BARRIER => "a block collective",
        PIPELINE_BARRIER => "cp_async::CpAsyncRing::wait",
        MBARRIER_BARRIER => "mbarrier::MBarriers::init",
        _ => "sync_threads",
    }
}

/// [`barrier`], and whether thread 0 of the block reached it: always, here
/// (the simulator reports a barrier that a thread exited before reaching).
#[inline]
pub(crate) fn barrier_thread_0_reached(id: u32) -> bool {
    barrier(id);
    true
}

/// A kernel's printed line, formatted as the host's C library formats a
/// GPU's: kept with the launch's output inside a simulated kernel, written
/// to standard output at once elsewhere.
pub(crate) fn print(format: &[u8], args: &[u64]) {
    let line = crate::c_printf::format(format, args);
    simulation::with(|t| match t {
        Some(t) => t.block.print(t, &line),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&line);
            let _ = out.flush();
        }
    })
}

pub(crate) fn vote_count(predicate: bool) -> u32 {
    current("vote::sync_threads_count", |t| {
        t.block.vote(t, simulation::VOTE_BARRIER, predicate)
    })
}

pub(crate) fn vote_all(predicate: bool) -> bool {
    current("vote::sync_threads_and", |t| {
        t.block.vote(t, simulation::VOTE_BARRIER, predicate) as usize
            == t.block_dim.iter().map(|&d| d as usize).product()
    })
}

pub(crate) fn vote_any(predicate: bool) -> bool {
    current("vote::sync_threads_or", |t| {
        t.block.vote(t, simulation::VOTE_BARRIER, predicate) > 0
    })
}

/// [`barrier`] at `id`, and whether any thread voted `predicate` true.
pub(crate) fn barrier_any(id: u32, predicate: bool) -> bool {
    current(barrier_name(id), |t| t.block.vote(t, id, predicate) > 0)
}

pub(crate) fn active_mask() -> u32 {
    current("warp::activemask", |t| t.block.active_lanes(t))
}

/// Every lane in `mask`'s value (`lo`, `hi`), gathered with one exchange per
/// lane and word, as `ballot` does; lanes outside `mask` get `None`.
fn gather(t: &SimulatedThread<'_>, mask: u32, lo: u32, hi: u32, wide: bool) -> [Option<u64>; 32] {
    let mut values = [None; 32];
    for (lane, value) in values.iter_mut().enumerate() {
        if mask & (1 << lane) != 0 {
            let l = t
                .block
                .exchange(t, mask, lo, ShuffleMode::Index, lane as u32);
            let h = if wide {
                t.block
                    .exchange(t, mask, hi, ShuffleMode::Index, lane as u32)
            } else {
                0
            };
            *value = Some(u64::from(h) << 32 | u64::from(l));
        }
    }
    values
}

pub(crate) fn match_any(mask: u32, lo: u32, hi: u32, wide: bool) -> u32 {
    current("warp::match_any_sync", |t| {
        let mine = u64::from(if wide { hi } else { 0 }) << 32 | u64::from(lo);
        gather(t, mask, lo, hi, wide)
            .iter()
            .enumerate()
            .filter(|(_, v)| **v == Some(mine))
            .fold(0, |bits, (lane, _)| bits | 1 << lane)
    })
}

pub(crate) fn match_all(mask: u32, lo: u32, hi: u32, wide: bool) -> (u32, bool) {
    current("warp::match_all_sync", |t| {
        let values = gather(t, mask, lo, hi, wide);
        let mut present = values.iter().flatten();
        let first = present.next();
        let all = present.all(|v| Some(v) == first);
        (if all { mask } else { 0 }, all)
    })
}

/// On the simulator a sleeping thread lets the other threads of its block
/// run (a thread that sleeps in a loop waits for one of them), as after a
/// run of atomics that changed nothing.
pub(crate) fn nanosleep(_ns: u32) {
    call_after_atomics(false);
}

pub(crate) fn sync_warp(mask: u32) {
    current("sync::sync_warp", |t| {
        t.block
            .exchange(t, mask, 0, ShuffleMode::Index, t.linear % 32);
    })
}

/// A 64-bit relaxed atomic load (the PTX side's `ld.relaxed.gpu`); tells
/// the executor, as atomics do, so a thread spinning on it lets others run.
///
/// # Safety
/// `ptr` is valid, 8-byte aligned memory accessed only atomically.
pub(crate) unsafe fn load_relaxed_gpu_u64(ptr: *const u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // SAFETY: forwarded from the caller.
    let value = unsafe { AtomicU64::from_ptr(ptr.cast_mut()) }.load(Relaxed);
    after_atomic(false);
    value
}

/// A 64-bit relaxed atomic store (`st.relaxed.gpu`).
///
/// # Safety
/// As [`load_relaxed_gpu_u64`].
pub(crate) unsafe fn store_relaxed_gpu_u64(ptr: *mut u64, value: u64) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // SAFETY: forwarded from the caller.
    unsafe { AtomicU64::from_ptr(ptr) }.store(value, Relaxed);
    after_atomic(true);
}

/// A 64-bit relaxed compare-and-swap (`atom.relaxed.gpu.cas`): the old value.
///
/// # Safety
/// As [`load_relaxed_gpu_u64`].
pub(crate) unsafe fn cas_relaxed_gpu_u64(ptr: *mut u64, current: u64, new: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // SAFETY: forwarded from the caller.
    let old = match unsafe { AtomicU64::from_ptr(ptr) }
        .compare_exchange(current, new, Relaxed, Relaxed)
    {
        Ok(v) | Err(v) => v,
    };
    after_atomic(old == current && new != current);
    old
}

pub(crate) fn fence_device() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    after_atomic(false);
}

pub(crate) fn fence_system() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// The launch's module global `symbol` of `bytes` bytes (read by
/// `constant::Constant::get` and a failed `gpu_assert!`, which `function`
/// names).
#[track_caller]
pub(crate) fn module_global(function: &str, symbol: &'static str, bytes: usize) -> *mut u8 {
    current(function, |t| t.block.module_global(symbol, bytes))
}

/// Ends the simulated thread after a failed `gpu_assert!` (its record is
/// written): a panic with the report, which the executor gives the launch's
/// failure.
#[track_caller]
pub(crate) fn assertion_failed<const F: usize, const A: usize>(
    message: &crate::print::Printer<F, A>,
    file: &'static str,
    line: u32,
    column: u32,
) -> ! {
    let (format, args) = message.parts();
    let text = crate::c_printf::format(format, args);
    panic!(
        "gpu_assert! failed at {file}:{line}:{column}: {}",
        String::from_utf8_lossy(&text)
    )
}

pub(crate) fn fence_block() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    after_atomic(false);
}

thread_local! {
    /// The atomic operations and fences this OS thread made since it last
    /// called [`simulation::Block::after_atomics`]: their count times
    /// [`ATOMIC`], plus [`CHANGED`] if one changed memory and [`UNCHANGED`]
    /// if one did not.
    static ATOMICS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

const CHANGED: u32 = 1;
const UNCHANGED: u32 = 2;
const ATOMIC: u32 = 4;

/// Counts an atomic operation or fence of the current simulated thread, and
/// tells its executor after a run of them (see
/// [`simulation::Block::after_atomics`]). Outside a kernel (host code using
/// an atomic on host memory) the count leads nowhere.
#[inline(always)]
pub(crate) fn after_atomic(changed: bool) {
    let seen = ATOMICS.with(|a| {
        let seen = (a.get() + ATOMIC) | if changed { CHANGED } else { UNCHANGED };
        a.set(seen);
        seen
    });
    if seen >= ATOMIC * simulation::SPIN_ATOMICS_PER_CALL
        && (seen & UNCHANGED != 0 || seen >= ATOMIC * simulation::ATOMICS_PER_CALL)
    {
        call_after_atomics(seen & CHANGED != 0);
    }
}

#[cold]
#[inline(never)]
fn call_after_atomics(changed: bool) {
    ATOMICS.with(|a| a.set(0));
    simulation::with(|t| {
        if let Some(t) = t {
            t.block.after_atomics(t, changed)
        }
    })
}

pub(crate) fn ballot(mask: u32, predicate: bool) -> u32 {
    current("warp::ballot_sync", |t| {
        // Each lane contributes its bit; a xor-free way: exchange with every
        // lane and collect, one exchange per lane in the mask.
        let mut bits = 0;
        for lane in 0..32 {
            if mask & (1 << lane) != 0 {
                let p = t
                    .block
                    .exchange(t, mask, predicate as u32, ShuffleMode::Index, lane);
                bits |= (p & 1) << lane;
            }
        }
        bits
    })
}

pub(crate) fn shuffle(mode: ShuffleMode, mask: u32, word: u32, b: u32) -> u32 {
    current("warp shuffles", |t| {
        t.block.exchange(t, mask, word, mode, b)
    })
}

pub(crate) fn dynamic_shared() -> (*mut u8, usize) {
    current("shared::dynamic", |t| t.block.dynamic_shared())
}

/// A static shared array of the current simulated block.
#[track_caller]
pub(crate) fn static_shared(symbol: &'static str, bytes: usize, align: usize) -> *mut u8 {
    current("shared_array!", |t| {
        t.block.static_shared(symbol, bytes, align)
    })
}

pub(crate) mod math {
    pub(crate) fn sqrt_f32(x: f32) -> f32 {
        x.sqrt()
    }
    pub(crate) fn sqrt_f64(x: f64) -> f64 {
        x.sqrt()
    }
    pub(crate) fn floor_f32(x: f32) -> f32 {
        x.floor()
    }
    pub(crate) fn floor_f64(x: f64) -> f64 {
        x.floor()
    }
    pub(crate) fn ceil_f32(x: f32) -> f32 {
        x.ceil()
    }
    pub(crate) fn ceil_f64(x: f64) -> f64 {
        x.ceil()
    }
    pub(crate) fn round_f32(x: f32) -> f32 {
        x.round()
    }
    pub(crate) fn round_f64(x: f64) -> f64 {
        x.round()
    }
    pub(crate) fn trunc_f32(x: f32) -> f32 {
        x.trunc()
    }
    pub(crate) fn trunc_f64(x: f64) -> f64 {
        x.trunc()
    }
    pub(crate) fn abs_f32(x: f32) -> f32 {
        x.abs()
    }
    pub(crate) fn abs_f64(x: f64) -> f64 {
        x.abs()
    }
    pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    pub(crate) fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    pub(crate) fn min_f32(a: f32, b: f32) -> f32 {
        a.min(b)
    }
    pub(crate) fn min_f64(a: f64, b: f64) -> f64 {
        a.min(b)
    }
    pub(crate) fn max_f32(a: f32, b: f32) -> f32 {
        a.max(b)
    }
    pub(crate) fn max_f64(a: f64, b: f64) -> f64 {
        a.max(b)
    }
    pub(crate) fn copysign_f32(a: f32, b: f32) -> f32 {
        a.copysign(b)
    }
    pub(crate) fn copysign_f64(a: f64, b: f64) -> f64 {
        a.copysign(b)
    }
    pub(crate) fn exp2_approx(x: f32) -> f32 {
        x.exp2()
    }
    pub(crate) fn log2_approx(x: f32) -> f32 {
        x.log2()
    }
    pub(crate) fn sin_approx(x: f32) -> f32 {
        x.sin()
    }
    pub(crate) fn cos_approx(x: f32) -> f32 {
        x.cos()
    }
    pub(crate) fn rsqrt_approx(x: f32) -> f32 {
        1.0 / x.sqrt()
    }
}

/// Half precision in software, rounding as the GPU's instructions do (see
/// `crate::half::soft`).
pub(crate) mod half {
    pub(crate) use crate::half::soft::ops::*;
}
