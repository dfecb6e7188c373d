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
