//! Hopper's warpgroup MMA (`wgmma`), its fences and `setmaxnreg` (sm_90a
//! only: compiled only into PTX of that architecture).
//!
//! Each function is one warpgroup-collective instruction (`.sync.aligned`):
//! the caller (`crate::wgmma`) checks the warp is converged first.

use super::shared_address;
use super::SharedMatrix;
use core::arch::asm;

/// The 64-bit shared-memory matrix descriptor of `m` (PTX ISA, "Matrix
/// Descriptor Format"): start address, leading byte offset (K-major
/// swizzled layouts do not use it: 1, as CUTLASS writes it; MN-major ones
/// the distance between chunks of columns), stride byte offset (8 rows),
/// base offset 0 (the tile is aligned to its swizzle pattern) and the
/// layout type; addresses and offsets in units of 16 bytes.
#[inline(always)]
fn descriptor(m: &SharedMatrix) -> u64 {
    let start = shared_address(m.base).wrapping_add(m.k_byte_offset);
    let stride = 8 * m.row_bytes;
    let leading = if m.chunk_bytes == 0 {
        1
    } else {
        (m.chunk_bytes as u64 >> 4) & 0x3fff
    };
    ((start as u64 >> 4) & 0x3fff)
        | (leading << 16)
        | (((stride as u64 >> 4) & 0x3fff) << 32)
        | ((m.layout_type as u64) << 62)
}

macro_rules! wgmma {
    ($(#[$doc:meta])* $name:ident, $shape:literal, $ty:literal, $regs:literal, [$first:literal $($rest:literal)*]) => {
        $(#[$doc])*
        ///
        /// `TRANS_B` is the instruction's `imm-trans-b`: 0 for a K-major B,
        /// 1 for an MN-major one.
        ///
        /// # Safety
        /// `a` is a K-major tile and `b` a tile of the major `TRANS_B`
        /// says, in shared memory, aligned to their swizzle pattern, with
        /// the rows and columns the shape reads (64 of A, N of B), which
        /// nothing writes until a `wait_group` covers this instruction's
        /// group; the accumulator's registers are not read before then;
        /// every thread of the warpgroup executes it together.
        #[inline(always)]
        pub(crate) unsafe fn $name<const TRANS_B: u32>(a: &SharedMatrix, b: &SharedMatrix, d: &mut [f32; $regs], scale_d: bool) {
            let (da, db) = (descriptor(a), descriptor(b));
            // SAFETY: the caller's contract.
            unsafe {
                asm!(
                    concat!(
                        "{{ .reg .pred p; setp.ne.u32 p, {scale}, 0; wgmma.mma_async.sync.aligned.", $shape, ".f32.", $ty, ".", $ty, " ",
                        "{{{", $first, "}", $(", {", $rest, "}",)* "}}, {da}, {db}, p, 1, 1, 0, {tb}; }}"
                    ),
                    inout(reg32) d[$first], $(inout(reg32) d[$rest],)*
                    da = in(reg64) da, db = in(reg64) db, scale = in(reg32) scale_d as u32,
                    tb = const TRANS_B,
                    options(nostack),
                )
            };
        }
    };
}

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`, A K-major and B of
    /// either major from shared memory.
    m64n64k16_bf16, "m64n64k16", "bf16", 32, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`, A K-major and B of
    /// either major from shared memory.
    m64n64k16_f16, "m64n64k16", "f16", 32, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16`, A K-major and B of
    /// either major from shared memory.
    m64n128k16_bf16, "m64n128k16", "bf16", 64, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`, A K-major and B of
    /// either major from shared memory.
    m64n128k16_f16, "m64n128k16", "f16", 64, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16`, A K-major and B of
    /// either major from shared memory.
    m64n256k16_bf16, "m64n256k16", "bf16", 128, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]
);

wgmma!(
    /// `wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16`, A K-major and B of
    /// either major from shared memory.
    m64n256k16_f16, "m64n256k16", "f16", 128, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]
);

/// `wgmma.fence.sync.aligned`: orders this warpgroup's register and shared
/// accesses before the `wgmma.mma_async` that follow.
#[inline(always)]
pub(crate) fn fence() {
    // SAFETY: an ordering instruction; a memory clobber, so no access moves
    // across it. The caller checked the warp is converged.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

/// `wgmma.commit_group.sync.aligned`: closes the warpgroup's current group
/// of `wgmma.mma_async`.
#[inline(always)]
pub(crate) fn commit_group() {
    // SAFETY: bookkeeping of this warpgroup's own operations.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most `N` of the
/// warpgroup's committed groups are still in flight.
#[inline(always)]
pub(crate) fn wait_group<const N: u32>() {
    // SAFETY: a wait; a memory clobber, so the reads of what the groups
    // wrote stay after it.
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack)) };
}

/// Keeps the accumulator's registers where they are across this point: an
/// empty instruction reading and writing each (CUTLASS's
/// `warpgroup_fence_operand`), so no copy of them moves before a wait.
/// Written out per register (an array indexed in a loop would live in
/// local memory).
#[inline(always)]
pub(crate) fn fence_operand<const R: usize>(d: &mut [f32; R]) {
    crate::unroll::full::<R>(|i| {
        // SAFETY: an empty template; touches no memory.
        unsafe { asm!("// wgmma operand {v}", v = inout(reg32) d[i], options(nomem, nostack)) };
    });
}

/// `fence.proxy.async.shared::cta`: orders this thread's generic-proxy
/// shared-memory writes before later async-proxy reads (`wgmma`'s operands).
#[inline(always)]
pub(crate) fn fence_proxy_async() {
    // SAFETY: an ordering instruction; a memory clobber.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}

/// `setmaxnreg.inc.sync.aligned.u32 N`: raises this warpgroup's register
/// limit to `N` (24 to 256, a multiple of 8; the caller checked).
#[inline(always)]
pub(crate) fn set_max_registers_inc<const N: u32>() {
    // SAFETY: a register-allocation request of the whole warpgroup (the
    // caller checked the warp converged and `N`'s range); no memory.
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}

/// `setmaxnreg.dec.sync.aligned.u32 N`: lowers this warpgroup's register
/// limit to `N` (as [`set_max_registers_inc`]).
#[inline(always)]
pub(crate) fn set_max_registers_dec<const N: u32>() {
    // SAFETY: as `set_max_registers_inc`.
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack)) };
}
