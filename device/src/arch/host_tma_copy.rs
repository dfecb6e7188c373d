//! The simulator's bulk tensor copies: a box of a tensor map (the
//! simulator's encoding, `tma::simulated_map`) copied between global memory
//! and a shared tile at once, as the GPU's copy engine does it: clipped at
//! the tensor's edges (zeros land in the tile past them), swizzled; a load's
//! bytes (the whole box's) complete on its barrier.

use super::complete_tx;
use crate::tma::simulated_map::SimulatedMap;

/// The map at `map`, checked against the tile's rank, box (innermost
/// first), swizzle and bytes: a report naming both otherwise.
///
/// # Safety
/// `map` is the address of 16 readable words.
#[track_caller]
unsafe fn checked_map(
    map: *const u64,
    tile_bytes: usize,
    (rank, boxes, swizzle): (usize, [u32; 5], u32),
    what: &str,
) -> SimulatedMap {
    // SAFETY: the caller's contract.
    let words = unsafe { map.cast::<[u64; 16]>().read() };
    let Some(m) = SimulatedMap::decode(&words) else {
        panic!("{what} read a tensor map the simulator did not encode");
    };
    let elements: usize = boxes[..rank].iter().map(|&b| b as usize).product();
    if m.rank as usize != rank
        || m.boxes[..rank] != boxes[..rank]
        || m.swizzle != swizzle
        || elements * m.element_bytes as usize != tile_bytes
    {
        panic!(
            "{what}: the tile is a rank-{rank} box of {:?} elements (innermost first) of {tile_bytes} bytes with swizzle mode {swizzle}, the map a rank-{} map with a box of {:?} elements of {} bytes and swizzle mode {}",
            &boxes[..rank],
            m.rank,
            &m.boxes[..(m.rank as usize).min(5)],
            m.element_bytes,
            m.swizzle
        );
    }
    m
}

/// Calls `f(tile_offset, global_address)` for each element of the box of
/// `m` at `coords` (innermost first): the global address `None` past the
/// tensor's edges; the tile offset swizzled.
fn for_each_element(m: &SimulatedMap, coords: [i32; 5], mut f: impl FnMut(usize, Option<u64>)) {
    let rank = m.rank as usize;
    let element = m.element_bytes as usize;
    let count: usize = m.boxes[..rank].iter().map(|&b| b as usize).product();
    for linear in 0..count {
        let mut rest = linear;
        let mut address = m.address;
        let mut inside = true;
        for (d, &coord) in coords.iter().enumerate().take(rank) {
            let extent = m.boxes[d] as usize;
            let g = i64::from(coord) + (rest % extent) as i64;
            rest /= extent;
            if (0..m.dims[d] as i64).contains(&g) {
                address += g as u64 * m.strides[d];
            } else {
                inside = false;
            }
        }
        let to = crate::tma::swizzle(m.swizzle, linear * element);
        f(to, inside.then_some(address));
    }
}

/// The simulated `cp.async.bulk.tensor.{rank}d` load: the box of `map` at
/// `coords` (innermost first) lands in `tile` at once, clipped, zero-filled
/// and swizzled, and its bytes (the whole box's) complete on the barrier. A
/// map that is not the simulator's encoding of a map of this rank, box and
/// swizzle is a report.
///
/// # Safety
/// `tile` is `tile_bytes` writable bytes, rounded up to whole 1024-byte
/// blocks, of shared memory no thread reads meanwhile; `map` the address of
/// 16 readable words; the map, if the simulator's, names memory of a live
/// buffer (checked when it was made); `barrier` as `arrive`.
#[track_caller]
pub(crate) unsafe fn copy_nd(
    tile: *mut u8,
    tile_bytes: usize,
    map: *const u64,
    shape: (usize, [u32; 5], u32),
    barrier: *mut u64,
    index: usize,
    coords: [i32; 5],
) {
    let what = format!("a TMA copy into the tile of mbarrier {index}");
    // SAFETY: the caller's contract.
    let m = unsafe { checked_map(map, tile_bytes, shape, &what) };
    let element = m.element_bytes as usize;
    for_each_element(&m, coords, |to, from| {
        // SAFETY: `to + element` is inside the tile's blocks (the swizzle
        // stays within 128 bytes); the source is an element the map names,
        // inside its buffer.
        unsafe {
            let dst = tile.add(to);
            match from {
                Some(from) => core::ptr::copy_nonoverlapping(from as *const u8, dst, element),
                None => core::ptr::write_bytes(dst, 0, element),
            }
        }
    });
    // SAFETY: the caller's contract.
    unsafe { complete_tx(barrier, index, tile_bytes as u32) };
}

