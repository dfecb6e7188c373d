//! Kernels that misuse the device API on purpose, each as a hostile reviewer
//! would, for the attack tests (`tests/forced_simulator/device_attacks.rs`): every one must
//! fail its launch with a report, never run with undefined behaviour or a
//! silently wrong result.

use gpu_device::prelude::*;
use gpu_device::warp::{ballot_sync, lane_id, shfl_down_sync, shfl_sync};

/// Which warp function [`warp_call_with_mask`] calls.
pub mod warp_call {
    /// `shfl_sync(mask, lane, 0)`.
    pub const SHUFFLE: u32 = 0;
    /// `shfl_down_sync(mask, lane, 1)`.
    pub const SHUFFLE_DOWN: u32 = 1;
    /// `ballot_sync(mask, true)`.
    pub const BALLOT: u32 = 2;
    /// `sync_warp(mask)`, then the lane.
    pub const SYNC_WARP: u32 = 3;
}

/// Every thread calls the warp function `call` (see [`warp_call`]) with the
/// same `mask`, and writes what it returns. With a mask that leaves some
/// calling lanes out, PTX leaves the call undefined.
#[kernel]
pub fn warp_call_with_mask(call: u32, mask: u32, mut out: DisjointSlice<u32>) {
    let i = thread_index();
    let lane = lane_id();
    let value = match call {
        warp_call::SHUFFLE => shfl_sync(mask, lane, 0),
        warp_call::SHUFFLE_DOWN => shfl_down_sync(mask, lane, 1),
        warp_call::BALLOT => ballot_sync(mask, true),
        _ => {
            gpu_device::sync::sync_warp(mask);
            lane
        }
    };
    out.set(i, value);
}

/// Each lane's values of the four shuffles of its lane number by
/// `lane_or_delta` over the full warp: `[down, up, xor, index]`. PTX uses the
/// low five bits of the lane or delta, so 33 shuffles as 1 and 32 as 0.
#[kernel]
pub fn shuffles_by(lane_or_delta: u32, mut out: DisjointSlice<[u32; 4]>) {
    use gpu_device::warp::{shfl_up_sync, shfl_xor_sync, FULL_MASK};
    let i = thread_index();
    let lane = lane_id();
    out.set(
        i,
        [
            shfl_down_sync(FULL_MASK, lane, lane_or_delta),
            shfl_up_sync(FULL_MASK, lane, lane_or_delta),
            shfl_xor_sync(FULL_MASK, lane, lane_or_delta),
            shfl_sync(FULL_MASK, lane, lane_or_delta),
        ],
    );
}

/// Adds 1 to every element this thread's witness owns in a matrix of four
/// rows per thread: were an element owned by two threads (or by none), it
/// would end at 2 (or 0).
#[kernel]
pub fn count_owners_rows4(mut out: DisjointSlice2d<u32, 4>) {
    let i = thread_index_2d();
    for j in 0..4 {
        if let Some(count) = out.get_mut_at(i, j) {
            *count += 1;
        }
    }
}

/// Adds 1 to the element this thread's witness owns in a 3-D grid.
#[kernel]
pub fn count_owners_3d(mut out: DisjointSlice3d<u32>) {
    if let Some(count) = out.get_mut(thread_index_3d()) {
        *count += 1;
    }
}

/// A struct whose layout differs between host and device: a `#[cfg]` gives
/// it a second field on the device only (4 bytes on the host, 8 on the GPU).
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct DeviceOnlyField {
    /// On both.
    pub a: u32,
    /// On the device only.
    #[cfg(target_arch = "nvptx64")]
    pub b: u32,
}

/// Takes a [`DeviceOnlyField`] by value: on a GPU the driver would read 8
/// bytes of the launcher's 4-byte value (and the kernel use the 4 beyond).
#[kernel]
pub fn layout_differs(value: DeviceOnlyField, mut out: DisjointSlice<u32>) {
    out.set(thread_index(), value.a);
}

