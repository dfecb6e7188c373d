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
