//! `mbarrier` (sm_90's transaction-count forms) and the async-proxy fences,
//! compiled only into PTX of sm_90 and later.
//!
//! Each barrier is an 8-byte word of shared memory, named by its 32-bit
//! shared-window address (`cvta.to.shared`), as CUTLASS names it.

use super::shared_address;
use core::arch::asm;

/// `mbarrier.init`: phase 0, expecting `count` arrivals.
///
/// # Safety
/// `barrier` is an 8-byte aligned word of this block's shared memory that
/// no other thread accesses until a block barrier after this call.
#[inline(always)]
pub(crate) unsafe fn init(barrier: *mut u64, count: u32) {
    // SAFETY: the caller's contract; `count` is in PTX's range (the caller
    // checks `1..=2^20 - 1`).
    unsafe {
        asm!(
            "mbarrier.init.shared::cta.b64 [{a}], {c};",
            a = in(reg32) shared_address(barrier), c = in(reg32) count,
            options(nostack),
        )
    };
}

/// Makes the barriers this thread initialised visible to the async proxy
/// (the bulk copies that complete on them) and to the other threads,
/// before the block barrier that publishes them.
#[inline(always)]
pub(crate) fn fence_init() {
    // SAFETY: fences; no operands.
    unsafe {
        asm!(
            "fence.mbarrier_init.release.cluster;",
            "fence.proxy.async.shared::cta;",
            options(nostack)
        )
    };
}

/// `fence.proxy.async.shared::cta`: this thread's generic-proxy accesses of
/// shared memory ordered with later async-proxy ones (a bulk copy into or
/// out of memory it wrote or read).
#[inline(always)]
pub(crate) fn fence_proxy_async() {
    // SAFETY: a fence; no operands.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}

/// `fence.proxy.tensormap::generic.acquire.sys` over the 128 bytes of the
/// tensor map at `map`: this thread's later bulk copies through it read
/// what the generic proxy (the host's copy) wrote there, not a descriptor
/// the copy engine cached for that address earlier (ptxas emits
/// `UTMACCTL.IV`, an invalidation of that entry). The CUDA programming
/// guide asks for it before a map in global memory that a host copy wrote
/// is used.
///
/// # Safety
/// `map` is the generic address of 128 bytes of global memory.
#[inline(always)]
pub(crate) unsafe fn fence_tensormap_acquire(map: *const u64) {
    // SAFETY: the caller's contract; a fence, it writes nothing.
    unsafe {
        asm!(
            "fence.proxy.tensormap::generic.acquire.sys [{m}], 128;",
            m = in(reg64) map,
            options(nostack),
        )
    };
}

/// One arrival on the barrier's current phase.
///
/// # Safety
/// `barrier` is an initialised barrier of this block's shared memory.
#[inline(always)]
pub(crate) unsafe fn arrive(barrier: *mut u64) {
    let _state: u64;
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "mbarrier.arrive.shared::cta.b64 {s}, [{a}];",
            s = out(reg64) _state, a = in(reg32) shared_address(barrier),
            options(nostack),
        )
    };
}

/// One arrival on the barrier's current phase, which then also waits for
/// `bytes` more bytes of transactions (`arrive.expect_tx`).
///
/// # Safety
/// As [`arrive`]; `bytes` below 2^20.
#[inline(always)]
pub(crate) unsafe fn arrive_expect_tx(barrier: *mut u64, bytes: u32) {
    let _state: u64;
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 {s}, [{a}], {b};",
            s = out(reg64) _state, a = in(reg32) shared_address(barrier), b = in(reg32) bytes,
            options(nostack),
        )
    };
}

/// Waits until the phase of parity `parity` has completed
/// (`try_wait.parity` in a loop: each try suspends the thread for a
/// time the hardware picks).
///
/// # Safety
/// As [`arrive`].
#[inline(always)]
pub(crate) unsafe fn wait_parity(barrier: *mut u64, parity: u32) {
    let address = shared_address(barrier);
    loop {
        let done: u32;
        // SAFETY: the caller's contract; a memory clobber, so that reads of
        // what the phase guards stay after it.
        unsafe {
            asm!(
                "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {q}; selp.u32 {d}, 1, 0, p; }}",
                d = out(reg32) done, a = in(reg32) address, q = in(reg32) parity,
                options(nostack),
            )
        };
        if done != 0 {
            return;
        }
    }
}

