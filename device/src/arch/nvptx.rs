//! PTX implementations of the device primitives.

use super::ShuffleMode;
use core::arch::{asm, nvptx};

/// The 32-bit shared-window address (`cvta.to.shared`) of a generic pointer
/// into shared memory: what `ldmatrix`, `mbarrier` and `wgmma` descriptors take.
// Used by the sm_80 and sm_90 modules only: absent from older PTX.
#[cfg_attr(not(target_feature = "sm_80"), allow(dead_code))]
#[inline(always)]
pub(crate) fn shared_address<T>(ptr: *const T) -> u32 {
    let address: u64;
    // SAFETY: an address conversion in registers; touches no memory (the
    // caller's pointer is into shared memory).
    unsafe {
        asm!("cvta.to.shared.u64 {a}, {p};", a = out(reg64) address, p = in(reg64) ptr as u64, options(pure, nomem, nostack))
    };
    address as u32
}

// Special registers, barriers and arithmetic instructions have no
// memory-safety preconditions inside a kernel; each block below says which
// it uses. Special-register values are never negative, so `as u32` is exact.

#[inline(always)]
pub(crate) fn thread_idx() -> [u32; 3] {
    // SAFETY: reads of the `%tid` special registers, valid in any kernel.
    let t = unsafe {
        [
            nvptx::_thread_idx_x() as u32,
            nvptx::_thread_idx_y() as u32,
            nvptx::_thread_idx_z() as u32,
        ]
    };
    let d = block_dim();
    // SAFETY: the hardware guarantees `threadIdx < blockDim` on each axis.
    // Telling LLVM lets a kernel that checked its block shape drop bounds
    // checks on tile indices derived from `threadIdx`.
    unsafe {
        core::hint::assert_unchecked(t[0] < d[0] && t[1] < d[1] && t[2] < d[2]);
    }
    t
}

/// Tells LLVM that `condition` holds.
///
/// # Safety
/// `condition` is true.
#[inline(always)]
pub(crate) unsafe fn assume(condition: bool) {
    // SAFETY: upheld by the caller.
    unsafe { core::hint::assert_unchecked(condition) }
}

/// `x`, computed where this is called: a register copy the compiler can
/// neither move nor fold (a `volatile` `mov`, which ptxas then drops), so
/// that the value is held in one register from here on instead of being
/// recomputed later from its operands, which would keep them all live.
#[inline(always)]
pub(crate) fn computed_here(x: u32) -> u32 {
    let y: u32;
    // SAFETY: a register move; touches no memory. Not `pure`: LLVM keeps
    // it where it is (a side effect it cannot see through).
    unsafe {
        asm!("mov.b32 {y}, {x};", y = out(reg32) y, x = in(reg32) x, options(nomem, nostack, preserves_flags))
    };
    y
}

#[inline(always)]
pub(crate) fn block_idx() -> [u32; 3] {
    // SAFETY: reads of the `%ctaid` special registers, valid in any kernel.
    unsafe {
        [
            nvptx::_block_idx_x() as u32,
            nvptx::_block_idx_y() as u32,
            nvptx::_block_idx_z() as u32,
        ]
    }
}

#[inline(always)]
pub(crate) fn block_dim() -> [u32; 3] {
    // SAFETY: reads of the `%ntid` special registers, valid in any kernel.
    unsafe {
        [
            nvptx::_block_dim_x() as u32,
            nvptx::_block_dim_y() as u32,
            nvptx::_block_dim_z() as u32,
        ]
    }
}

#[inline(always)]
pub(crate) fn grid_dim() -> [u32; 3] {
    // SAFETY: reads of the `%nctaid` special registers, valid in any kernel.
    unsafe {
        [
            nvptx::_grid_dim_x() as u32,
            nvptx::_grid_dim_y() as u32,
            nvptx::_grid_dim_z() as u32,
        ]
    }
}

#[inline(always)]
pub(crate) fn lane_id() -> u32 {
    let lane: u32;
    // SAFETY: reads the `%laneid` special register into a register; touches
    // no memory.
    unsafe { asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane, options(pure, nomem, nostack)) };
    lane
}

