//! Warp-level matrix multiply-accumulate on tensor cores: `mma.sync` (sm_80
//! and later), the shapes m16n8k16 with bf16 or f16 operands and m16n8k8
//! with tf32 operands, accumulating in f32.
//!
//! A warp computes `D = A B + C` for a 16 × K tile `A`, a K × 8 tile `B` and
//! a 16 × 8 tile `C`, each spread over the 32 lanes' registers in a layout
//! the PTX ISA fixes. Here the layouts belong to the API: a fragment's
//! elements are private, loaded from a tile in memory by
//! [`FragmentA::load`] and [`FragmentB::load`] (each lane reading the
//! elements its registers hold, bounds-checked), and an [`Accumulator`]
//! gives its elements back with their coordinates in the tile
//! ([`Accumulator::elements`]), so safe code cannot mix up which lane
//! holds which element.
//!
//! From shared memory, the 16-bit fragments load with `ldmatrix`: from the
//! block's dynamic shared memory ([`FragmentA::load_shared`]) or from a
//! landed stage of a [`cp_async`](crate::cp_async) ring
//! ([`FragmentA::load_stage`], [`FragmentB::load_stage_pair`], and a
//! column of tiles at once: `load_stage_column`), the multi-stage pipeline
//! of an sm_80 GEMM; [`mma_grid`] multiplies a warp tile of fragments. A GEMM's output, held in
//! accumulators, is written through the [`WarpTiles`] map of a
//! [`DisjointMatrix`](crate::DisjointMatrix).
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::half::bf16;
//! use gpu_device::mma::{Accumulator, Bf16, FragmentA, FragmentB};
//!
//! // With `#[kernel(arch = "sm_80")]`, one warp: `out` gets, per lane, its
//! // four elements of `A Bᵀ` (A: 16 × 16, B: 8 × 16, both row-major).
//! pub fn tile_product(a: &[bf16], b: &[bf16], mut out: DisjointSlice<[f32; 12]>) {
//!     let fa = FragmentA::<Bf16>::load(a, 16);
//!     let fb = FragmentB::<Bf16>::load(b, 16);
//!     let d = gpu_device::mma::mma(&fa, &fb, Accumulator::zero());
//!     let mut row = [0.0; 12];
//!     for (i, (r, c, v)) in d.elements().into_iter().enumerate() {
//!         row[3 * i..3 * i + 3].copy_from_slice(&[r as f32, c as f32, v]);
//!     }
//!     out.set(thread_index(), row);
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *The whole warp, together.* `mma.sync.aligned` is undefined unless
//!   every lane of the warp executes it together. [`mma`] first checks the
//!   warp's active mask is full (all 32 lanes here, converged) and panics
//!   otherwise, naming the mask: a divergent branch, an early return or the
//!   partial last warp of a block whose size is not a multiple of 32 is a
//!   trap on the GPU and a report on the simulator, never undefined
//!   behaviour. The simulator also gathers the operands through the warp
//!   exchange, which reports a lane that never arrives rather than hanging.
//! - *Each lane's own fragment.* Fragments are `!Send` and `!Sync`, and are
//!   neither `DeviceCopy` nor shuffled, so they cannot be written to memory
//!   or handed to another lane or warp: a fragment is used by the lane that
//!   loaded it, whose lane index chose its elements.
//! - *Tiles in bounds.* Loads index their slice (a panic out of bounds) and
//!   refuse a row stride shorter than the tile's row.
//! - *The architecture.* The module is compiled into PTX of sm_80 and later
//!   only: a kernel using it declares `#[kernel(arch = "sm_80")]` (or later),
//!   or is in a crate built for sm_80 and later alone; the runtime refuses
//!   it on older GPUs (see `gpu_runtime::Error::ArchitectureTooOld`). In a
//!   crate also built for older architectures, the helpers that use it
//!   outside a kernel go under the same gate as the module:
//!   `#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]`
//!   (else the older builds fail, naming `gpu_device::mma`).
//!
//! The simulator computes the same products exactly (every operand fits an
//! f64 product), sums them in f64 and rounds once to f32; the GPU's tensor
//! cores sum in f32 with their own order and rounding, so compare with a
//! tolerance of a few f32 ulps of the sum of the products' magnitudes. tf32
//! operands are rounded from f32 when loaded, to nearest with ties away
//! from zero, as `cvt.rna.tf32.f32` does on both.

use crate::arch;
use core::marker::PhantomData;

/// Makes fragments `!Send` and `!Sync`.
type NotSend = PhantomData<*mut ()>;

mod fragment;
mod ldmatrix;
mod operand;
mod output;

pub use fragment::{FragmentA, FragmentB};
pub use ldmatrix::mma_stage_steps;
pub use operand::{Bf16, Operand, SixteenBit, Tf32, F16};
pub use output::{WarpTileItems, WarpTiles};

