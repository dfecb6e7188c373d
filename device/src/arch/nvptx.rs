//! PTX implementations of the device primitives.

use super::ShuffleMode;
use core::arch::{asm, nvptx};

// SAFETY (whole module): special registers, barriers and arithmetic
// instructions have no memory-safety preconditions inside a kernel; the
// register values are never negative, so `as u32` is exact.

#[inline(always)]
pub(crate) fn thread_idx() -> [u32; 3] {
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

#[inline(always)]
pub(crate) fn block_idx() -> [u32; 3] {
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
    unsafe { asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane, options(pure, nomem, nostack)) };
    lane
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

#[inline(always)]
pub(crate) fn barrier(id: u32) {
    unsafe { barrier_cta_sync_all(id) }
}

#[inline(always)]
pub(crate) fn sync_warp(mask: u32) {
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

#[inline(always)]
pub(crate) fn fence_device() {
    unsafe { asm!("membar.gl;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn fence_block() {
    unsafe { asm!("membar.cta;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn ballot(mask: u32, predicate: bool) -> u32 {
    let bits: u32;
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {b}, p, {m}; }}",
             b = out(reg32) bits, v = in(reg32) predicate as u32, m = in(reg32) mask, options(nostack));
    }
    bits
}

#[inline(always)]
pub(crate) fn shuffle(mode: ShuffleMode, mask: u32, word: u32, b: u32) -> u32 {
    let out: u32;
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
    unsafe {
        asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes, options(pure, nomem, nostack))
    };
    // Only the address is taken (no `unsafe` needed).
    let ptr = core::ptr::addr_of!(DYNAMIC_SHARED).cast::<u8>().cast_mut();
    (ptr, bytes as usize)
}

#[inline(always)]
pub(crate) fn trap() -> ! {
    unsafe { nvptx::trap() }
}

/// Math: LLVM intrinsics (exact) and PTX approximate instructions.
pub(crate) mod math {
    use core::arch::asm;

    #[allow(improper_ctypes)]
    extern "C" {
        #[link_name = "llvm.sqrt.f32"]
        fn llvm_sqrt_f32(x: f32) -> f32;
        #[link_name = "llvm.sqrt.f64"]
        fn llvm_sqrt_f64(x: f64) -> f64;
        #[link_name = "llvm.floor.f32"]
        fn llvm_floor_f32(x: f32) -> f32;
        #[link_name = "llvm.floor.f64"]
        fn llvm_floor_f64(x: f64) -> f64;
        #[link_name = "llvm.ceil.f32"]
        fn llvm_ceil_f32(x: f32) -> f32;
        #[link_name = "llvm.ceil.f64"]
        fn llvm_ceil_f64(x: f64) -> f64;
        #[link_name = "llvm.round.f32"]
        fn llvm_round_f32(x: f32) -> f32;
        #[link_name = "llvm.round.f64"]
        fn llvm_round_f64(x: f64) -> f64;
        #[link_name = "llvm.trunc.f32"]
        fn llvm_trunc_f32(x: f32) -> f32;
        #[link_name = "llvm.trunc.f64"]
        fn llvm_trunc_f64(x: f64) -> f64;
        #[link_name = "llvm.fabs.f32"]
        fn llvm_abs_f32(x: f32) -> f32;
        #[link_name = "llvm.fabs.f64"]
        fn llvm_abs_f64(x: f64) -> f64;
        #[link_name = "llvm.fma.f32"]
        fn llvm_fma_f32(a: f32, b: f32, c: f32) -> f32;
        #[link_name = "llvm.fma.f64"]
        fn llvm_fma_f64(a: f64, b: f64, c: f64) -> f64;
        #[link_name = "llvm.minnum.f32"]
        fn llvm_min_f32(a: f32, b: f32) -> f32;
        #[link_name = "llvm.minnum.f64"]
        fn llvm_min_f64(a: f64, b: f64) -> f64;
        #[link_name = "llvm.maxnum.f32"]
        fn llvm_max_f32(a: f32, b: f32) -> f32;
        #[link_name = "llvm.maxnum.f64"]
        fn llvm_max_f64(a: f64, b: f64) -> f64;
        #[link_name = "llvm.copysign.f32"]
        fn llvm_copysign_f32(a: f32, b: f32) -> f32;
        #[link_name = "llvm.copysign.f64"]
        fn llvm_copysign_f64(a: f64, b: f64) -> f64;
    }

    // SAFETY (the wrappers): LLVM intrinsics on plain values have no preconditions.
    #[inline(always)]
    pub(crate) fn sqrt_f32(x: f32) -> f32 {
        unsafe { llvm_sqrt_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn sqrt_f64(x: f64) -> f64 {
        unsafe { llvm_sqrt_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn floor_f32(x: f32) -> f32 {
        unsafe { llvm_floor_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn floor_f64(x: f64) -> f64 {
        unsafe { llvm_floor_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn ceil_f32(x: f32) -> f32 {
        unsafe { llvm_ceil_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn ceil_f64(x: f64) -> f64 {
        unsafe { llvm_ceil_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn round_f32(x: f32) -> f32 {
        unsafe { llvm_round_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn round_f64(x: f64) -> f64 {
        unsafe { llvm_round_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn trunc_f32(x: f32) -> f32 {
        unsafe { llvm_trunc_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn trunc_f64(x: f64) -> f64 {
        unsafe { llvm_trunc_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn abs_f32(x: f32) -> f32 {
        unsafe { llvm_abs_f32(x) }
    }
    #[inline(always)]
    pub(crate) fn abs_f64(x: f64) -> f64 {
        unsafe { llvm_abs_f64(x) }
    }
    #[inline(always)]
    pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        unsafe { llvm_fma_f32(a, b, c) }
    }
    #[inline(always)]
    pub(crate) fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        unsafe { llvm_fma_f64(a, b, c) }
    }
    #[inline(always)]
    pub(crate) fn min_f32(a: f32, b: f32) -> f32 {
        unsafe { llvm_min_f32(a, b) }
    }
    #[inline(always)]
    pub(crate) fn min_f64(a: f64, b: f64) -> f64 {
        unsafe { llvm_min_f64(a, b) }
    }
    #[inline(always)]
    pub(crate) fn max_f32(a: f32, b: f32) -> f32 {
        unsafe { llvm_max_f32(a, b) }
    }
    #[inline(always)]
    pub(crate) fn max_f64(a: f64, b: f64) -> f64 {
        unsafe { llvm_max_f64(a, b) }
    }
    #[inline(always)]
    pub(crate) fn copysign_f32(a: f32, b: f32) -> f32 {
        unsafe { llvm_copysign_f32(a, b) }
    }
    #[inline(always)]
    pub(crate) fn copysign_f64(a: f64, b: f64) -> f64 {
        unsafe { llvm_copysign_f64(a, b) }
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