/// Two words that name this block apart from every other block that ran
/// on the device in this context: `%gridid` (the launch's own number,
/// 64 bits since PTX 3.0) and the block's linear rank, negated (so never
/// 0: zeroed words name no block).
// Used by `mbarrier` only: sm_90 and later.
#[cfg_attr(not(target_feature = "sm_90"), allow(dead_code))]
#[inline(always)]
pub(crate) fn block_identity() -> [u64; 2] {
    let grid: u64;
    // SAFETY: reads the `%gridid` special register into a register;
    // touches no memory.
    unsafe { asm!("mov.u64 {g}, %gridid;", g = out(reg64) grid, options(pure, nomem, nostack)) };
    [grid, !(crate::leader::block_rank() as u64)]
}

/// Reads the word at `ptr` as whatever bits it holds, through PTX: for a
/// word of shared memory that this block may not have written yet (an
/// earlier block's, or never written), which a Rust read would see as
/// uninitialised.
///
/// # Safety
/// `ptr` is an 8-byte aligned word of the block's shared memory that no
/// other thread writes meanwhile.
// Used by `mbarrier` only: sm_90 and later.
#[cfg_attr(not(target_feature = "sm_90"), allow(dead_code))]
#[inline(always)]
pub(crate) unsafe fn load_any_bits_u64(ptr: *const u64) -> u64 {
    let value: u64;
    // SAFETY: the caller's contract: an aligned word of shared memory (a
    // generic load reaches it).
    unsafe {
        asm!("ld.u64 {v}, [{p}];", v = out(reg64) value, p = in(reg64) ptr, options(nostack, readonly, preserves_flags))
    };
    value
}

#[allow(improper_ctypes)]
extern "C" {
    /// PTX `barrier.sync id`: the barrier without `.aligned`, defined when
    /// the threads of a warp reach it from divergent code (each thread
    /// counts). `bar.sync` (`__syncthreads()`, `_syncthreads`) is
    /// `barrier.sync.aligned`, undefined there.
    #[link_name = "llvm.nvvm.barrier.cta.sync.all"]
    fn barrier_cta_sync_all(id: u32);
}

/// The barrier of `sync_threads`.
pub(crate) const THREADS_BARRIER: u32 = 0;
/// The barrier of the shared-memory phase token (`Block::sync`).
pub(crate) const PHASE_BARRIER: u32 = 1;
/// The barrier inside a block collective, between one thread's write of the
/// collectives' scratch and the others' reads (`shared::scratch`): its own,
/// so it never pairs with a phase change or a `sync_threads()`.
pub(crate) const COLLECTIVE_BARRIER: u32 = 3;

#[inline(always)]
pub(crate) fn barrier(id: u32) {
    // SAFETY: a non-aligned barrier is defined for any control flow (a thread
    // that never arrives hangs the block, it breaks no memory rule); `id` is
    // one of this module's two barrier constants, below PTX's limit of 16.
    unsafe { barrier_cta_sync_all(id) }
}

/// Waits at barrier `id` as [`barrier`] does, and tells whether any thread
/// of the block that arrived voted `predicate` true (`barrier.red.or.pred`,
/// the form without `.aligned`, like [`barrier`]): the answer is the same
/// in every thread, and the compiler knows it. A thread that exited before
/// the barrier may count as arrived without voting. Every pass of `id`
/// that uses this uses it in every thread (one kind of barrier per pass).
#[inline(always)]
pub(crate) fn barrier_any(id: u32, predicate: bool) -> bool {
    let any: u32;
    // SAFETY: as in `vote_count`: a barrier with a reduction on registers;
    // `id` is one of this module's barrier constants, below 16.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.or.pred q, {id}, p; selp.u32 {r}, 1, 0, q; }}",
             id = in(reg32) id, r = out(reg32) any, v = in(reg32) predicate as u32, options(nostack));
    }
    any != 0
}

/// Waits at barrier `id` as [`barrier`] does, and tells whether thread 0
/// of the block was among the threads that arrived ([`barrier_any`] of "my
/// rank is 0"): a thread that exited before the barrier may count as
/// arrived without voting, so this tells a barrier thread 0 reached from
/// one it left by exiting.
#[inline(always)]
pub(crate) fn barrier_thread_0_reached(id: u32) -> bool {
    barrier_any(id, thread_idx() == [0, 0, 0])
}

