//! Assertions with a message: [`gpu_assert!`](crate::gpu_assert!) ends the
//! launch, as CUDA's `assert` does, and the host gets an error naming the
//! kernel, the block, the thread, the file and line, and the message (the
//! runtime's `Error::KernelAssertion`), on a GPU as on the simulator.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::gpu_assert;
//!
//! // With `#[kernel]`:
//! pub fn normalise(x: &[f32], total: f32, mut out: DisjointSlice<f32>) {
//!     gpu_assert!(total > 0.0, "total must be positive, got {}", total);
//!     let i = thread_index();
//!     if let Some(v) = x.get(i.get()) {
//!         out.set(i, v / total);
//!     }
//! }
//! ```
//!
//! How the report reaches the host: a GPU context is unusable after a
//! kernel traps, its memory unreadable, so the runtime gives each device an
//! [`AssertionRecord`] in mapped page-locked host memory, and writes its
//! device address into each module's global [`RECORD_SYMBOL`] when it loads
//! the module. The first thread whose assertion fails claims the record
//! (an atomic compare-and-swap), writes where it is and the message (the C
//! format string and values of [`print`](mod@crate::print), formatted on the
//! host), makes the writes visible to the host (`membar.sys`), and traps.
//! The runtime reads the record when the launch's failure surfaces. The
//! simulator runs the same code on the host, then ends the thread.
//!
//! The message is built only when the condition is false. A failed
//! assertion ends the whole launch: other threads may or may not have run,
//! and the CUDA context is unusable afterwards (every later call fails), as
//! with any kernel fault.

use crate::print::Printer;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The symbol of the global that holds the device address of the device's
/// [`AssertionRecord`] (0 until the runtime sets it: a failed assertion then
/// only traps).
pub const RECORD_SYMBOL: &str = "__gpu_assertion_record";

/// How many bytes of the file name the record keeps.
pub const FILE_BYTES: usize = 160;
/// How many bytes of the message's C format string the record keeps.
pub const FORMAT_BYTES: usize = 512;

/// Where a failed assertion leaves its report: one per device, in mapped
/// page-locked host memory. The layout is shared by the device code that
/// writes it and the runtime that reads it (this one definition).
#[repr(C)]
pub struct AssertionRecord {
    /// [`EMPTY`](Self::EMPTY), [`WRITING`](Self::WRITING) or
    /// [`COMPLETE`](Self::COMPLETE).
    pub state: AtomicU32,
    /// The assertion's line.
    pub line: u32,
    /// The assertion's column.
    pub column: u32,
    /// `blockIdx` of the thread.
    pub block: [u32; 3],
    /// `threadIdx` of the thread.
    pub thread: [u32; 3],
    /// How many bytes of `file` hold the file name.
    pub file_len: u32,
    /// How many bytes of `format` hold the message's C format string.
    pub format_len: u32,
    /// How many of `args` the format string uses.
    pub arg_count: u32,
    /// The message's values, one 8-byte slot each (`print`'s `vprintf` buffer).
    pub args: [u64; crate::print::MAX_VALUES],
    /// The file name (cut at [`FILE_BYTES`]).
    pub file: [u8; FILE_BYTES],
    /// The message's C format string (cut at [`FORMAT_BYTES`]).
    pub format: [u8; FORMAT_BYTES],
}

impl AssertionRecord {
    /// No assertion has failed.
    pub const EMPTY: u32 = 0;
    /// A thread has claimed the record and is writing it.
    pub const WRITING: u32 = 1;
    /// The record holds a failed assertion.
    pub const COMPLETE: u32 = 2;
}

/// The device address of this device's record, set by the runtime in every
/// module it loads (on the simulator, the module's global is found through
/// the executor instead).
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
static __gpu_assertion_record: AtomicU64 = AtomicU64::new(0);

