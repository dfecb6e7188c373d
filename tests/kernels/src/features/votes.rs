//! Block votes (`sync_threads_count`, `_and`, `_or`), warp matching
//! (`match_any_sync`, `match_all_sync`), `activemask` and `nanosleep`.

use gpu_device::prelude::*;
use gpu_device::warp::{activemask, match_all_sync, match_any_sync, FULL_MASK};

/// Each thread votes `x[i] % 3 == 0` three ways, then whether it is even,
/// from one of two branches (a vote in each branch pairs up):
/// `out[i] = [count, and, or, even count]`. Threads past `x`'s end vote false.
#[kernel]
pub fn block_votes(x: &[u32], mut out: DisjointSlice<[u32; 4]>) {
    let i = thread_index();
    let p = x.get(i.get()).is_some_and(|v| v % 3 == 0);
    let count = sync_threads_count(p);
    let all = sync_threads_and(p);
    let any = sync_threads_or(p);
    let even = x.get(i.get()).is_some_and(|v| v % 2 == 0);
    let evens = if thread_idx().x.is_multiple_of(2) {
        // Another instruction first, so the compiler keeps the two votes in
        // their branches instead of hoisting one above the `if`.
        gpu_device::sync::thread_fence_block();
        sync_threads_count(even)
    } else {
        sync_threads_count(even)
    };
    out.set(i, [count, all as u32, any as u32, evens]);
}

/// Half of the block votes while the other half waits at `sync_threads()`:
/// different barriers, which a GPU leaves hanging.
#[kernel]
pub fn vote_beside_sync_threads(mut out: DisjointSlice<u32>) {
    let i = thread_index();
    let n = if thread_idx().x.is_multiple_of(2) {
        sync_threads_count(true)
    } else {
        sync_threads();
        0
    };
    out.set(i, n);
}

/// Each lane matches its value among the warp's:
/// `out[i] = [match_any(low 32 bits), match_any(all 64 bits), match_all.0,
/// match_all.1, activemask]`.
#[kernel]
pub fn warp_matching(values: &[u64], mut out: DisjointSlice<[u32; 5]>) {
    let i = thread_index();
    let v = values.get(i.get()).copied().unwrap_or(u64::MAX);
    let any32 = match_any_sync(FULL_MASK, v as u32);
    let any64 = match_any_sync(FULL_MASK, v);
    let (all, same) = match_all_sync(FULL_MASK, v);
    let active = activemask();
    out.set(i, [any32, any64, all, same as u32, active]);
}

/// Threads at or past `n` return first; the others write the mask of the
/// lanes active with them, then the lanes of that mask whose `x` is odd
/// (`match_any_sync` over the active lanes only).
#[kernel]
pub fn active_after_return(n: u32, x: &[u32], mut out: DisjointSlice<[u32; 2]>) {
    let i = thread_index();
    if i.get() >= n as usize {
        return;
    }
    let mask = activemask();
    let odd = x.get(i.get()).is_some_and(|v| v % 2 == 1);
    let odd_lanes = match_any_sync(mask, odd as u32);
    out.set(i, [mask, if odd { odd_lanes } else { 0 }]);
}

/// Thread 0 of each block sets a shared flag after `delay` sleeps; the
/// others sleep in a loop until they see it, then write it.
#[kernel]
pub fn sleep_until_flag(delay: u32, mut out: DisjointSlice<u32>, block: Block) {
    use gpu_device::sync::nanosleep;
    let i = thread_index();
    let flag = shared_array!(DeviceAtomic<u32>; 1);
    let mut w = block;
    flag.fill(&mut w, |_| DeviceAtomic::new(0));
    let r = w.sync();
    let cell = flag.get_ref(&r, 0);
    if thread_idx().x == 0 {
        for _ in 0..delay {
            nanosleep(100);
        }
        cell.swap(7);
    } else {
        while cell.load() == 0 {
            nanosleep(100);
        }
    }
    out.set(i, cell.load());
}