/// The barrier of the block votes (`vote::sync_threads_count` and its
/// peers): a barrier of its own, so a vote never pairs with a
/// `sync_threads()` or a phase change.
pub(crate) const VOTE_BARRIER: u32 = 2;

/// How many threads of the block voted `predicate` true, once all have
/// voted (`barrier.red.popc` on [`VOTE_BARRIER`], the form without
/// `.aligned`, defined in divergent code as `barrier` is).
#[inline(always)]
pub(crate) fn vote_count(predicate: bool) -> u32 {
    let count: u32;
    // SAFETY: a barrier with a reduction on registers: touches no memory
    // rule (a thread that never arrives hangs the block, as in `barrier`).
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; barrier.red.popc.u32 {c}, {id}, p; }}",
             id = const VOTE_BARRIER, c = out(reg32) count, v = in(reg32) predicate as u32, options(nostack));
    }
    count
}

/// Whether every thread of the block voted true (`barrier.red.and.pred`).
#[inline(always)]
pub(crate) fn vote_all(predicate: bool) -> bool {
    let all: u32;
    // SAFETY: as in `vote_count`.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.and.pred q, {id}, p; selp.u32 {a}, 1, 0, q; }}",
             id = const VOTE_BARRIER, a = out(reg32) all, v = in(reg32) predicate as u32, options(nostack));
    }
    all != 0
}

/// Whether any thread of the block voted true (`barrier.red.or.pred`).
#[inline(always)]
pub(crate) fn vote_any(predicate: bool) -> bool {
    let any: u32;
    // SAFETY: as in `vote_count`.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; barrier.red.or.pred q, {id}, p; selp.u32 {a}, 1, 0, q; }}",
             id = const VOTE_BARRIER, a = out(reg32) any, v = in(reg32) predicate as u32, options(nostack));
    }
    any != 0
}

/// The lanes of the warp executing this instruction together (`activemask`).
#[inline(always)]
pub(crate) fn active_mask() -> u32 {
    let mask: u32;
    // SAFETY: reads which lanes are active into a register; touches no memory.
    unsafe { asm!("activemask.b32 {m};", m = out(reg32) mask, options(nostack)) };
    mask
}

/// The lanes in `mask` whose value equals this lane's (`match.any.sync`):
/// a 64-bit comparison of `lo | hi << 32` when `wide`.
#[inline(always)]
pub(crate) fn match_any(mask: u32, lo: u32, hi: u32, wide: bool) -> u32 {
    let lanes: u32;
    // SAFETY: a warp collective on registers; touches no memory. `mask`
    // names the calling lane (the `warp` module checks; PTX leaves it
    // undefined otherwise).
    unsafe {
        if wide {
            asm!("{{ .reg .b64 v; mov.b64 v, {{{lo}, {hi}}}; match.any.sync.b64 {d}, v, {m}; }}",
                 d = out(reg32) lanes, lo = in(reg32) lo, hi = in(reg32) hi, m = in(reg32) mask, options(nostack));
        } else {
            asm!("match.any.sync.b32 {d}, {v}, {m};",
                 d = out(reg32) lanes, v = in(reg32) lo, m = in(reg32) mask, options(nostack));
        }
    }
    lanes
}

/// `mask` when every lane in `mask` has the same value as this lane's,
/// else 0 (`match.all.sync`), with whether they have.
#[inline(always)]
pub(crate) fn match_all(mask: u32, lo: u32, hi: u32, wide: bool) -> (u32, bool) {
    let (lanes, all): (u32, u32);
    // SAFETY: as in `match_any`.
    unsafe {
        if wide {
            asm!("{{ .reg .b64 v; .reg .pred p; mov.b64 v, {{{lo}, {hi}}}; match.all.sync.b64 {d}|p, v, {m}; selp.u32 {a}, 1, 0, p; }}",
                 d = out(reg32) lanes, a = out(reg32) all, lo = in(reg32) lo, hi = in(reg32) hi, m = in(reg32) mask, options(nostack));
        } else {
            asm!("{{ .reg .pred p; match.all.sync.b32 {d}|p, {v}, {m}; selp.u32 {a}, 1, 0, p; }}",
                 d = out(reg32) lanes, a = out(reg32) all, v = in(reg32) lo, m = in(reg32) mask, options(nostack));
        }
    }
    (lanes, all != 0)
}