/// Claims a tile, scans it (writing its first run of 4 per thread), then
/// claims another and scans that: a block that claims twice takes the
/// counter past the status words (a launch of `n` blocks and `n` words
/// fails, naming them). In blocks of a size that is not a multiple of 32,
/// the first claim fails.
#[kernel]
pub fn claim_twice(
    mut out: gpu_device::DisjointSlice<u32, gpu_device::ownership::ClaimedRuns<1, 1>>,
    counter: &[DeviceAtomic<u32>],
    status: &[DeviceAtomic<gpu_device::lookback::TileStatus>],
    block: Block,
) {
    use gpu_device::collective::Sum;
    use gpu_device::lookback::claim_tile;
    let claim = claim_tile(block, &counter[0], status);
    let (r, owner, scan) = claim.scan(1u32, 0, Sum);
    out.set_run(&owner, 0, [scan.value]);
    let claim = claim_tile(r.sync(), &counter[0], status);
    let (_r, owner, scan) = claim.scan(1u32, 0, Sum);
    out.set_run(&owner, 0, [scan.value]);
}

/// Only the threads of even rank claim a tile: a block collective left by
/// half the block (a hang on a GPU; the simulator reports it).
#[kernel]
pub fn claim_in_a_branch(
    mut out: gpu_device::DisjointSlice<u32, gpu_device::ownership::ClaimedRuns<1, 1>>,
    counter: &[DeviceAtomic<u32>],
    status: &[DeviceAtomic<gpu_device::lookback::TileStatus>],
    block: Block,
) {
    use gpu_device::collective::Sum;
    use gpu_device::lookback::claim_tile;
    if block.thread_rank() % 2 == 0 {
        let claim = claim_tile(block, &counter[0], status);
        let (_r, owner, scan) = claim.scan(1u32, 0, Sum);
        out.set_run(&owner, 0, [scan.value]);
    }
}

/// Host-only hiding places for per-thread values: `thread_local!`s, present
/// only in the host build. The simulator runs a block's threads (and the
/// blocks and launches that follow) on shared OS threads, so a value put
/// here by one simulated thread is there for the next: the way to
/// share one witness among 64 threads. On a GPU nothing like it exists.
#[cfg(not(target_arch = "nvptx64"))]
pub mod stash {
    use gpu_device::prelude::*;
    use gpu_device::shared::{Shared, Writing};
    use std::cell::{Cell, RefCell};

    std::thread_local! {
        /// A one-dimensional witness.
        pub static INDEX: Cell<Option<ThreadIndex>> = const { Cell::new(None) };
        /// A two-dimensional witness.
        pub static INDEX_2D: Cell<Option<ThreadIndex2d>> = const { Cell::new(None) };
        /// A three-dimensional witness.
        pub static INDEX_3D: Cell<Option<ThreadIndex3d>> = const { Cell::new(None) };
        /// A phase token.
        pub static TOKEN: Cell<Option<Block<Writing>>> = const { Cell::new(None) };
        /// A kernel body's `thread_index` binding (a closure holding its
        /// entry point's shape token).
        pub static WITNESS_MAKER: RefCell<Option<Box<dyn Fn() -> ThreadIndex>>> = const { RefCell::new(None) };
        /// A shared array's handle.
        pub static TILE: Cell<Option<Shared<u32, 64>>> = const { Cell::new(None) };
        /// A block leader's witness.
        pub static LEADER: Cell<Option<gpu_device::BlockLeader>> = const { Cell::new(None) };
        /// A grid-stride token.
        pub static ITEMS: Cell<Option<gpu_device::ownership::Items<gpu_device::ownership::GridStride>>> = const { Cell::new(None) };
    }
}

/// The program: thread 0 of the block puts its witness in a host
/// `thread_local!` and every other thread takes it, so all write element 0
/// (on a GPU each writes its own). Launch with one block.
#[kernel]
pub fn witness_shared_by_threads(mut out: DisjointSlice<u32>) {
    let mine = thread_index();
    #[cfg(not(target_arch = "nvptx64"))]
    let i = stash::INDEX.with(|s| {
        if mine.get() == 0 {
            s.set(Some(mine));
        }
        s.get().unwrap_or(mine)
    });
    #[cfg(target_arch = "nvptx64")]
    let i = mine;
    out.set(i, mine.get() as u32 + 1);
}

/// Thread (0, 0) of each block writes through the witness that the block
/// before it on the same OS thread left in a host `thread_local!`, and
/// leaves its own: blocks write each other's elements.
#[kernel]
pub fn witness_shared_by_blocks(mut out: DisjointSlice2d<u32>) {
    let mine = thread_index_2d();
    let i = mine;
    #[cfg(not(target_arch = "nvptx64"))]
    let i = match thread_rank() {
        0 => stash::INDEX_2D
            .with(|s| s.replace(Some(mine)))
            .unwrap_or(mine),
        _ => i,
    };
    out.set(i, 1);
}

