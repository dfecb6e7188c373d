//! Collectives on the simulator, with NCCL's semantics on host memory.
//!
//! A communicator's rank runs each collective as one operation on the stream
//! it was queued on: the operation reads the rank's send buffer, meets the
//! other ranks ([`rendezvous`]), and writes the rank's receive buffer from
//! everyone's contributions. As on a GPU, the stream waits there until every
//! rank has arrived; a rank runs its collectives in the order they were
//! queued, whatever streams they were queued on (NCCL serialises a
//! communicator's work too). A rank that disagrees with the others on the
//! operation, element type, count or root fails the collective with an error
//! naming both, where NCCL would hang or compute garbage.

mod reduce;
pub(crate) mod rendezvous;

use super::super::{
    Collective, CollectiveKind, CommHandle, DriverError, SIMULATED_ID_MAGIC, UNIQUE_ID_BYTES,
};
use super::errors::collective_failed;
use super::stream::{self, Failure};
use rendezvous::{Board, Files, InProcess};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// One rank of a simulated communicator.
struct SimComm {
    rank: usize,
    ranks: usize,
    board: Arc<dyn Board>,
    /// Collectives queued on this rank so far.
    issued: Mutex<u64>,
    /// Collectives this rank has finished; the next one starts when its
    /// number comes up.
    finished: Mutex<u64>,
    changed: Condvar,
}

impl SimComm {
    fn handle(rank: usize, ranks: usize, board: Arc<dyn Board>) -> CommHandle {
        CommHandle(Arc::into_raw(Arc::new(SimComm {
            rank,
            ranks,
            board,
            issued: Mutex::new(0),
            finished: Mutex::new(0),
            changed: Condvar::new(),
        })) as usize)
    }

    /// Waits until this rank has finished `count` collectives (or the timeout passed).
    fn wait_finished(&self, count: u64, timeout: Option<Duration>) -> bool {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        let start = std::time::Instant::now();
        while *finished < count {
            finished = match timeout {
                Some(limit) if start.elapsed() >= limit => return false,
                Some(limit) => {
                    self.changed
                        .wait_timeout(finished, limit - start.elapsed())
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self
                    .changed
                    .wait(finished)
                    .unwrap_or_else(|e| e.into_inner()),
            };
        }
        true
    }

    fn finish_one(&self) {
        *self.finished.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.changed.notify_all();
    }
}

fn with<R>(handle: CommHandle, f: impl FnOnce(&Arc<SimComm>) -> R) -> R {
    // SAFETY: handles come from `SimComm::handle`, which leaked one strong count
    // that `destroy` gives back; borrowed here without touching the count.
    let comm = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle.0 as *const SimComm) });
    f(&comm)
}

fn timeout() -> Option<Duration> {
    super::settings::settings().map_or(Some(Duration::from_secs(60)), |s| s.timeout)
}

/// A fresh id: the magic, then 16 bytes no other id of this host has.
pub(crate) fn unique_id() -> [u8; UNIQUE_ID_BYTES] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut id = [0u8; UNIQUE_ID_BYTES];
    id[..8].copy_from_slice(SIMULATED_ID_MAGIC);
    for half in 0..2 {
        // Randomly keyed hashes of the time, the process and a counter.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        hasher.write_u32(std::process::id());
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        let at = 8 + half * 8;
        id[at..at + 8].copy_from_slice(&hasher.finish().to_le_bytes());
    }
    id
}