/// Suspends the thread for about `ns` nanoseconds (`nanosleep`; the
/// hardware caps it at about a millisecond).
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    // SAFETY: a timed wait; touches no memory and has no precondition.
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack)) };
}

#[inline(always)]
pub(crate) fn sync_warp(mask: u32) {
    // SAFETY: `bar.warp.sync` waits for the lanes in `mask`, which names the
    // calling lane (`sync::sync_warp` checks; PTX leaves it undefined
    // otherwise); lanes not in the warp's active set make it hang, not
    // misbehave.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// A 64-bit word read with `ld.relaxed.gpu` (single-copy atomic, GPU scope:
/// what the look-back's status words need; a Rust relaxed load is
/// `.sys`-scoped).
///
/// # Safety
/// `ptr` is valid, 8-byte aligned device memory accessed only atomically.
#[inline(always)]
pub(crate) unsafe fn load_relaxed_gpu_u64(ptr: *const u64) -> u64 {
    let value: u64;
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("ld.relaxed.gpu.u64 {v}, [{p}];", v = out(reg64) value, p = in(reg64) ptr, options(nostack))
    };
    value
}

/// A 64-bit word written with `st.relaxed.gpu`.
///
/// # Safety
/// As [`load_relaxed_gpu_u64`].
#[inline(always)]
pub(crate) unsafe fn store_relaxed_gpu_u64(ptr: *mut u64, value: u64) {
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("st.relaxed.gpu.u64 [{p}], {v};", p = in(reg64) ptr, v = in(reg64) value, options(nostack))
    };
}

/// A 64-bit compare-and-swap with `atom.relaxed.gpu.cas`: the old value.
///
/// # Safety
/// As [`load_relaxed_gpu_u64`].
#[inline(always)]
pub(crate) unsafe fn cas_relaxed_gpu_u64(ptr: *mut u64, current: u64, new: u64) -> u64 {
    let old: u64;
    // SAFETY: forwarded from the caller.
    unsafe {
        asm!("atom.relaxed.gpu.cas.b64 {o}, [{p}], {c}, {n};",
             o = out(reg64) old, p = in(reg64) ptr, c = in(reg64) current, n = in(reg64) new, options(nostack))
    };
    old
}

#[inline(always)]
pub(crate) fn fence_device() {
    // SAFETY: a memory fence orders this thread's accesses; it has no operands.
    unsafe { asm!("membar.gl;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn fence_block() {
    // SAFETY: a memory fence orders this thread's accesses; it has no operands.
    unsafe { asm!("membar.cta;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn fence_system() {
    // SAFETY: a memory fence orders this thread's accesses; it has no operands.
    unsafe { asm!("membar.sys;", options(nostack)) }
}

/// Ends the launch after a failed `gpu_assert!` (its record is written).
#[inline(always)]
pub(crate) fn assertion_failed<const F: usize, const A: usize>(
    _message: &crate::print::Printer<F, A>,
    _file: &'static str,
    _line: u32,
    _column: u32,
) -> ! {
    trap()
}

#[inline(always)]
pub(crate) fn ballot(mask: u32, predicate: bool) -> u32 {
    let bits: u32;
    // SAFETY: a warp vote on registers; touches no memory. `mask` names the
    // calling lane (`warp::ballot_sync` checks; PTX leaves it undefined
    // otherwise).
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {b}, p, {m}; }}",
             b = out(reg32) bits, v = in(reg32) predicate as u32, m = in(reg32) mask, options(nostack));
    }
    bits
}

