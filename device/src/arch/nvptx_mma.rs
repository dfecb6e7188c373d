//! `mma.sync` on tensor cores and the tf32 rounding its operands take
//! (sm_80 and later: compiled only into PTX of those architectures).
//!
//! Each function is one warp-collective instruction: `.aligned` requires
//! every lane of the warp to execute it together, which the caller
//! (`crate::mma`) checks first.

use super::shared_address;
use core::arch::asm;

macro_rules! mma_16x8 {
    ($(#[$doc:meta])* $name:ident, $shape:literal, $types:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
            let d: [f32; 4];
            let (d0, d1, d2, d3): (f32, f32, f32, f32);
            // SAFETY: register operands only, no memory; every lane of the
            // warp executes it (the caller checked the active mask is full).
            unsafe {
                asm!(
                    concat!(
                        "mma.sync.aligned.", $shape, ".row.col.f32.", $types, ".f32 ",
                        "{{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"
                    ),
                    d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                    a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                    b0 = in(reg32) b[0], b1 = in(reg32) b[1],
                    c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
                    options(nomem, nostack),
                );
            }
            d = [d0, d1, d2, d3];
            d
        }
    };
}

mma_16x8!(
    /// `D = A B + C`, m16n8k16, bf16 operands.
    m16n8k16_bf16, "m16n8k16", "bf16.bf16"
);
mma_16x8!(
    /// `D = A B + C`, m16n8k16, f16 operands.
    m16n8k16_f16, "m16n8k16", "f16.f16"
);
mma_16x8!(
    /// `D = A B + C`, m16n8k8, tf32 operands.
    m16n8k8_tf32, "m16n8k8", "tf32.tf32"
);

/// `x` rounded to tf32 (10 bits of significand; to nearest, ties away from
/// zero: `cvt.rna.tf32.f32`), as the bits of an f32.
#[inline(always)]
pub(crate) fn to_tf32(x: f32) -> u32 {
    let bits: u32;
    // SAFETY: a register conversion; touches no memory.
    unsafe {
        asm!("cvt.rna.tf32.f32 {o}, {x};", o = out(reg32) bits, x = in(reg32) x, options(pure, nomem, nostack))
    };
    bits
}

/// The 32-bit shared-window address `offset` bytes past `base`, a generic
/// pointer into shared memory: the pointer converted (`cvta`, pure, so the
/// compiler converts a base once for all its offsets), the offset added in
/// 32 bits (a shared window is below 4 GiB), as CUDA C's addresses are.
#[inline(always)]
fn shared_address_at<T>(base: *const T, offset: usize) -> u32 {
    shared_address(base).wrapping_add(offset as u32)
}

/// One `ldmatrix` form: `$shape` (`x4`, `x2`, with `.trans` or not) into
/// the `$n` registers `$r`, written in the template as `$regs`.
macro_rules! ldmatrix {
    ($(#[$doc:meta])* $name:ident, $shape:literal, $regs:literal, [$($r:ident)*; $n:literal]) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) unsafe fn $name(base: *const u16, offset: usize) -> [u32; $n] {
            $(let $r: u32;)*
            // SAFETY: the caller's contract.
            unsafe {
                asm!(
                    concat!("ldmatrix.sync.aligned.m8n8.", $shape, ".shared.b16 {{", $regs, "}}, [{a}];"),
                    $($r = out(reg32) $r,)*
                    a = in(reg32) shared_address_at(base, offset),
                    options(readonly, nostack),
                )
            };
            [$($r),*]
        }
    };
}

