//! Kernels that misuse the device API on purpose, each as a hostile reviewer
//! would, for the attack tests (`tests/device_attacks.rs`): every one must
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
    if t % 4 == 0 {
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