#[inline(always)]
pub(crate) fn shuffle(mode: ShuffleMode, mask: u32, word: u32, b: u32) -> u32 {
    let out: u32;
    // SAFETY: warp shuffles move registers between the lanes in `mask`,
    // which names the calling lane (the `warp` module checks; PTX leaves it
    // undefined otherwise); they touch no memory.
    unsafe {
        match mode {
            ShuffleMode::Down => asm!("shfl.sync.down.b32 {o}, {w}, {b}, 0x1f, {m};",
                o = out(reg32) out, w = in(reg32) word, b = in(reg32) b, m = in(reg32) mask, options(nostack)),
            ShuffleMode::Up => asm!("shfl.sync.up.b32 {o}, {w}, {b}, 0x0, {m};",
                o = out(reg32) out, w = in(reg32) word, b = in(reg32) b, m = in(reg32) mask, options(nostack)),
            ShuffleMode::Xor => asm!("shfl.sync.bfly.b32 {o}, {w}, {b}, 0x1f, {m};",
                o = out(reg32) out, w = in(reg32) word, b = in(reg32) b, m = in(reg32) mask, options(nostack)),
            ShuffleMode::Index => asm!("shfl.sync.idx.b32 {o}, {w}, {b}, 0x1f, {m};",
                o = out(reg32) out, w = in(reg32) word, b = in(reg32) b, m = in(reg32) mask, options(nostack)),
        }
    }
    out
}

/// A warp reduction of 32-bit integers in one instruction (`redux.sync`,
/// sm_80 and later): `op` over the `value` of each lane in `mask`, to every
/// one of them; `signed` picks the comparison of `min` and `max`.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn redux(op: crate::collective::Redux, signed: bool, mask: u32, value: u32) -> u32 {
    use crate::collective::Redux;
    let out: u32;
    macro_rules! redux {
        ($instr:literal) => {
            // SAFETY: a warp collective on registers; touches no memory.
            // `mask` names the calling lane (the collectives' `Lanes` make
            // it so; PTX leaves it undefined otherwise).
            unsafe {
                asm!(concat!($instr, " {o}, {v}, {m};"),
                     o = out(reg32) out, v = in(reg32) value, m = in(reg32) mask, options(nostack))
            }
        };
    }
    match (op, signed) {
        (Redux::Add, _) => redux!("redux.sync.add.u32"),
        (Redux::Min, false) => redux!("redux.sync.min.u32"),
        (Redux::Min, true) => redux!("redux.sync.min.s32"),
        (Redux::Max, false) => redux!("redux.sync.max.u32"),
        (Redux::Max, true) => redux!("redux.sync.max.s32"),
        (Redux::And, _) => redux!("redux.sync.and.b32"),
        (Redux::Or, _) => redux!("redux.sync.or.b32"),
        (Redux::Xor, _) => redux!("redux.sync.xor.b32"),
    }
    out
}

extern "C" {
    /// The block's dynamic shared memory, sized at launch time. `gpu-builder`
    /// moves every global named `__gpu_shared_*` into the shared state space
    /// (LLVM address space 3), so loads and stores through it become
    /// `ld.shared`/`st.shared`.
    #[link_name = "__gpu_shared_dynamic"]
    static DYNAMIC_SHARED: [u128; 0];
}

/// The generic address and byte size of the block's dynamic shared memory.
#[inline(always)]
pub(crate) fn dynamic_shared() -> (*mut u8, usize) {
    let bytes: u32;
    // SAFETY: reads the `%dynamic_smem_size` special register; touches no memory.
    unsafe {
        asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes, options(pure, nomem, nostack))
    };
    // Only the address is taken (no `unsafe` needed).
    let ptr = core::ptr::addr_of!(DYNAMIC_SHARED).cast::<u8>().cast_mut();
    (ptr, bytes as usize)
}

/// Prints a line with CUDA's `vprintf`.
#[inline(always)]
pub(crate) fn print(format: &[u8], args: &[u64]) {
    // SAFETY: `format` is NUL-terminated and holds one conversion per value
    // of `args`, each a 64-bit integer or `double` in its 8-byte slot, in
    // order (`print::Printer`'s invariant); both live through the call.
    unsafe { nvptx::vprintf(format.as_ptr(), args.as_ptr().cast()) };
}

