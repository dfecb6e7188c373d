//! Matrix products: [`matmul`] (`torch.matmul`, `C = A @ B`) on the fastest
//! path the device has, and the kernels it launches.
//!
//! | inputs | path | device |
//! |---|---|---|
//! | `bf16` | [`gemm_tc`]: `mma.sync.m16n8k16` tensor cores fed by a `cp.async` ring, f32 accumulation, C rounded once to bf16 | sm_80 and later (an older device is an error naming it) |
//! | `f32` | [`sgemm`]: the register-tiled FP32 SGEMM (`sgemm_8x8`) | every device |
//!
//! Hopper's `wgmma` would be the sm_90a path: this crate builds an sm_90a
//! module already (`build.rs`), and [`bf16_path`]'s choice, made from the
//! device's compute capability, is the one place to add it once that
//! kernel beats the `mma.sync` one (issue #22).
//!
//! All matrices are row-major and dense, as torch's contiguous tensors:
//! A is `m × k`, B is `k × n`, C is `m × n`. The `mma.sync` kernel reads B
//! K-major (`n × k`) and rows padded to 8 elements: [`matmul`] packs B
//! (and A, when `k` is not a multiple of 8) into that layout first, with
//! [`pack_k_major`].

// sm_80's: in the PTX of sm_80 and later only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod gemm_tc;
pub mod sgemm;

#[cfg(not(target_arch = "nvptx64"))]
mod host;

use gpu_device::half::{bf16, f16};
use gpu_device::prelude::*;

/// Copies the `rows × cols` matrix whose element `(r, c)` is `src[r *
/// row_step + c * col_step]` into the first `cols` columns of `out`, a
/// `rows × ld` row-major matrix (`ld >= cols`; the columns past `cols` are
/// left as they are). With `row_step = cols, col_step = 1` it pads a
/// row-major matrix's rows to `ld`; with `row_step = 1, col_step = rows` it
/// transposes a row-major `cols × rows` matrix. One thread an element of
/// `out`: launch `out.len()` threads or more.
#[kernel(bf16, f16, f32)]
pub fn pack_k_major<T: DeviceCopy>(
    src: &[T],
    rows: usize,
    cols: usize,
    ld: usize,
    row_step: usize,
    col_step: usize,
    mut out: DisjointSlice<T>,
) {
    let i = thread_index();
    let (r, c) = (i.get() / ld, i.get() % ld);
    if r < rows && c < cols {
        if let Some(o) = out.get_mut(i) {
            // The host checked `src`'s length; an index past it panics
            // (the launch fails naming this line), never reads past it.
            *o = src[r * row_step + c * col_step];
        }
    }
}

/// Which kernel a bf16 [`matmul`] runs on a device of compute capability
/// `(major, minor)`, `None` where none can (before sm_80): the seam where a
/// faster path (Hopper's `wgmma` on `(9, 0)`) is added.
pub fn bf16_path(compute_capability: (u32, u32)) -> Option<Bf16Path> {
    (compute_capability >= (8, 0)).then_some(Bf16Path::MmaSync)
}

/// The kernels a bf16 [`matmul`] can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bf16Path {
    /// [`gemm_tc`]'s `mma.sync` GEMM (sm_80 and later).
    MmaSync,
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{matmul, matmul_on, MatmulElement};