/// Thread (0, 0, 0) writes through the witness that the launch before it
/// (on the same stream) left in a host `thread_local!`, and leaves its own.
#[kernel]
pub fn witness_kept_for_the_next_launch(mut out: DisjointSlice3d<u32>) {
    let mine = thread_index_3d();
    let i = mine;
    #[cfg(not(target_arch = "nvptx64"))]
    let i = match thread_rank() {
        0 => stash::INDEX_3D
            .with(|s| s.replace(Some(mine)))
            .unwrap_or(mine),
        _ => i,
    };
    out.set(i, 1);
}

/// Thread 0 writes its own slot, then leaves its phase token in a host
/// `thread_local!` and returns; the next thread takes it and writes thread
/// 0's slot with it, beside its own. Launch with one block and no barrier.
#[kernel]
pub fn phase_token_taken_by_another_thread(mut out: DisjointSlice<u32>, block: Block) {
    let tile = shared_array!(u32; 64);
    let mut w = block;
    tile.set_own(&mut w, 0, 1);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if w.thread_rank() == 0 {
            stash::TOKEN.with(|s| s.set(Some(w)));
            return;
        }
        if let Some(mut stolen) = stash::TOKEN.with(|s| s.take()) {
            tile.set_own(&mut stolen, 0, 2);
        }
    }
    out.set(thread_index(), 0);
}

/// Keeps the body's `thread_index` (the one-dimensional entry point's
/// binding, which computes the witness without a test) in a host
/// `thread_local!` for a later kernel.
#[kernel]
pub fn keep_the_witness_maker(mut out: DisjointSlice<u32>) {
    #[cfg(not(target_arch = "nvptx64"))]
    stash::WITNESS_MAKER.with(|m| *m.borrow_mut() = Some(Box::new(thread_index)));
    out.set(thread_index(), 1);
}

/// Calls the `thread_index` that [`keep_the_witness_maker`] kept, in a
/// launch of any shape: in a two-dimensional one, `grid_1d()` without a
/// test, the same value for every row of threads.
#[kernel]
pub fn use_a_kept_witness_maker(mut out: DisjointSlice<u32>) {
    #[cfg(not(target_arch = "nvptx64"))]
    let i = stash::WITNESS_MAKER
        .with(|m| m.borrow().as_ref().map(|make| make()))
        .unwrap_or_else(thread_index);
    #[cfg(target_arch = "nvptx64")]
    let i = thread_index();
    if let Some(count) = out.get_mut(i) {
        *count += 1;
    }
}

/// Every thread uses the shared array handle that the first block run on
/// its OS thread left in a host `thread_local!` (an earlier block's), fills
/// its slot with the block's index, and sums the block's slots: the handle
/// reaches the running block's array, as a GPU's addresses do, never memory
/// the simulator gave back. Launch with 64 threads per block.
#[kernel]
pub fn shared_handle_kept_by_a_later_block(mut sums: DisjointSlice<u32>, block: Block) {
    let fresh = shared_array!(u32; 64);
    #[cfg(target_arch = "nvptx64")]
    let tile = fresh;
    #[cfg(not(target_arch = "nvptx64"))]
    let tile = stash::TILE.with(|s| {
        if s.get().is_none() {
            s.set(Some(fresh));
        }
        s.get().unwrap_or(fresh)
    });
    let mut w = block;
    tile.fill(&mut w, |_| block_idx().x);
    let r = w.sync();
    let total: u32 = tile.as_array(&r).iter().sum();
    sums.set(thread_index(), total);
}