#[inline(always)]
pub(crate) fn trap() -> ! {
    // SAFETY: `trap` ends the launch with an error; it has no preconditions.
    unsafe { nvptx::trap() }
}

/// Math: LLVM intrinsics (exact) and PTX approximate instructions.
pub(crate) mod math {
    use core::arch::asm;

    /// A wrapper for an LLVM intrinsic on plain values.
    macro_rules! intrinsic {
        ($($name:ident($($arg:ident),+) -> $ty:ty = $llvm:literal;)*) => {
            mod llvm {
                #[allow(improper_ctypes)]
                extern "C" {
                    $(
                        #[link_name = $llvm]
                        pub(super) fn $name($($arg: $ty),+) -> $ty;
                    )*
                }
            }
            $(
                #[inline(always)]
                pub(crate) fn $name($($arg: $ty),+) -> $ty {
                    // SAFETY: an LLVM math intrinsic on plain values has no
                    // preconditions (any input, NaN included, is defined).
                    unsafe { llvm::$name($($arg),+) }
                }
            )*
        };
    }

    intrinsic! {
        sqrt_f32(x) -> f32 = "llvm.sqrt.f32";
        sqrt_f64(x) -> f64 = "llvm.sqrt.f64";
        floor_f32(x) -> f32 = "llvm.floor.f32";
        floor_f64(x) -> f64 = "llvm.floor.f64";
        ceil_f32(x) -> f32 = "llvm.ceil.f32";
        ceil_f64(x) -> f64 = "llvm.ceil.f64";
        round_f32(x) -> f32 = "llvm.round.f32";
        round_f64(x) -> f64 = "llvm.round.f64";
        trunc_f32(x) -> f32 = "llvm.trunc.f32";
        trunc_f64(x) -> f64 = "llvm.trunc.f64";
        abs_f32(x) -> f32 = "llvm.fabs.f32";
        abs_f64(x) -> f64 = "llvm.fabs.f64";
        fma_f32(a, b, c) -> f32 = "llvm.fma.f32";
        fma_f64(a, b, c) -> f64 = "llvm.fma.f64";
        min_f32(a, b) -> f32 = "llvm.minnum.f32";
        min_f64(a, b) -> f64 = "llvm.minnum.f64";
        max_f32(a, b) -> f32 = "llvm.maxnum.f32";
        max_f64(a, b) -> f64 = "llvm.maxnum.f64";
        copysign_f32(a, b) -> f32 = "llvm.copysign.f32";
        copysign_f64(a, b) -> f64 = "llvm.copysign.f64";
    }

    macro_rules! approx {
        ($name:ident, $instr:literal) => {
            #[inline(always)]
            pub(crate) fn $name(x: f32) -> f32 {
                let y: f32;
                // SAFETY: an arithmetic instruction on registers.
                unsafe { asm!(concat!($instr, " {y}, {x};"), y = out(reg32) y, x = in(reg32) x, options(pure, nomem, nostack)) };
                y
            }
        };
    }
    approx!(exp2_approx, "ex2.approx.f32");
    approx!(log2_approx, "lg2.approx.f32");
    approx!(sin_approx, "sin.approx.f32");
    approx!(cos_approx, "cos.approx.f32");
    approx!(rsqrt_approx, "rsqrt.approx.f32");
}

/// Half precision: PTX's f16 instructions (sm_53 and later, so every
/// target here), and its bf16 ones from sm_80 (`cvt.rn.bf16.f32`,
/// `fma.rn.bf16`, `fma.rn.bf16x2`; addition and multiplication as fused
/// multiply-adds with 1 and -0, which round the same); below sm_80, bf16 in
/// software (`crate::half::soft`), as on the simulator. Values travel as
/// their bits (`u16`, or `u32` for two lanes).
pub(crate) mod half {
    use core::arch::asm;

    macro_rules! instruction {
        ($($name:ident($($arg:ident: $ty:ty => $class:ident),*) -> $out:ty => $out_class:ident = $text:literal;)*) => {$(
            #[inline(always)]
            pub(crate) fn $name($($arg: $ty),*) -> $out {
                let out: $out;
                // SAFETY: an arithmetic instruction on registers; touches no
                // memory, defined for every input (NaN included).
                unsafe {
                    asm!($text, d = out($out_class) out, $($arg = in($class) $arg,)* options(pure, nomem, nostack))
                };
                out
            }
        )*};
    }

