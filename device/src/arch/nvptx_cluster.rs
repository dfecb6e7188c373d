//! Thread-block clusters (sm_90 and later): the cluster's special registers,
//! the cluster barrier and the mapping of a shared address to a peer
//! block's (`mapa`), compiled only into PTX of sm_90 and later.

use core::arch::asm;

/// Reads a 32-bit special register.
macro_rules! special {
    ($reg:literal) => {{
        let v: u32;
        // SAFETY: reads a special register of the cluster, defined in every
        // kernel on sm_90 (1 and 0 outside a cluster launch); no memory.
        unsafe {
            asm!(concat!("mov.u32 {v}, ", $reg, ";"), v = out(reg32) v,
                 options(nostack, nomem, pure))
        };
        v
    }};
}

/// `%cluster_ctarank`: the block's rank in its cluster.
#[inline(always)]
pub(crate) fn block_rank() -> u32 {
    special!("%cluster_ctarank")
}

/// `%cluster_nctarank`: the blocks of the cluster.
#[inline(always)]
pub(crate) fn size() -> u32 {
    special!("%cluster_nctarank")
}

/// `%cluster_ctaid`: the block's index in its cluster.
#[inline(always)]
pub(crate) fn block_index() -> [u32; 3] {
    [
        special!("%cluster_ctaid.x"),
        special!("%cluster_ctaid.y"),
        special!("%cluster_ctaid.z"),
    ]
}

/// `%cluster_nctaid`: the cluster's shape.
#[inline(always)]
pub(crate) fn dim() -> [u32; 3] {
    [
        special!("%cluster_nctaid.x"),
        special!("%cluster_nctaid.y"),
        special!("%cluster_nctaid.z"),
    ]
}

/// `%clusterid`: the cluster's index in the grid of clusters.
#[inline(always)]
pub(crate) fn cluster_index() -> [u32; 3] {
    [
        special!("%clusterid.x"),
        special!("%clusterid.y"),
        special!("%clusterid.z"),
    ]
}

/// `%nclusterid`: the grid's shape in clusters.
#[inline(always)]
pub(crate) fn clusters() -> [u32; 3] {
    [
        special!("%nclusterid.x"),
        special!("%nclusterid.y"),
        special!("%nclusterid.z"),
    ]
}

/// Waits until every thread of every block of the cluster has arrived:
/// `barrier.cluster.arrive` (release semantics by default) then
/// `barrier.cluster.wait` (acquire), not `.aligned`: safe code may reach
/// them from divergent branches of a warp. The writes to shared memory (any block's)
/// and global memory made before are visible to every thread of the
/// cluster after.
#[inline(always)]
pub(crate) fn sync() {
    // SAFETY: a barrier, defined in divergent code (the forms without
    // `.aligned`); a thread of the cluster that never arrives leaves the
    // others waiting (a hang, never a race: `Cluster`'s pairs); the asm is
    // a memory clobber (no `nomem`), so the compiler keeps
    // memory accesses on their side of it.
    unsafe {
        asm!(
            "barrier.cluster.arrive;",
            "barrier.cluster.wait;",
            options(nostack)
        )
    };
}

/// `mapa`: the generic address, in block `rank`'s shared memory, of what
/// `address` (a generic address in this block's shared memory) is in this
/// block's.
///
/// # Safety
/// `address` is in this block's shared memory and `rank` is below the
/// cluster's size.
#[inline(always)]
pub(crate) unsafe fn map_shared_rank(address: *const u8, rank: u32) -> *const u8 {
    let mapped: u64;
    // SAFETY: the caller's contract; an address computation, no memory.
    unsafe {
        asm!("mapa.u64 {d}, {a}, {r};", d = out(reg64) mapped, a = in(reg64) address as u64,
             r = in(reg32) rank, options(nostack, nomem, pure))
    };
    mapped as *const u8
}

/// A number naming the shared array `address` (a generic address in this
/// block's shared memory) lies in, and the byte: its distance from
/// `anchor`, another address in this block's shared memory, the same in
/// every block. (Neither the generic address nor the `.shared` one is: on
/// an H200 `cvta.to.shared` of the same array gave 0x400 in rank 0 and
/// 0x1000400 in rank 1 of a cluster.)
#[inline(always)]
pub(crate) fn shared_identity(address: *const u8, anchor: *const u8) -> u64 {
    (address as u64).wrapping_sub(anchor as u64)
}
