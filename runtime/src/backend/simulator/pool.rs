//! The simulator's memory pools, one per device, with the reuse and
//! accounting of CUDA's stream-ordered allocator (`cuMemAllocAsync` from a
//! device's default pool):
//!
//! - a freed block stays in the pool (reserved, not used) and is reused by a
//!   later allocation of the same rounded size on the stream that freed it
//!   (stream order puts the allocation after the free), or on any stream once
//!   the free has completed; never on another stream while the free is still
//!   pending (CUDA's hidden cross-stream dependencies are off, on both
//!   backends);
//! - at a synchronisation (stream, event, device), cached memory above the
//!   release threshold goes back to the system; trimming does so on demand;
//! - an allocation that does not fit first gives back the completed cached
//!   blocks.
//!
//! CUDA reuses parts of larger blocks and reserves memory in chunks; here a
//! block is reused whole, by an allocation of its rounded size, and reserved
//! exactly: the accounting is the same, the numbers finer.

use super::super::MAX_DEVICES;
use std::sync::{Mutex, MutexGuard};

/// Allocation sizes are rounded up to this.
pub(crate) const GRANULE: usize = 512;

/// A freed block kept by the pool.
struct Cached {
    ptr: usize,
    bytes: usize,
    /// The stream that freed it ([`super::stream::identity`]; 0: none).
    stream: usize,
    /// Whether the stream has reached the free.
    completed: bool,
}

struct Pool {
    cached: Vec<Cached>,
    /// Bytes of live allocations.
    used: usize,
    /// Bytes held: live and cached.
    reserved: usize,
    /// Cached bytes kept at a synchronisation. The CUDA backend sets its
    /// pools to keep everything when it opens a device; so does this.
    threshold: u64,
}

static POOLS: [Mutex<Pool>; MAX_DEVICES] = [const {
    Mutex::new(Pool {
        cached: Vec::new(),
        used: 0,
        reserved: 0,
        threshold: u64::MAX,
    })
}; MAX_DEVICES];

fn pool(device: usize) -> MutexGuard<'static, Pool> {
    POOLS[device].lock().unwrap_or_else(|e| e.into_inner())
}

/// `bytes` rounded up to the pool's granule.
pub(crate) fn rounded(bytes: usize) -> usize {
    bytes.div_ceil(GRANULE).saturating_mul(GRANULE)
}

/// A cached block of `bytes` (rounded) that an allocation on `stream` may
/// reuse now, taken out of the cache.
pub(crate) fn reuse(device: usize, bytes: usize, stream: usize) -> Option<usize> {
    let mut pool = pool(device);
    // The stream's own latest free first, then the latest completed one.
    let at = pool
        .cached
        .iter()
        .rposition(|c| c.bytes == bytes && c.stream == stream)
        .or_else(|| {
            pool.cached
                .iter()
                .rposition(|c| c.bytes == bytes && c.completed)
        })?;
    let block = pool.cached.remove(at);
    pool.used += block.bytes;
    Some(block.ptr)
}

/// Records a new block of `bytes` (rounded), in use.
pub(crate) fn grew(device: usize, bytes: usize) {
    let mut pool = pool(device);
    pool.used += bytes;
    pool.reserved += bytes;
}

/// Records that `ptr` (`bytes`, rounded) was freed on `stream`; `completed`
/// when nothing can still use it. `false` if it is cached already.
pub(crate) fn freed(
    device: usize,
    ptr: usize,
    bytes: usize,
    stream: usize,
    completed: bool,
) -> bool {
    let mut pool = pool(device);
    if pool.cached.iter().any(|c| c.ptr == ptr) {
        return false;
    }
    pool.used -= bytes;
    pool.cached.push(Cached {
        ptr,
        bytes,
        stream,
        completed,
    });
    true
}

/// Takes back a free that could not be queued: `ptr` is in use again.
pub(crate) fn unfree(device: usize, ptr: usize) {
    let mut pool = pool(device);
    if let Some(at) = pool.cached.iter().position(|c| c.ptr == ptr) {
        let block = pool.cached.remove(at);
        pool.used += block.bytes;
    }
}

/// Records that the stream that freed `ptr` has reached the free.
pub(crate) fn completed(device: usize, ptr: usize) {
    if let Some(c) = pool(device).cached.iter_mut().find(|c| c.ptr == ptr) {
        c.completed = true;
    }
}

/// Takes completed cached blocks out of the pool, oldest first, until it
/// reserves at most `keep` bytes; returns them, for the caller to give back.
pub(crate) fn trim(device: usize, keep: usize) -> Vec<usize> {
    let mut pool = pool(device);
    let mut released = Vec::new();
    let mut i = 0;
    while pool.reserved > keep && i < pool.cached.len() {
        if pool.cached[i].completed {
            let block = pool.cached.remove(i);
            pool.reserved -= block.bytes;
            released.push(block.ptr);
        } else {
            i += 1;
        }
    }
    released
}

/// The blocks to give back at a synchronisation: those above the threshold.
pub(crate) fn over_threshold(device: usize) -> Vec<usize> {
    let threshold = pool(device).threshold;
    trim(device, usize::try_from(threshold).unwrap_or(usize::MAX))
}

/// (used, reserved) bytes.
pub(crate) fn usage(device: usize) -> (u64, u64) {
    let pool = pool(device);
    (pool.used as u64, pool.reserved as u64)
}

pub(crate) fn threshold(device: usize) -> u64 {
    pool(device).threshold
}

pub(crate) fn set_threshold(device: usize, bytes: u64) {
    pool(device).threshold = bytes;
}