ldmatrix!(
    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: lane `i` gives the
    /// address of row `i % 8` of matrix `i / 8`; register `j` gets this
    /// lane's pair of matrix `j` (row `lane / 4`, columns `2 (lane % 4)`
    /// and the next).
    ///
    /// # Safety
    /// This lane's row, `offset` bytes past `base`, is in shared memory
    /// (as `base` is), 16-byte aligned, with 8 readable `u16`; every lane
    /// of the warp executes it together.
    ldmatrix_x4, "x4", "{r0}, {r1}, {r2}, {r3}", [r0 r1 r2 r3; 4]
);
ldmatrix!(
    /// `ldmatrix.sync.aligned.m8n8.x2.shared.b16`: as [`ldmatrix_x4`] with
    /// two matrices (lanes 0 to 15 give the addresses; the others' are not
    /// read).
    ///
    /// # Safety
    /// As [`ldmatrix_x4`], for lanes 0 to 15's rows.
    ldmatrix_x2, "x2", "{r0}, {r1}", [r0 r1; 2]
);
ldmatrix!(
    /// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`: as
    /// [`ldmatrix_x4`], each matrix transposed (register `j` gets this
    /// lane's pair of column `lane / 4`, rows `2 (lane % 4)` and the next,
    /// of matrix `j`).
    ///
    /// # Safety
    /// As [`ldmatrix_x4`].
    ldmatrix_x4_trans, "x4.trans", "{r0}, {r1}, {r2}, {r3}", [r0 r1 r2 r3; 4]
);
ldmatrix!(
    /// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`: as
    /// [`ldmatrix_x2`], each matrix transposed.
    ///
    /// # Safety
    /// As [`ldmatrix_x2`].
    ldmatrix_x2_trans, "x2.trans", "{r0}, {r1}", [r0 r1; 2]
);

/// Whether `ptr` (generic) points into global memory (`isspacep.global`).
#[inline(always)]
pub(crate) fn is_global<T>(ptr: *const T) -> bool {
    let global: u32;
    // SAFETY: a test of an address in registers; touches no memory.
    unsafe {
        asm!(
            "{{ .reg .pred p; isspacep.global p, {a}; selp.u32 {g}, 1, 0, p; }}",
            g = out(reg32) global, a = in(reg64) ptr as u64,
            options(pure, nomem, nostack),
        )
    };
    global != 0
}

/// `cp.async.cg.shared.global [dst], [src], 16, src_bytes`: queues the copy
/// of `src_bytes` bytes from `src` to `dst`, `dst_offset` bytes past
/// `dst_base`, the rest of the 16 zeroed, in this thread's current
/// (uncommitted) group.
///
/// # Safety
/// `dst` points into shared memory (as `dst_base` does), 16-byte aligned,
/// 16 bytes that nothing reads or writes until this thread's
/// `cp.async.wait_group` covers the copy; `src` is 16-byte aligned, in
/// global memory, with `src_bytes <= 16` readable bytes.
#[inline(always)]
pub(crate) unsafe fn cp_async_16(
    dst_base: *mut u8,
    dst_offset: usize,
    src: *const u8,
    src_bytes: u32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) shared_address_at(dst_base, dst_offset), s = in(reg64) src as u64, n = in(reg32) src_bytes,
            options(nostack),
        )
    };
}

/// `cp.async.commit_group`: closes this thread's current group of copies.
#[inline(always)]
pub(crate) fn cp_async_commit() {
    // SAFETY: bookkeeping of this thread's own copies; a memory clobber, so
    // no access moves across it.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) };
}

/// `cp.async.wait_group pending`: waits until at most `pending` (below 8)
/// of this thread's committed groups are still in flight.
#[inline(always)]
pub(crate) fn cp_async_wait(pending: u32) {
    macro_rules! wait {
        ($($n:literal)*) => {
            match pending {
                // SAFETY: a wait; a memory clobber, so the reads of the
                // landed data stay after it.
                $($n => unsafe { asm!(concat!("cp.async.wait_group ", $n, ";"), options(nostack)) },)*
                // SAFETY: as above; waiting for all is never too early.
                _ => unsafe { asm!("cp.async.wait_group 0;", options(nostack)) },
            }
        };
    }
    wait!(0 1 2 3 4 5 6 7)
}