/// `cp.async.bulk.tensor.2d`: the box of `map` at (`x`, `y`) (innermost
/// first) into `tile`, completing its bytes on `barrier`. A CTA's own
/// shared address is a valid `shared::cluster` address (a block outside a
/// cluster is a cluster of one).
///
/// # Safety
/// `tile` is shared memory of the box's bytes, aligned for the map's
/// swizzle (128 bytes at least), that no thread accesses until `barrier`'s
/// phase completes; `barrier` is an initialised barrier of this block,
/// armed for the box's bytes; `map` the generic address of a live encoded
/// map in global memory, 64-byte aligned.
#[inline(always)]
pub(crate) unsafe fn copy_2d(tile: *mut u8, map: *const u64, barrier: *mut u64, x: i32, y: i32) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{t}], [{m}, {{{x}, {y}}}], [{b}];",
            t = in(reg32) shared_address(tile), m = in(reg64) map, x = in(reg32) x, y = in(reg32) y,
            b = in(reg32) shared_address(barrier),
            options(nostack),
        )
    };
}

/// `cp.async.bulk.tensor.{rank}d`, tile mode: the box of `map` at `coords`
/// (innermost first, those past `rank` unused) into `tile`, completing its
/// bytes on `barrier`. `rank` is a constant where it is inlined (a box
/// type's), so the `match` folds to one instruction.
///
/// # Safety
/// As [`copy_2d`]; `map`'s rank is `rank`, in `1..=5`.
#[inline(always)]
pub(crate) unsafe fn copy_nd(
    tile: *mut u8,
    map: *const u64,
    barrier: *mut u64,
    rank: usize,
    coords: [i32; 5],
) {
    let (t, b) = (shared_address(tile), shared_address(barrier));
    let [c0, c1, c2, c3, c4] = coords;
    // SAFETY: the caller's contract.
    unsafe {
        match rank {
            1 => asm!(
                "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{t}], [{m}, {{{c0}}}], [{b}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, b = in(reg32) b,
                options(nostack),
            ),
            2 => copy_2d(tile, map, barrier, c0, c1),
            3 => asm!(
                "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{t}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, b = in(reg32) b,
                options(nostack),
            ),
            4 => asm!(
                "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{t}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3, b = in(reg32) b,
                options(nostack),
            ),
            _ => asm!(
                "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{t}], [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{b}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3, c4 = in(reg32) c4, b = in(reg32) b,
                options(nostack),
            ),
        }
    }
}

/// `cp.async.bulk.tensor.{rank}d ... .multicast::cluster`, tile mode: the
/// box of `map` at `coords` (innermost first) into `tile` and its bytes
/// onto `barrier`, at the same offsets of the shared memory of every block
/// of the cluster whose rank's bit is set in `mask`.
///
/// # Safety
/// As [`copy_nd`], in every block of `mask`: its shared memory at `tile`'s
/// offset is the box's bytes that no thread of it accesses until its
/// barrier at `barrier`'s offset, initialised and armed for the box's
/// bytes, completes the phase; every block of `mask` is in the cluster and
/// does not exit before then.
#[inline(always)]
pub(crate) unsafe fn copy_nd_multicast(
    tile: *mut u8,
    map: *const u64,
    barrier: *mut u64,
    rank: usize,
    coords: [i32; 5],
    mask: u16,
) {
    let (t, b) = (shared_address(tile), shared_address(barrier));
    let [c0, c1, c2, c3, c4] = coords;
    // SAFETY: the caller's contract.
    unsafe {
        match rank {
            1 => asm!(
                "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{t}], [{m}, {{{c0}}}], [{b}], {k};",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, b = in(reg32) b,
                k = in(reg16) mask,
                options(nostack),
            ),
            2 => asm!(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{t}], [{m}, {{{c0}, {c1}}}], [{b}], {k};",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                b = in(reg32) b, k = in(reg16) mask,
                options(nostack),
            ),
            3 => asm!(
                "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{t}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}], {k};",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, b = in(reg32) b, k = in(reg16) mask,
                options(nostack),
            ),
            4 => asm!(
                "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{t}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}], {k};",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3, b = in(reg32) b, k = in(reg16) mask,
                options(nostack),
            ),
            _ => asm!(
                "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{t}], [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{b}], {k};",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3, c4 = in(reg32) c4, b = in(reg32) b,
                k = in(reg16) mask,
                options(nostack),
            ),
        }
    }
}