/// The address in [`RECORD_SYMBOL`]: 0 when the runtime has set none.
#[inline(always)]
fn record_address() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        __gpu_assertion_record.load(Ordering::Relaxed)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let global = crate::arch::module_global("gpu_assert!", RECORD_SYMBOL, 8);
        // SAFETY: the executor's module global of 8 bytes, 8-aligned (its
        // allocations are 256-aligned), written only by the runtime before
        // launches, read atomically here.
        unsafe { (*global.cast::<AtomicU64>()).load(Ordering::Relaxed) }
    }
}

/// Ends the launch for a failed assertion at `file:line:column` with the
/// message in `message`: writes the record (if this thread is the first),
/// then traps (on the simulator: panics with the message). Public for the
/// macro, and safe: called from anywhere, it ends the launch as a panic
/// does, and the record it writes is a report, which nothing trusts.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn fail<const F: usize, const A: usize>(
    message: &Printer<F, A>,
    file: &'static str,
    line: u32,
    column: u32,
) -> ! {
    let address = record_address();
    if address != 0 {
        // SAFETY: the runtime set `address` to its record for this device:
        // mapped page-locked memory of `size_of::<AssertionRecord>()` bytes,
        // aligned, that lives as long as the process. Threads claim it with
        // a compare-and-swap, and only the one that moved it from EMPTY
        // writes the other fields (which nothing else reads before
        // COMPLETE).
        unsafe { write_record(address as *mut AssertionRecord, message, file, line, column) };
    }
    crate::arch::assertion_failed(message, file, line, column)
}

/// How many 1 µs sleeps a thread that failed an assertion after another
/// waits for that thread's record before it traps (about 20 ms).
#[cfg(target_arch = "nvptx64")]
const WAIT_ROUNDS: u32 = 20_000;

/// Claims and writes the record at `record`; a thread that finds it claimed
/// waits for it to be complete.
///
/// # Safety
/// As in [`fail`]: `record` is the runtime's record for this device.
unsafe fn write_record<const F: usize, const A: usize>(
    record: *mut AssertionRecord,
    message: &Printer<F, A>,
    file: &'static str,
    line: u32,
    column: u32,
) {
    // SAFETY: `record` is valid (the caller); `state` is only used atomically.
    let state = unsafe { &(*record).state };
    if state
        .compare_exchange(
            AssertionRecord::EMPTY,
            AssertionRecord::WRITING,
            Ordering::Relaxed,
            Ordering::Relaxed,
        )
        .is_err()
    {
        // Another thread writes the record: a trap now would end the launch
        // before its report is complete. Wait for it, for a bounded time (a
        // thread of the grid that claimed it always finishes writing on a
        // GPU, whose threads make progress independently; the simulator's
        // threads do not, and panic at once).
        #[cfg(target_arch = "nvptx64")]
        for _ in 0..WAIT_ROUNDS {
            if state.load(Ordering::Relaxed) == AssertionRecord::COMPLETE {
                break;
            }
            crate::arch::nanosleep(1_000);
        }
        return;
    }
    let (format, args) = message.parts();
    let block = crate::arch::block_idx();
    let thread = crate::arch::thread_idx();
    // SAFETY: this thread claimed the record: no other writes these fields.
    // Field by field through raw places: no reference to the record is
    // made while others may read `state`.
    unsafe {
        (*record).line = line;
        (*record).column = column;
        (*record).block = block;
        (*record).thread = thread;
        let file_len = file.len().min(FILE_BYTES);
        let file_field = &mut (*record).file;
        file_field[..file_len].copy_from_slice(&file.as_bytes()[..file_len]);
        (*record).file_len = file_len as u32;
        let format_len = format.len().min(FORMAT_BYTES);
        let format_field = &mut (*record).format;
        format_field[..format_len].copy_from_slice(&format[..format_len]);
        (*record).format_len = format_len as u32;
        let count = args.len().min(crate::print::MAX_VALUES);
        let args_field = &mut (*record).args;
        args_field[..count].copy_from_slice(&args[..count]);
        (*record).arg_count = count as u32;
    }
    // The fields reach the host before the record says it is complete, and
    // both before the trap.
    crate::arch::fence_system();
    state.store(AssertionRecord::COMPLETE, Ordering::Relaxed);
    crate::arch::fence_system();
}
