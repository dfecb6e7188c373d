//! Kernels that fail, hang or spin on purpose: panics, out-of-bounds reads,
//! barriers and shuffles some threads never reach, threads that spin on
//! other threads or loop for ever, and stacks too small for a local array.
//! The runtime and the simulator must report each (naming the kernel, block
//! and thread) rather than crash, hang or return a wrong result.

use gpu_device::prelude::*;

/// Panics in every thread when `trigger` is 1; otherwise writes `out[i] = i`.
#[kernel]
pub fn panic_if(trigger: u32, mut out: DisjointSlice<u32>) {
    if trigger == 1 {
        panic!("panic_if was asked to panic");
    }
    let i = thread_index();
    out.set(i, i.get() as u32);
}

/// Reads `x[index]` with a bounds check: an index past the end panics.
#[kernel]
pub fn read_at(x: &[u32], index: usize, mut out: DisjointSlice<u32>) {
    out.set(thread_index(), x[index]);
}

/// Threads below `exit_below` return before the block's barrier: on a GPU
/// the block hangs; the simulator reports it. Never launched on a GPU.
#[kernel]
pub fn divergent_barrier(exit_below: u32, mut out: DisjointSlice<u32>) {
    if thread_idx().x < exit_below {
        return;
    }
    sync_threads();
    out.set(thread_index(), 1);
}

/// Threads below `exit_below` return before a full-warp shuffle: undefined
/// on a GPU; the simulator reports it. Never launched on a GPU.
#[kernel]
pub fn shuffle_after_exit(exit_below: u32, mut out: DisjointSlice<u32>) {
    if thread_idx().x < exit_below {
        return;
    }
    let v = gpu_device::warp::shfl_down_sync(gpu_device::warp::FULL_MASK, thread_idx().x, 1);
    out.set(thread_index(), v);
}

/// Panics in thread `thread` of block `block` only.
#[kernel]
pub fn panic_at(block: u32, thread: u32, mut out: DisjointSlice<u32>) {
    if block_idx().x == block && thread_idx().x == thread {
        panic!("thread {thread} of block {block} gave up");
    }
    out.set(thread_index(), 7);
}

/// Thread 0 of each block spins until thread `setter` of the block sets the
/// block's flag, `flags[block]`; then every thread writes 1. With `setter` past
/// the block, nobody sets the flag: on a GPU the block hangs; the simulator
/// reports it. Finishes on GPUs with independent thread scheduling (sm_70+).
#[kernel]
pub fn spin_on_flag(setter: u32, flags: &[DeviceAtomic<u32>], mut out: DisjointSlice<u32>) {
    let Some(flag) = flags.get(block_idx().x as usize) else {
        return;
    };
    if thread_idx().x == setter {
        flag.swap(1);
    }
    if thread_idx().x == 0 {
        while flag.load() == 0 {}
    }
    out.set(thread_index(), 1);
}

/// The threads of each block take turns in reverse order of `thread_idx().x`:
/// each spins until `turns[block]` counts the threads above it, writes the
/// turn it got, then passes the turn on. Thread 0, which the simulator
/// starts first, goes last.
#[kernel]
pub fn take_turns(turns: &[DeviceAtomic<u32>], mut out: DisjointSlice<u32>) {
    let Some(turn) = turns.get(block_idx().x as usize) else {
        return;
    };
    let mine = block_dim().x - 1 - thread_idx().x;
    while turn.load() != mine {}
    out.set(thread_index(), mine);
    turn.fetch_add(1);
}

/// Thread `looping` of each block runs `rounds` steps of a linear
/// congruential generator, with no device call (`u64::MAX` rounds: about
/// for ever); then every thread writes its generator's value, seeded with its
/// `thread_idx().x`.
#[kernel]
pub fn busy_loop(looping: u32, rounds: u64, mut out: DisjointSlice<u64>) {
    let mut x = thread_idx().x as u64;
    if thread_idx().x == looping {
        let mut i = 0;
        while i < rounds {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            i += 1;
        }
    }
    out.set(thread_index(), x);
}

/// Bytes of [`large_local_array`]'s array: more than the simulator's default
/// stack of 256 KiB per thread.
pub const LARGE_LOCAL_BYTES: usize = 320 * 1024;

/// Keeps a zeroed [`LARGE_LOCAL_BYTES`] array on each thread's stack, writes
/// 7 at index `write_at % len`, then `out[i]` is the byte at `read_at % len`.
/// Launched on a GPU only by `gpu_errors.rs`, which expects a refusal
/// naming its local memory where the device cannot set it aside.
#[kernel]
pub fn large_local_array(write_at: usize, read_at: usize, mut out: DisjointSlice<u32>) {
    let mut a = [0u8; LARGE_LOCAL_BYTES];
    let n = a.len();
    a[write_at % n] = 7;
    out.set(thread_index(), a[read_at % n] as u32);
}