/// One arrival, with release semantics at cluster scope, on the barrier of
/// block `rank` of the cluster at the offset of `barrier` in this block
/// (`mapa` then `mbarrier.arrive.release.cluster.shared::cluster`).
///
/// # Safety
/// `barrier`'s offset in block `rank`'s shared memory is an initialised
/// barrier of that block, which has not exited; `rank` is below the
/// cluster's size.
#[inline(always)]
pub(crate) unsafe fn arrive_on_rank(barrier: *mut u64, rank: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "{{ .reg .b32 r; mapa.shared::cluster.u32 r, {a}, {k}; mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r]; }}",
            a = in(reg32) shared_address(barrier), k = in(reg32) rank,
            options(nostack),
        )
    };
}

/// [`wait_parity`] with acquire semantics at cluster scope: what other
/// blocks' threads did before their arrivals on the phase
/// ([`arrive_on_rank`]) happens before what this thread does after.
///
/// # Safety
/// As [`arrive`].
#[inline(always)]
pub(crate) unsafe fn wait_parity_cluster(barrier: *mut u64, parity: u32) {
    let address = shared_address(barrier);
    loop {
        let done: u32;
        // SAFETY: as `wait_parity`.
        unsafe {
            asm!(
                "{{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{a}], {q}; selp.u32 {d}, 1, 0, p; }}",
                d = out(reg32) done, a = in(reg32) address, q = in(reg32) parity,
                options(nostack),
            )
        };
        if done != 0 {
            return;
        }
    }
}

/// `cp.async.bulk.tensor.{rank}d.global.shared::cta`, tile mode, in a bulk
/// group: the box of `map` at `coords` (innermost first) written from
/// `tile`, clipped at the tensor's edges. Completes with
/// [`bulk_commit_group`] and [`bulk_wait_group_read`] (the tile read) or
/// [`bulk_wait_group`] (the writes done).
///
/// # Safety
/// `tile` is shared memory of the box's bytes, aligned for the map's
/// swizzle, that this block's threads wrote before a
/// `fence.proxy.async.shared::cta` and a barrier with this thread, and do
/// not write until this thread's `wait_group.read` after the commit;
/// `map` the generic address of a live encoded map of `rank` dimensions in
/// global memory, of memory no other block or launch writes in the box.
#[inline(always)]
pub(crate) unsafe fn store_nd(tile: *const u8, map: *const u64, rank: usize, coords: [i32; 5]) {
    let t = shared_address(tile.cast_mut());
    let [c0, c1, c2, c3, c4] = coords;
    // SAFETY: the caller's contract.
    unsafe {
        match rank {
            1 => asm!(
                "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [{m}, {{{c0}}}], [{t}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0,
                options(nostack),
            ),
            2 => asm!(
                "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{t}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                options(nostack),
            ),
            3 => asm!(
                "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{t}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2,
                options(nostack),
            ),
            4 => asm!(
                "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{t}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3,
                options(nostack),
            ),
            _ => asm!(
                "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{t}];",
                t = in(reg32) t, m = in(reg64) map, c0 = in(reg32) c0, c1 = in(reg32) c1,
                c2 = in(reg32) c2, c3 = in(reg32) c3, c4 = in(reg32) c4,
                options(nostack),
            ),
        }
    }
}

/// `cp.async.bulk.commit_group`: this thread's bulk stores issued since
/// the last commit, one group.
#[inline(always)]
pub(crate) fn bulk_commit_group() {
    // SAFETY: no operands; it groups this thread's own bulk operations.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) };
}

/// `cp.async.bulk.wait_group.read 0`: every bulk group this thread
/// committed has read its source (the shared tile may be written again).
#[inline(always)]
pub(crate) fn bulk_wait_group_read() {
    // SAFETY: a wait; a memory clobber orders the tile's later writes after it.
    unsafe { asm!("cp.async.bulk.wait_group.read 0;", options(nostack)) };
}

/// `cp.async.bulk.wait_group 0`: every bulk group this thread committed is
/// complete, its writes done.
#[inline(always)]
pub(crate) fn bulk_wait_group() {
    // SAFETY: a wait; no operands.
    unsafe { asm!("cp.async.bulk.wait_group 0;", options(nostack)) };
}