/// The directory where the ranks of `id` meet.
fn meeting_dir(id: &[u8; UNIQUE_ID_BYTES]) -> Result<std::path::PathBuf, DriverError> {
    if &id[..8] != SIMULATED_ID_MAGIC {
        return Err(collective_failed(
            "ncclCommInitRank",
            "this unique id was not made by the simulator (an NCCL id from a process on a GPU?): make it with UniqueId::new() in a process on the simulator".into(),
        ));
    }
    let base = std::env::var_os(rendezvous::SIM_RENDEZVOUS_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let session: String = id[8..24].iter().map(|b| format!("{b:02x}")).collect();
    Ok(base.join(format!("gpu-sim-comm-{session}")))
}

pub(crate) fn init_rank(
    device: usize,
    id: &[u8; UNIQUE_ID_BYTES],
    ranks: usize,
    rank: usize,
) -> Result<CommHandle, DriverError> {
    let dir = meeting_dir(id)?;
    let board = Files::join(dir, ranks, rank, device, timeout())
        .map_err(|e| collective_failed("ncclCommInitRank", e))?;
    Ok(SimComm::handle(rank, ranks, Arc::new(board)))
}

pub(crate) fn init_all(devices: &[usize]) -> Vec<CommHandle> {
    let board: Arc<dyn Board> = Arc::new(InProcess::new(devices.len()));
    (0..devices.len())
        .map(|rank| SimComm::handle(rank, devices.len(), Arc::clone(&board)))
        .collect()
}

pub(crate) fn destroy(handle: CommHandle) {
    // SAFETY: the count leaked by `SimComm::handle`, given back once; queued
    // collectives hold counts of their own.
    let comm = unsafe { Arc::from_raw(handle.0 as *const SimComm) };
    let issued = *comm.issued.lock().unwrap_or_else(|e| e.into_inner());
    // As ncclCommDestroy: queued collectives complete first (or time out).
    if comm.wait_finished(issued, timeout()) {
        comm.board.close(comm.rank);
    }
}

/// The header each rank's contribution starts with: what it called.
fn header(call: &Collective) -> [u64; 5] {
    let (kind, op, root) = match call.kind {
        CollectiveKind::AllReduce(op) => (0, op as u64, 0),
        CollectiveKind::Broadcast { root } => (1, 0, root as u64),
        CollectiveKind::ReduceScatter(op) => (2, op as u64, 0),
        CollectiveKind::AllGather => (3, 0, 0),
    };
    [kind, op, root, call.count as u64, call.element as u64]
}

const HEADER_BYTES: usize = 5 * 8;

fn describe(header: &[u64]) -> String {
    let name = |names: &[&'static str], i: u64| names.get(i as usize).copied().unwrap_or("?");
    let element = name(
        &["i8", "u8", "i32", "u32", "i64", "u64", "f32", "f64"],
        header[4],
    );
    let op = name(&["sum", "product", "max", "min"], header[1]);
    let count = header[3];
    match header[0] {
        0 => format!("all-reduce ({op}) of {count} {element}"),
        1 => format!("broadcast of {count} {element} from rank {}", header[2]),
        2 => format!("reduce-scatter ({op}) of {count} {element} per rank"),
        _ => format!("all-gather of {count} {element} per rank"),
    }
}

/// One rank's collective, run by its stream: read, meet, write.
///
/// # Safety
/// As [`Driver::collectives`](super::super::Driver::collectives) for `call`.
unsafe fn run(comm: &SimComm, call: &Collective, seq: u64) -> Result<(), String> {
    let bytes = call.element.bytes();
    let (sent, received) = call.kind.lengths(call.count, comm.ranks);
    let reads = !matches!(call.kind, CollectiveKind::Broadcast { root } if root != comm.rank);
    let mut contribution: Vec<u8> = header(call).iter().flat_map(|h| h.to_le_bytes()).collect();
    if reads && sent > 0 {
        // SAFETY: `send` holds `sent` elements of this rank's device, alive
        // and unwritten until the collective completes (the caller's contract).
        let data = unsafe { std::slice::from_raw_parts(call.send as *const u8, sent * bytes) };
        contribution.extend_from_slice(data);
    }
    let parts = comm
        .board
        .exchange(seq, comm.rank, contribution, timeout())?;
    let own = &parts[comm.rank][..HEADER_BYTES];
    for (r, part) in parts.iter().enumerate() {
        if part[..HEADER_BYTES] != *own {
            let read = |p: &[u8]| -> Vec<u64> {
                p.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect()
            };
            return Err(format!(
                "collective #{seq}: rank {r} called {} but rank {} called {}: every rank must call the same collectives in the same order",
                describe(&read(&part[..HEADER_BYTES])),
                comm.rank,
                describe(&read(own))
            ));
        }
    }
    let data: Vec<&[u8]> = parts.iter().map(|p| &p[HEADER_BYTES..]).collect();
    let mut out = vec![0u8; received * bytes];
    match call.kind {
        CollectiveKind::AllReduce(op) => reduce::reduce(call.element, op, &data, &mut out),
        CollectiveKind::Broadcast { root } => out.copy_from_slice(data[root]),
        CollectiveKind::ReduceScatter(op) => {
            let block = comm.rank * received * bytes..(comm.rank + 1) * received * bytes;
            let blocks: Vec<&[u8]> = data.iter().map(|d| &d[block.clone()]).collect();
            reduce::reduce(call.element, op, &blocks, &mut out);
        }
        CollectiveKind::AllGather if sent > 0 => {
            for (slot, part) in out.chunks_exact_mut(sent * bytes).zip(&data) {
                slot.copy_from_slice(part);
            }
        }
        CollectiveKind::AllGather => {}
    }
    if !out.is_empty() {
        // SAFETY: `recv` holds `received` elements of this rank's device,
        // alive and used by nothing else until the collective completes.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), call.recv as *mut u8, out.len()) };
    }
    Ok(())
}

/// Queues each call on its stream; an error (from a capturing stream, where
/// collectives cannot be recorded) stops at the call that could not be queued.
///
/// # Safety
/// As [`Driver::collectives`](super::super::Driver::collectives).
pub(crate) unsafe fn queue(calls: &[Collective]) -> Result<(), DriverError> {
    for call in calls {
        let call = *call;
        let comm = with(call.comm, Arc::clone);
        let seq = {
            let mut issued = comm.issued.lock().unwrap_or_else(|e| e.into_inner());
            *issued += 1;
            *issued - 1
        };
        let queued_comm = Arc::clone(&comm);
        let queued = stream::enqueue(
            call.stream,
            Box::new(move || {
                // This rank's earlier collectives first, wherever they were queued.
                let outcome = if comm.wait_finished(seq, timeout()) {
                    // SAFETY: the caller's contract covers the call until it completes.
                    unsafe { run(&comm, &call, seq) }
                } else {
                    Err(format!(
                        "collective #{seq} of rank {} waited for this rank's earlier collectives, which did not finish",
                        comm.rank
                    ))
                };
                comm.finish_one();
                // NCCL's errors leave the CUDA context usable.
                outcome.map_err(|e| Failure::Once(format!("{}: {e}", call.kind.name())))
            }),
        );
        if let Err(e) = queued {
            // Not queued: this rank's later collectives must not wait for it.
            *queued_comm.issued.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            return Err(e);
        }
    }
    Ok(())
}
