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
use crate::half::{bf16, f16};
use core::marker::PhantomData;

/// Makes fragments `!Send` and `!Sync`.
type NotSend = PhantomData<*mut ()>;

mod sealed {
    pub trait Sealed {}
}

/// The operands' type of an `mma.sync` shape: [`Bf16`] and [`F16`]
/// (m16n8k16), [`Tf32`] (m16n8k8). Sealed.
pub trait Operand: sealed::Sealed + Copy {
    /// The type of the tiles' elements in memory.
    type Element: Copy;
    /// The shape's K: A is 16 × K, B is K × 8.
    const K: usize;
    #[doc(hidden)]
    fn pack(pair: [Self::Element; 2]) -> u32;
    #[doc(hidden)]
    fn one(x: Self::Element) -> u32;
    #[doc(hidden)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4];
}

/// The 16-bit operands ([`Bf16`], [`F16`]), which `ldmatrix` loads from
/// shared memory. Sealed.
pub trait SixteenBit: Operand<Element: crate::shared::SharedElement> {}
impl SixteenBit for Bf16 {}
impl SixteenBit for F16 {}

/// bf16 operands, m16n8k16.
#[derive(Clone, Copy, Debug)]
pub struct Bf16;
/// f16 operands, m16n8k16.
#[derive(Clone, Copy, Debug)]
pub struct F16;
/// tf32 operands (from f32 tiles, rounded when loaded), m16n8k8.
#[derive(Clone, Copy, Debug)]
pub struct Tf32;

impl sealed::Sealed for Bf16 {}
impl sealed::Sealed for F16 {}
impl sealed::Sealed for Tf32 {}

impl Operand for Bf16 {
    type Element = bf16;
    const K: usize = 16;
    #[inline(always)]
    fn pack([lo, hi]: [bf16; 2]) -> u32 {
        lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
    }
    #[inline(always)]
    fn one(_: bf16) -> u32 {
        unreachable!("bf16 operands are packed in pairs")
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k16_bf16(a, b, c)
    }
}

impl Operand for F16 {
    type Element = f16;
    const K: usize = 16;
    #[inline(always)]
    fn pack([lo, hi]: [f16; 2]) -> u32 {
        lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
    }
    #[inline(always)]
    fn one(_: f16) -> u32 {
        unreachable!("f16 operands are packed in pairs")
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k16_f16(a, b, c)
    }
}

impl Operand for Tf32 {
    type Element = f32;
    const K: usize = 8;
    #[inline(always)]
    fn pack(_: [f32; 2]) -> u32 {
        unreachable!("tf32 operands are one per register")
    }
    #[inline(always)]
    fn one(x: f32) -> u32 {
        arch::mma::to_tf32(x)
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k8_tf32(a, b, c)
    }
}

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

/// This lane's share of a 16 × K tile `A` (row-major), the first operand
/// of [`mma`].
#[derive(Clone, Copy)]
pub struct FragmentA<T: Operand> {
    regs: [u32; 4],
    _not_send: NotSend,
    _operand: PhantomData<T>,
}

impl<T: Operand> FragmentA<T> {
    /// Loads the 16 × K tile whose element `(row, col)` is
    /// `tile[row * row_stride + col]`. Every lane of the warp loads the same
    /// tile (its own elements of it). Panics when `row_stride < K` or the
    /// tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load(tile: &[T::Element], row_stride: usize) -> FragmentA<T> {
        check_stride("FragmentA::load", row_stride, T::K);
        let (g, t) = group_and_index();
        let mut regs = [0; 4];
        for (r, reg) in regs.iter_mut().enumerate() {
            let row = g + 8 * (r & 1);
            *reg = if T::K == 16 {
                let at = row * row_stride + 2 * t + 8 * (r >> 1);
                T::pack([tile[at], tile[at + 1]])
            } else {
                T::one(tile[row * row_stride + t + 4 * (r >> 1)])
            };
        }
        FragmentA {
            regs,
            _not_send: PhantomData,
            _operand: PhantomData,
        }
    }
}