/// Leaders found in divergent code: odd ranks take one branch (where lane
/// 31 leads its warp, then they return), even ranks another (where rank 0
/// leads its block), and the remaining lanes look for lane 0's leader in a
/// loop whose trip count differs per lane. Each leader adds 1 to its
/// element: every element must end at 1, never 2.
#[kernel]
pub fn leaders_in_divergent_code(
    mut blocks: DisjointSlice<u32, gpu_device::ownership::ByBlock>,
    mut lane_31: DisjointSlice<u32, gpu_device::ownership::ByWarp<31>>,
    mut lane_0: DisjointSlice<u32, gpu_device::ownership::ByWarp<0>>,
) {
    let t = thread_rank();
    if t % 2 == 1 {
        if let Some(leader) = gpu_device::warp_leader::<31>() {
            if let Some(c) = lane_31.get_mut(leader) {
                *c += 1;
            }
        }
        return;
    }
    if t.is_multiple_of(4) {
        if let Some(leader) = gpu_device::block_leader() {
            if let Some(c) = blocks.get_mut(leader) {
                *c += 1;
            }
        }
    }
    for k in 0..(t % 7) + 1 {
        if k == t % 7 {
            if let Some(leader) = gpu_device::warp_leader::<0>() {
                if let Some(c) = lane_0.get_mut(leader) {
                    *c += 1;
                }
            }
        }
    }
}

/// A halo span of 132 slots (`Halo<2>`, for blocks of 128) in a kernel
/// that declares no block: in a larger block the right halo's slots would
/// be past the end.
#[kernel]
pub fn halo_in_any_block(x: &[f32], mut out: DisjointSlice<f32>, block: Block) {
    let span = shared_array!(f32; 132, map = gpu_device::ownership::Halo<2>);
    let i = thread_index();
    let mut w = block;
    span.fill(&mut w, |s| x.get(s).copied().unwrap_or(0.0));
    let r = w.sync();
    out.set(i, span.get(&r, thread_rank() % 132));
}

/// A shared array in register tiles made for 256 threads, in a kernel that
/// declares no block: in another block the tiles would overlap or leave
/// gaps, so writing one fails.
#[kernel]
pub fn shared_tiles_in_any_block(mut out: DisjointSlice<f32>, block: Block) {
    use gpu_device::ownership::{Axis, Tiles};
    let tile = shared_array!(f32; 16, 64, map = Tiles<Axis<16>, Axis<16, 4>>);
    let i = thread_index();
    let mut w = block;
    tile.set_run(&mut w, 0, 0, [1.0; 4]);
    let r = w.sync();
    out.set(i, tile.get(&r, 0, thread_rank() % 64));
}

/// A per-warp shared array of 4 slots in blocks of more than 4 warps: the
/// fifth warp's leader has no slot.
#[kernel]
pub fn warp_slots_too_few(mut out: DisjointSlice<u32>, block: Block) {
    let slots = shared_array!(u32; 4, map = gpu_device::ownership::ByWarp<0>);
    let i = thread_index();
    let mut w = block;
    if let Some(leader) = gpu_device::warp_leader::<0>() {
        slots.set_by(&mut w, leader, leader.warp_in_block() as u32);
    }
    let r = w.sync();
    out.set(i, slots.get(&r, (thread_rank() / 32) % 4));
}

/// The leader's witness smuggled out: rank 0 of block 0 stashes its
/// `BlockLeader` in a host `thread_local!`, and every other thread of the
/// launch takes it and writes block 0's element (on a GPU only rank 0 of
/// each block leads). Every thread adds its rank + 1.
#[kernel]
pub fn leader_shared_by_threads(mut sums: DisjointSlice<u32, gpu_device::ownership::ByBlock>) {
    let mine = gpu_device::block_leader();
    #[cfg(not(target_arch = "nvptx64"))]
    let leader = stash::LEADER.with(|s| {
        if mine.is_some() && gpu_device::leader::block_rank() == 0 {
            s.set(mine);
        }
        s.get()
    });
    #[cfg(target_arch = "nvptx64")]
    let leader = mine;
    if let Some(leader) = leader {
        if let Some(c) = sums.get_mut(leader) {
            *c += thread_rank() as u32 + 1;
        }
    }
}

/// A grid-stride token smuggled out: thread 0 stashes its items, and every
/// other thread writes thread 0's first element with them.
#[kernel]
pub fn items_shared_by_threads(mut out: DisjointSlice<u32, gpu_device::ownership::GridStride>) {
    use gpu_device::ownership::{GridStride, Items};
    let mine = Items::<GridStride>::mine();
    #[cfg(not(target_arch = "nvptx64"))]
    let items = stash::ITEMS.with(|s| {
        if mine.first() == 0 {
            s.set(Some(mine));
        }
        s.get().unwrap_or(mine)
    });
    #[cfg(target_arch = "nvptx64")]
    let items = mine;
    if let Some(i) = items.get(0) {
        out.set(i, thread_rank() as u32 + 1);
    }
}