/// This lane's group (`lane / 4`: a row of A and C, a column of B) and its
/// index in the group (`lane % 4`).
#[inline(always)]
fn group_and_index() -> (usize, usize) {
    let lane = arch::lane_id() as usize;
    (lane / 4, lane % 4)
}

#[track_caller]
#[inline(always)]
fn check_stride(what: &str, stride: usize, needed: usize) {
    if stride < needed {
        stride_too_short(what, stride, needed)
    }
}

#[track_caller]
#[inline(never)]
#[cold]
fn stride_too_short(what: &str, stride: usize, needed: usize) -> ! {
    panic!("{what}: a stride of {stride} elements is shorter than the tile's {needed}: the tile's rows would overlap")
}

/// This lane's share of a 16 × 8 f32 tile, the accumulator `C` of [`mma`]
/// and its result `D`.
#[derive(Clone, Copy)]
pub struct Accumulator {
    values: [f32; 4],
    _not_send: NotSend,
}

impl Accumulator {
    /// A tile of zeros.
    #[inline(always)]
    pub fn zero() -> Accumulator {
        Accumulator {
            values: [0.0; 4],
            _not_send: PhantomData,
        }
    }

    /// The accumulator of this lane's `values`, in its lane layout (a
    /// `wgmma` accumulator's 16 × 8 tiles have the same).
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub(crate) fn from_values(values: [f32; 4]) -> Accumulator {
        Accumulator {
            values,
            _not_send: PhantomData,
        }
    }

    /// Loads the 16 × 8 tile whose element `(row, col)` is
    /// `tile[row * row_stride + col]`. Panics when `row_stride < 8` or the
    /// tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load(tile: &[f32], row_stride: usize) -> Accumulator {
        check_stride("Accumulator::load", row_stride, 8);
        let mut values = [0.0; 4];
        for (r, v) in values.iter_mut().enumerate() {
            let (row, col) = element_at(r);
            *v = tile[row * row_stride + col];
        }
        Accumulator {
            values,
            _not_send: PhantomData,
        }
    }

    /// This lane's four elements, each with its `(row, col)` in the 16 × 8
    /// tile: lane `l` holds rows `l / 4` and `l / 4 + 8`, columns
    /// `2 (l % 4)` and `2 (l % 4) + 1`. The warp's 32 lanes hold each
    /// element once.
    #[inline(always)]
    pub fn elements(&self) -> [(usize, usize, f32); 4] {
        let mut out = [(0, 0, 0.0); 4];
        for (r, e) in out.iter_mut().enumerate() {
            let (row, col) = element_at(r);
            *e = (row, col, self.values[r]);
        }
        out
    }
}

/// The tile coordinates of this lane's accumulator register `r`.
#[inline(always)]
fn element_at(r: usize) -> (usize, usize) {
    let (g, t) = group_and_index();
    (g + 8 * (r >> 1), 2 * t + (r & 1))
}

/// `A B + C` for the warp's tiles (`mma.sync.aligned`, f32 accumulation).
/// Every lane of the warp calls it together, converged: panics (a trap on
/// the GPU, a report on the simulator) where the warp's active mask is not
/// full.
#[track_caller]
#[inline(always)]
pub fn mma<T: Operand>(a: &FragmentA<T>, b: &FragmentB<T>, c: Accumulator) -> Accumulator {
    require_converged();
    Accumulator {
        values: T::mma(a.regs, b.regs, c.values),
        _not_send: PhantomData,
    }
}

/// `acc[i][j] = A_i B_j + acc[i][j]` for every `i < I`, `j < J`: the
/// warp's `I × J` tile products over one K step (a warp tile, as CUTLASS's
/// warp-level MMA), with one convergence check for all of them (the
/// products run in this function, with no branch between them). As
/// [`mma`] otherwise.
#[track_caller]
#[inline(always)]
pub fn mma_grid<T: Operand, const I: usize, const J: usize>(
    a: &[FragmentA<T>; I],
    b: &[FragmentB<T>; J],
    acc: &mut [[Accumulator; J]; I],
) {
    require_converged();
    crate::unroll::full::<I>(|i| {
        crate::unroll::full::<J>(|j| {
            acc[i][j].values = T::mma(a[i].regs, b[j].regs, acc[i][j].values);
        })
    });
}

/// Panics unless every lane of the warp is here, converged (what
/// `mma.sync.aligned` and `ldmatrix.sync.aligned` need).
#[track_caller]
#[inline(always)]
fn require_converged() {
    let active = arch::active_mask();
    if active != u32::MAX {
        not_converged(active)
    }
}

#[track_caller]
#[inline(never)]
#[cold]
fn not_converged(active: u32) -> ! {
    panic!("mma: the warp's active lanes are {active:#010x}: every lane of the warp must call mma and the shared loads together (mma.sync.aligned, ldmatrix.sync.aligned), none in a divergent branch, after an early return, or in a warp of fewer than 32 threads")
}