impl<T: SixteenBit> FragmentA<T> {
    /// [`load`](Self::load) from the block's dynamic shared memory, the
    /// tile starting at slot `offset`, with one `ldmatrix.x4` (every lane
    /// gives a row's address; 16-byte rows): the whole warp calls it
    /// together, as [`mma`]. Panics (before any lane reads) when the tile
    /// does not fit the array, when its rows are not 16-byte aligned (as
    /// `ldmatrix` reads them: `offset` and `row_stride` multiples of 8
    /// elements, in an aligned array), when `row_stride < 16`, or when the
    /// warp is not converged.
    #[track_caller]
    #[inline(always)]
    pub fn load_shared(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        row_stride: usize,
    ) -> FragmentA<T> {
        let tile = shared_tile(
            shared,
            block,
            offset,
            row_stride,
            16,
            "FragmentA::load_shared",
        );
        require_converged();
        #[cfg(target_arch = "nvptx64")]
        {
            let lane = arch::lane_id() as usize;
            let (matrix, row) = (lane / 8, lane % 8);
            let at = (row + 8 * (matrix & 1)) * row_stride + 8 * (matrix >> 1);
            // SAFETY: `at + 8 <= tile.len()` (15 rows of `row_stride` and
            // 16 elements fit: `shared_tile`), in shared memory, 16-byte
            // aligned (the tile's start is, and `row_stride` is a multiple
            // of 8 two-byte elements: `shared_tile` checked both); the warp
            // is converged (checked above).
            let regs = unsafe { arch::mma::ldmatrix_x4(tile.as_ptr().add(at).cast()) };
            FragmentA {
                regs,
                _not_send: PhantomData,
                _operand: PhantomData,
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        FragmentA::load(tile, row_stride)
    }
}

impl<T: SixteenBit> FragmentB<T> {
    /// [`load`](Self::load) from the block's dynamic shared memory (`Bᵀ`
    /// row-major: 8 rows of 16, `col_stride` apart), starting at slot
    /// `offset`, with one `ldmatrix.x2`; as [`FragmentA::load_shared`].
    #[track_caller]
    #[inline(always)]
    pub fn load_shared(
        shared: &crate::shared::DynamicShared<T::Element>,
        block: &crate::shared::Block<crate::shared::Reading>,
        offset: usize,
        col_stride: usize,
    ) -> FragmentB<T> {
        let tile = shared_tile(
            shared,
            block,
            offset,
            col_stride,
            8,
            "FragmentB::load_shared",
        );
        require_converged();
        #[cfg(target_arch = "nvptx64")]
        {
            let lane = arch::lane_id() as usize % 16;
            let (matrix, row) = (lane / 8, lane % 8);
            let at = row * col_stride + 8 * matrix;
            // SAFETY: as in `FragmentA::load_shared`: 7 rows of `col_stride`
            // and 16 elements fit the tile.
            let regs = unsafe { arch::mma::ldmatrix_x2(tile.as_ptr().add(at).cast()) };
            FragmentB {
                regs,
                _not_send: PhantomData,
                _operand: PhantomData,
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        FragmentB::load(tile, col_stride)
    }
}

/// The `rows` × 16 tile of `shared` at `offset`, `stride` apart, checked
/// for `ldmatrix`: in bounds, rows not overlapping, 16-byte rows.
#[track_caller]
#[inline(always)]
fn shared_tile<'r, E: crate::shared::SharedElement>(
    shared: &crate::shared::DynamicShared<E>,
    block: &'r crate::shared::Block<crate::shared::Reading>,
    offset: usize,
    stride: usize,
    rows: usize,
    what: &str,
) -> &'r [E] {
    check_stride(what, stride, 16);
    let all = shared.as_slice(block);
    let end = offset + (rows - 1) * stride + 16;
    if end > all.len() {
        tile_past_the_end(what, end, all.len())
    }
    let tile = &all[offset..end];
    // 2-byte elements: a stride of 8 keeps every row 16-byte aligned.
    if !(tile.as_ptr() as usize).is_multiple_of(16) || !stride.is_multiple_of(8) {
        misaligned(what, offset, stride)
    }
    tile
}

#[track_caller]
#[inline(never)]
#[cold]
fn misaligned(what: &str, offset: usize, stride: usize) -> ! {
    panic!("{what}: the tile at slot {offset} with a stride of {stride} elements has rows that are not 16-byte aligned, as ldmatrix reads them (a stride and an offset of multiples of 8 elements, in a 16-byte aligned array)")
}

#[track_caller]
#[inline(never)]
#[cold]
fn tile_past_the_end(what: &str, end: usize, len: usize) -> ! {
    panic!("{what}: the tile ends at slot {end}, past the shared array's {len}")
}

/// This lane's share of a K × 8 tile `B`, the second operand of [`mma`].
#[derive(Clone, Copy)]
pub struct FragmentB<T: Operand> {
    regs: [u32; 2],
    _not_send: NotSend,
    _operand: PhantomData<T>,
}

impl<T: Operand> FragmentB<T> {
    /// Loads the K × 8 tile whose element `(k, n)` is
    /// `tile[n * col_stride + k]`: B column-major, that is `Bᵀ` row-major
    /// (8 rows of K), as `C = A Bᵀ` with both row-major reads it. Every
    /// lane of the warp loads the same tile. Panics when `col_stride < K`
    /// or the tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load(tile: &[T::Element], col_stride: usize) -> FragmentB<T> {
        check_stride("FragmentB::load", col_stride, T::K);
        let (g, t) = group_and_index();
        let mut regs = [0; 2];
        for (r, reg) in regs.iter_mut().enumerate() {
            *reg = if T::K == 16 {
                let at = g * col_stride + 2 * t + 8 * r;
                T::pack([tile[at], tile[at + 1]])
            } else {
                T::one(tile[g * col_stride + t + 4 * r])
            };
        }
        FragmentB {
            regs,
            _not_send: PhantomData,
            _operand: PhantomData,
        }
    }
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