    instruction! {
        f16_from_f32(x: f32 => reg32) -> u16 => reg16 = "cvt.rn.f16.f32 {d}, {x};";
        f16_from_f64(x: f64 => reg64) -> u16 => reg16 = "cvt.rn.f16.f64 {d}, {x};";
        f16_to_f32_bits(h: u16 => reg16) -> f32 => reg32 = "cvt.f32.f16 {d}, {h};";
        f16_add(a: u16 => reg16, b: u16 => reg16) -> u16 => reg16 = "add.rn.f16 {d}, {a}, {b};";
        f16_sub(a: u16 => reg16, b: u16 => reg16) -> u16 => reg16 = "sub.rn.f16 {d}, {a}, {b};";
        f16_mul(a: u16 => reg16, b: u16 => reg16) -> u16 => reg16 = "mul.rn.f16 {d}, {a}, {b};";
        f16_fma(a: u16 => reg16, b: u16 => reg16, c: u16 => reg16) -> u16 => reg16 = "fma.rn.f16 {d}, {a}, {b}, {c};";
        f16x2_add(a: u32 => reg32, b: u32 => reg32) -> u32 => reg32 = "add.rn.f16x2 {d}, {a}, {b};";
        f16x2_mul(a: u32 => reg32, b: u32 => reg32) -> u32 => reg32 = "mul.rn.f16x2 {d}, {a}, {b};";
        f16x2_fma(a: u32 => reg32, b: u32 => reg32, c: u32 => reg32) -> u32 => reg32 = "fma.rn.f16x2 {d}, {a}, {b}, {c};";
    }

    // Two lanes rounded by one instruction (sm_80's packed `cvt`, SASS
    // `F2FP.PACK_AB` on the ALU pipe; the scalar `cvt` is an `F2F` on the
    // quarter-rate XU pipe): `cvt.rn.*x2.f32 d, a, b` puts `a` in the high
    // lane.
    #[cfg(target_feature = "sm_80")]
    instruction! {
        f16x2_from_f32s(lo: f32 => reg32, hi: f32 => reg32) -> u32 => reg32 = "cvt.rn.f16x2.f32 {d}, {hi}, {lo};";
        bf16x2_from_f32s(lo: f32 => reg32, hi: f32 => reg32) -> u32 => reg32 = "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};";
    }

    /// Below sm_80, lane by lane.
    #[cfg(not(target_feature = "sm_80"))]
    #[inline(always)]
    pub(crate) fn f16x2_from_f32s(lo: f32, hi: f32) -> u32 {
        u32::from(f16_from_f32(lo)) | u32::from(f16_from_f32(hi)) << 16
    }

    #[cfg(target_feature = "sm_80")]
    instruction! {
        bf16_from_f32(x: f32 => reg32) -> u16 => reg16 = "cvt.rn.bf16.f32 {d}, {x};";
        bf16_fma(a: u16 => reg16, b: u16 => reg16, c: u16 => reg16) -> u16 => reg16 = "fma.rn.bf16 {d}, {a}, {b}, {c};";
        bf16x2_fma(a: u32 => reg32, b: u32 => reg32, c: u32 => reg32) -> u32 => reg32 = "fma.rn.bf16x2 {d}, {a}, {b}, {c};";
    }

    /// bf16 1.0 and -0.0, and both in two lanes.
    #[cfg(target_feature = "sm_80")]
    const ONE: u16 = 0x3f80;
    #[cfg(target_feature = "sm_80")]
    const NEG_ZERO: u16 = 0x8000;

    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(crate) fn bf16_add(a: u16, b: u16) -> u16 {
        bf16_fma(a, ONE, b)
    }
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(crate) fn bf16_sub(a: u16, b: u16) -> u16 {
        bf16_fma(b ^ 0x8000, ONE, a)
    }
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(crate) fn bf16_mul(a: u16, b: u16) -> u16 {
        bf16_fma(a, b, NEG_ZERO)
    }
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(crate) fn bf16x2_add(a: u32, b: u32) -> u32 {
        bf16x2_fma(a, u32::from(ONE) * 0x1_0001, b)
    }
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(crate) fn bf16x2_mul(a: u32, b: u32) -> u32 {
        bf16x2_fma(a, b, u32::from(NEG_ZERO) * 0x1_0001)
    }
    /// From `f64` in software on every architecture: a direct `f64` to
    /// bf16 conversion is an sm_90 instruction, and one through `f32`
    /// would round twice.
    #[cfg(target_feature = "sm_80")]
    pub(crate) use crate::half::soft::ops::bf16_from_f64;