/// The simulated multicast load (`.multicast::cluster`): [`copy_nd`] into
/// the tile and onto the barrier at the places of `tile` and `barrier` in
/// the shared memory of every block of the cluster whose rank's bit is set
/// in `mask` (the executor maps them, as `mapa`).
///
/// # Safety
/// As [`copy_nd`], in every block of `mask`.
#[allow(clippy::too_many_arguments)]
#[track_caller]
pub(crate) unsafe fn copy_nd_multicast(
    tile: *mut u8,
    tile_bytes: usize,
    map: *const u64,
    shape: (usize, [u32; 5], u32),
    barrier: *mut u64,
    index: usize,
    coords: [i32; 5],
    mask: u16,
) {
    for rank in 0..16 {
        if mask & (1 << rank) == 0 {
            continue;
        }
        // SAFETY: the caller's contract: both are in this block's shared
        // memory, and block `rank` is in the cluster.
        let (their_tile, their_barrier) = unsafe {
            (
                crate::arch::cluster::map_shared_rank(tile, rank).cast_mut(),
                crate::arch::cluster::map_shared_rank(barrier.cast::<u8>(), rank)
                    .cast::<u64>()
                    .cast_mut(),
            )
        };
        // SAFETY: the caller's contract, for block `rank`.
        unsafe {
            copy_nd(
                their_tile,
                tile_bytes,
                map,
                shape,
                their_barrier,
                index,
                coords,
            )
        };
    }
}

/// The simulated `cp.async.bulk.tensor.2d` load (the ring's): [`copy_nd`]
/// of a 2-D box of `boxes` (innermost first) at (`x`, `y`).
///
/// # Safety
/// As [`copy_nd`].
#[allow(clippy::too_many_arguments)]
#[track_caller]
pub(crate) unsafe fn copy_2d(
    tile: *mut u8,
    tile_bytes: usize,
    map: *const u64,
    boxes: [u32; 2],
    swizzle: u32,
    barrier: *mut u64,
    index: usize,
    x: i32,
    y: i32,
) {
    let shape = (2, [boxes[0], boxes[1], 1, 1, 1], swizzle);
    // SAFETY: the caller's contract.
    unsafe {
        copy_nd(
            tile,
            tile_bytes,
            map,
            shape,
            barrier,
            index,
            [x, y, 0, 0, 0],
        )
    };
}

/// The simulated `cp.async.bulk.tensor.{rank}d` store: the elements of
/// `tile` whose coordinates in the box of `map` at `coords` (innermost
/// first) are inside the tensor written to it at once (the rest not
/// written: the GPU clips a store at the edges); a map that is not the
/// simulator's encoding of a map of this rank, box and swizzle is a
/// report.
///
/// # Safety
/// `tile` is `tile_bytes` readable bytes, rounded up to whole 1024-byte
/// blocks, of shared memory no thread writes meanwhile; `map` the address
/// of 16 readable words; the map, if the simulator's, names memory of a
/// live buffer (checked when it was made) that nothing else accesses in
/// the box meanwhile.
#[track_caller]
pub(crate) unsafe fn store_nd(
    tile: *const u8,
    tile_bytes: usize,
    map: *const u64,
    shape: (usize, [u32; 5], u32),
    coords: [i32; 5],
) {
    // SAFETY: the caller's contract.
    let m = unsafe { checked_map(map, tile_bytes, shape, "a TMA store") };
    let element = m.element_bytes as usize;
    for_each_element(&m, coords, |from, to| {
        if let Some(to) = to {
            // SAFETY: `from + element` is inside the tile's blocks; `to` an
            // element the map names, inside its buffer.
            unsafe { core::ptr::copy_nonoverlapping(tile.add(from), to as *mut u8, element) };
        }
    });
}

/// The simulator's stores complete when issued: nothing to wait for.
pub(crate) fn bulk_commit_group() {}

/// As [`bulk_commit_group`].
pub(crate) fn bulk_wait_group_read() {}

/// As [`bulk_commit_group`].
pub(crate) fn bulk_wait_group() {}
