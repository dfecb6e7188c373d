//! Matrix products: [`matmul`] (`torch.matmul`, `C = A @ B`) on the fastest
//! path the device has, and the kernels it launches.
//!
//! | inputs | path ([`MatmulPath`]) | device |
//! |---|---|---|
//! | `bf16`, `f16` | [`gemm_wgmma`]: Hopper's `wgmma.m64n256k16` fed by a `cp.async` ring, f32 accumulation, C rounded once to the inputs' type | compute capability 9.0 (the sm_90a module: H100, H200) |
//! | `bf16`, `f16` | [`gemm_tc`]: `mma.sync.m16n8k16` tensor cores fed by a `cp.async` ring, f32 accumulation, C rounded once to the inputs' type | sm_80 and later but 9.0 (an older device is an error naming it) |
//! | `f32` | [`sgemm`]: the register-tiled FP32 SGEMM (`sgemm_8x8`) | every device |
//!
//! [`MatmulPath::tensor_cores`] makes the choice from the device's compute
//! capability (the one place it is made), and [`matmul_path`] tells it
//! for an element type on a device: sm_90a code runs on compute capability 9.0 only, which is
//! also the device the runtime loads this crate's sm_90a module on.
//!
//! All matrices are row-major and dense, as torch's contiguous tensors:
//! A is `m × k`, B is `k × n`, C is `m × n`. Both tensor-core kernels read
//! B K-major (`n × k`) and rows padded to 8 elements, and share their
//! loads (a block tile of 128 × 256 × 64: ragged M and N are cut by the
//! copies' zero fill and the stores' bounds): [`matmul`] packs B (and A,
//! when `k` is not a multiple of 8) into that layout first, with
//! [`pack_k_major`], a transposing copy of B (its cost: the gap between
//! `benches/gemm.rs`' `gpu_ops::matmul` table and its kernel rows).

// sm_80's: in the PTX of sm_80 and later only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod gemm_tc;
// sm_90a's: in the PTX of sm_90a only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod gemm_wgmma;
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

/// The kernels [`matmul`] runs; [`matmul_path`] says which one for an
/// element type on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// [`gemm_wgmma`]'s Hopper GEMMs (`wgmma`, sm_90a: compute capability
    /// 9.0 exactly), for `bf16` and `f16`.
    Wgmma,
    /// [`gemm_tc`]'s `mma.sync` GEMMs (sm_80 and later), for `bf16` and
    /// `f16`.
    MmaSync,
    /// [`sgemm`]'s register-tiled FP32 SGEMM (every device), for `f32`.
    Sgemm,
}

impl MatmulPath {
    /// The tensor-core path of a device of compute capability `(major,
    /// minor)`: `wgmma` on 9.0 (sm_90a code runs there only), `mma.sync`
    /// on the other devices of sm_80 and later, `None` before sm_80.
    pub fn tensor_cores(compute_capability: (u32, u32)) -> Option<MatmulPath> {
        match compute_capability {
            (9, 0) => Some(MatmulPath::Wgmma),
            cc if cc >= (8, 0) => Some(MatmulPath::MmaSync),
            _ => None,
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{matmul, matmul_on, matmul_path, MatmulElement};