    #[cfg(not(target_feature = "sm_80"))]
    pub(crate) use crate::half::soft::ops::{
        bf16_add, bf16_fma, bf16_from_f32, bf16_from_f64, bf16_mul, bf16_sub, bf16x2_add,
        bf16x2_fma, bf16x2_from_f32s, bf16x2_mul,
    };
}

/// The barrier of a grid sync's two block-wide steps: its own, so it never
/// pairs with another barrier of the block.
pub(crate) const GRID_BARRIER: u32 = 4;

/// The barrier of a `cp.async` ring's waits (`cp_async::CpAsyncRing::wait`):
/// its own, so it never pairs with another barrier of the block.
pub(crate) const PIPELINE_BARRIER: u32 = 5;

/// The barrier of `mbarrier`s' initialisation (`mbarrier::MBarriers::init`):
/// its own, so that a thread passes it only after the initialising thread
/// has initialised the barriers of the same `init`.
#[allow(dead_code)]
pub(crate) const MBARRIER_BARRIER: u32 = 6;

#[cold]
#[inline(never)]
fn not_a_cooperative_launch() -> ! {
    panic!("grid sync outside a cooperative launch: the driver gave no grid workspace")
}

/// Waits for every thread of the grid (CUDA's `cooperative_groups`
/// `sync_grids`): a block barrier; thread 0 of each block adds to the
/// barrier word of the driver's grid workspace (block 0 adds `2^31 -
/// (blocks - 1)`, the others 1, so the word's top bit flips once all have
/// added) with release semantics, and waits with acquire loads until the
/// bit flips; a block barrier. The workspace's address is in `%envreg1`
/// (high) and `%envreg2` (low), set by the driver for cooperative launches
/// (zero in others).
#[inline(always)]
pub(crate) fn grid_sync() {
    barrier(GRID_BARRIER);
    if thread_idx() == [0, 0, 0] {
        let (hi, lo): (u32, u32);
        // SAFETY: reads two special registers; no memory.
        unsafe {
            asm!("mov.u32 {h}, %envreg1;", "mov.u32 {l}, %envreg2;",
                 h = out(reg32) hi, l = out(reg32) lo, options(nostack, nomem, pure))
        };
        let workspace = ((hi as u64) << 32) | lo as u64;
        if workspace == 0 {
            not_a_cooperative_launch();
        }
        // `struct grid_workspace { unsigned wsSize; unsigned barrier; }`.
        let word = (workspace + 4) as *mut u32;
        let [gx, gy, gz] = grid_dim();
        let blocks = gx.wrapping_mul(gy).wrapping_mul(gz);
        let add = if block_idx() == [0, 0, 0] {
            0x8000_0000u32.wrapping_sub(blocks.wrapping_sub(1))
        } else {
            1
        };
        let old: u32;
        // SAFETY: the driver's grid workspace of this cooperative launch
        // (non-zero, checked), whose barrier word only grid syncs touch, by
        // atomics.
        unsafe {
            asm!("atom.add.release.gpu.u32 {o}, [{p}], {a};",
                 o = out(reg32) old, p = in(reg64) word, a = in(reg32) add, options(nostack))
        };
        loop {
            let now: u32;
            // SAFETY: as above.
            unsafe {
                asm!("ld.acquire.gpu.u32 {n}, [{p}];", n = out(reg32) now, p = in(reg64) word, options(nostack))
            };
            if (old ^ now) & 0x8000_0000 != 0 {
                break;
            }
        }
    }
    barrier(GRID_BARRIER);
}
