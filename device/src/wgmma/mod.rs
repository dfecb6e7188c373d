//! Hopper's warpgroup matrix multiply-accumulate on tensor cores
//! (`wgmma.mma_async`, sm_90a), the shapes m64nNk16 for N in 64, 128 and
//! 256, bf16 or f16 operands from shared memory, accumulating in f32.
//!
//! A *warpgroup*, four consecutive warps (threads `128 g` to `128 g + 127`
//! of the block), computes `D = A Bᵀ + D` for a 64 × 16 tile `A` and an
//! N × 16 tile `Bᵀ` in shared memory, read through 64-bit matrix
//! descriptors, with D spread over the 128 threads' registers. A is
//! K-major; B is K-major (`Bᵀ` row-major) or MN-major (B row-major, read
//! transposed: `imm-trans-b`). The
//! instruction is asynchronous: its group is committed, and its results may
//! be read, and its shared tiles written again, only once a
//! `wgmma.wait_group` covers it.
//!
//! Here each of those rules is a type:
//!
//! - [`Warpgroup`], the witness of this thread's warpgroup, made once per
//!   thread (the block's size a multiple of 128, checked); every
//!   instruction takes it.
//! - [`KMajorTile`], a tile of the block's dynamic shared memory with its
//!   swizzle ([`Swizzle128B`], [`Swizzle64B`], [`Swizzle32B`]) and its rows
//!   in its type, checked for its size and for the alignment its swizzle
//!   needs when made: the descriptors are built from it, so they always
//!   describe a tile that is there. [`MnMajorTile`], B's columns in
//!   chunks of the swizzle's width, is made and checked the same way;
//!   [`BOperand`] takes either as B, with the accumulator's N, A's swizzle
//!   and A's element type. A tile is read in an [`AsyncReading`]
//!   phase, made by [`sync_for_async`], which fences the block's writes
//!   for the async proxy (`fence.proxy.async`) before its barrier.
//! - [`Accumulator`], this thread's share of D, whose lane layout the API
//!   owns ([`Accumulator::elements`] gives each element with its
//!   coordinates); `!Send`, neither shared nor `DeviceCopy`, so no other
//!   thread, warp or warpgroup can use it.
//! - [`Warpgroup::mma_async`] takes the accumulator by value and gives an
//!   [`InFlight`] product that borrows its tiles (and so the block's
//!   phase): the accumulator comes back only from [`InFlight::wait`]
//!   (`wgmma.wait_group 0`), and the block cannot change phase, and write
//!   the tiles, while the product is in flight.
//! - [`InFlight::carry`] keeps a product of a ring's stage in flight past
//!   the next wait as a [`Carried`] accumulator, which borrows nothing: the
//!   ring (made by `CpAsyncRing::with_async_reads`) records the stage and
//!   refills it only once every thread's products reading it are done
//!   ([`Carried::then`]: the next product, then `wgmma.wait_group 1`).
//!
//! Warpgroup roles: [`Warpgroup::raise_register_limit`] and
//! [`Warpgroup::lower_register_limit`] (`setmaxnreg`), for a producer
//! warpgroup that gives registers to its consumers.
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::half::bf16;
//! use gpu_device::mma::Bf16;
//! use gpu_device::shared::DynamicShared;
//! use gpu_device::wgmma::{self, Accumulator, KMajorTile, Swizzle128B, Warpgroup};
//!
//! type A<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;
//! type B<'r> = KMajorTile<'r, Bf16, Swizzle128B, 64>;
//!
//! // With `#[kernel(arch = "sm_90a")]`, 128 threads and 16 KiB of dynamic
//! // shared memory: `A Bᵀ` for A 64 × 64 and B 64 × 64, both row-major.
//! pub fn product(a: &[bf16], b: &[bf16], smem: DynamicShared<bf16>, block: Block) {
//!     let mut w = block;
//!     smem.fill(&mut w, |s| {
//!         let (tile, s) = (s / A::ELEMENTS, s % A::ELEMENTS);
//!         let (row, k) = A::coordinates(s);
//!         if tile == 0 { a[row * 64 + k] } else { b[row * 64 + k] }
//!     });
//!     let phase = wgmma::sync_for_async(w);
//!     let wg = Warpgroup::of_this_thread();
//!     let (ta, tb) = (A::new(&smem, &phase, 0), B::new(&smem, &phase, A::ELEMENTS));
//!     let d = wg.mma_async(Accumulator::<64>::zero(&wg), &ta, &tb).wait(&wg);
//!     for (row, col, value) in d.elements() {
//!         // ... element (row, col) of the 64 × 64 product
//!         # let _ = (row, col, value);
//!     }
//! }
//! ```
//!
//! # Why it is sound
//!
//! - *The whole warp, together.* Each instruction first checks the warp's
//!   active mask is full (as [`mma`](crate::mma) does): a divergent warp is
//!   a trap on the GPU and a report on the simulator. The four warps of a
//!   warpgroup are not checked against each other: a warpgroup one of
//!   whose warps skips a `wgmma` hangs on the GPU (the simulator computes
//!   each thread's elements alone, and does not notice).
//! - *The tiles.* Made only through [`KMajorTile::new`], in bounds and
//!   aligned; the descriptor is built from the tile and its type, never
//!   from user numbers.
//! - *Asynchronous reads and writes.* The accumulator's registers are out
//!   of reach while an [`InFlight`] holds them; the tiles stay borrowed, and
//!   with them the [`AsyncReading`] phase, until the wait. (ptxas also
//!   serialises a `wgmma` whose registers PTX touches before the wait,
//!   with a warning, rather than computing wrong values.)
//! - *The architecture.* The module is compiled into PTX of sm_90a only:
//!   a kernel using it declares `#[kernel(arch = "sm_90a")]`; the runtime
//!   refuses it on other GPUs.
//!
//! The simulator computes each thread's elements from the shared tiles (the
//! descriptor's layout and swizzle decoded), products exact, summed in f64
//! and rounded once per instruction; the GPU sums in f32 in its own order,
//! so compare with a tolerance of a few f32 ulps of the sum of the
//! products' magnitudes.

use crate::arch;
use crate::mma::SixteenBit;
use crate::thread_owner::Owner;
use core::marker::PhantomData;

mod carried;
mod mn_major;
mod tile;

pub use carried::Carried;
pub use mn_major::MnMajorTile;

pub use tile::{
    sync_for_async, wait_stage, AsyncReading, AsyncStage, KMajorTile, Swizzle, Swizzle128B,
    Swizzle32B, Swizzle64B,
};

/// Makes the per-thread values `!Send` and `!Sync`.
type NotSend = PhantomData<*mut ()>;

/// The threads of a warpgroup.
pub const WARPGROUP_THREADS: usize = 128;

/// The witness of this thread's warpgroup: threads `128 g` to `128 g + 127`
/// of the block (by linear index), four whole warps. Per thread, `!Send`.
pub struct Warpgroup {
    index: u32,
    rank: u32,
    owner: Owner,
    _not_send: NotSend,
}

impl Warpgroup {
    /// This thread's warpgroup. Panics unless the block's size is a
    /// multiple of 128 (every warpgroup whole).
    #[inline(always)]
    #[track_caller]
    pub fn of_this_thread() -> Warpgroup {
        let [dx, dy, dz] = arch::block_dim();
        let threads = dx * dy * dz;
        if !threads.is_multiple_of(WARPGROUP_THREADS as u32) {
            not_whole_warpgroups(threads)
        }
        let [x, y, z] = arch::thread_idx();
        let linear = x + dx * (y + dy * z);
        Warpgroup {
            index: linear / WARPGROUP_THREADS as u32,
            rank: linear % WARPGROUP_THREADS as u32,
            owner: Owner::current(),
            _not_send: PhantomData,
        }
    }

    /// The warpgroup's index in the block.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index as usize
    }

    /// This thread's rank in its warpgroup, 0 to 127.
    #[inline(always)]
    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Checks this is the thread's own witness and its warp is converged.
    #[inline(always)]
    #[track_caller]
    fn check(&self, what: &'static str) {
        self.owner.check(what);
        let active = arch::active_mask();
        if active != u32::MAX {
            not_converged(active)
        }
    }

    /// Issues `D = A Bᵀ + D` (`wgmma.fence`, one `wgmma.mma_async` per
    /// K step of 16, `wgmma.commit_group`): the accumulator is taken until
    /// [`InFlight::wait`], the tiles borrowed until then. `a` is the
    /// 64 × K tile; `b` is B's N columns of K, either the N × K
    /// [`KMajorTile`] of `Bᵀ` or the K × N [`MnMajorTile`] of B (see
    /// [`BOperand`]); both with the swizzle `S` (so the same K). Every
    /// thread of the warpgroup calls it together: panics where the warp's
    /// active mask is not full.
    #[inline(always)]
    #[track_caller]
    pub fn mma_async<'t, T, S, B, const N: usize>(
        &self,
        acc: Accumulator<N>,
        a: &'t KMajorTile<'_, T, S, 64>,
        b: &'t B,
    ) -> InFlight<'t, N>
    where
        T: SixteenBit + Operand16,
        S: Swizzle,
        B: BOperand<T, S, N>,
        M64N<N>: Shape,
    {
        self.check("wgmma::Warpgroup::mma_async");
        acc.owner.check("a wgmma::Accumulator");
        let mut acc = acc;
        arch::wgmma::fence();
        for step in 0..S::BYTES / 32 {
            // SAFETY: `a` has 64 rows and `b` N (their types; checked in
            // bounds and aligned when made), borrowed with their phase for
            // the `InFlight`'s life, which is the only way back to the
            // accumulator's registers (after `wait_group 0`); the warp is
            // converged (checked above).
            unsafe {
                <B as sealed::BTile>::issue::<T, M64N<N>>(
                    &a.k_step(step),
                    &b.k_step(step),
                    &mut acc.regs,
                )
            };
        }
        arch::wgmma::commit_group();
        InFlight {
            acc,
            _tiles: PhantomData,
        }
    }

    /// Raises this warpgroup's register limit to `REGISTERS` per thread
    /// (`setmaxnreg.inc`; 24 to 256, a multiple of 8: checked at compile
    /// time), for a consumer warpgroup taking the registers a producer
    /// gave back. Every thread of the warpgroup calls it together.
    #[inline(always)]
    #[track_caller]
    pub fn raise_register_limit<const REGISTERS: u32>(&self) {
        let () = RegisterLimit::<REGISTERS>::CHECKED;
        self.check("wgmma::Warpgroup::raise_register_limit");
        arch::wgmma::set_max_registers_inc::<REGISTERS>();
    }

    /// Lowers this warpgroup's register limit to `REGISTERS` per thread
    /// (`setmaxnreg.dec`), as [`raise_register_limit`](Self::raise_register_limit).
    #[inline(always)]
    #[track_caller]
    pub fn lower_register_limit<const REGISTERS: u32>(&self) {
        let () = RegisterLimit::<REGISTERS>::CHECKED;
        self.check("wgmma::Warpgroup::lower_register_limit");
        arch::wgmma::set_max_registers_dec::<REGISTERS>();
    }
}

/// `setmaxnreg`'s range, checked at compile time.
struct RegisterLimit<const N: u32>;
impl<const N: u32> RegisterLimit<N> {
    const CHECKED: () = assert!(
        N >= 24 && N <= 256 && N.is_multiple_of(8),
        "setmaxnreg takes 24 to 256 registers, a multiple of 8"
    );
}

mod sealed {
    pub trait Sealed {}

    /// A shape's registers and instruction, out of the public API.
    pub trait Issue {
        /// This thread's registers of D: `N / 2` f32.
        type Registers: Copy + AsRef<[f32]> + AsMut<[f32]>;
        const ZERO: Self::Registers;
        /// One `wgmma.mma_async` of the shape, B of the major `TRANS_B`
        /// says.
        ///
        /// # Safety
        /// As `arch::wgmma`'s functions.
        unsafe fn issue<T: super::Operand16, const TRANS_B: u32>(
            a: &crate::arch::SharedMatrix,
            b: &crate::arch::SharedMatrix,
            d: &mut Self::Registers,
        );
        /// Pins the registers (`arch::wgmma::fence_operand`).
        fn fence(d: &mut Self::Registers);
    }

    /// A B tile's descriptor per K step, and its instruction.
    pub trait BTile {
        /// The operand of K step `step`.
        fn k_step(&self, step: usize) -> crate::arch::SharedMatrix;
        /// One `wgmma.mma_async` of shape `M` with this tile's major
        /// (`imm-trans-b`: 0 K-major, 1 MN-major).
        ///
        /// # Safety
        /// As `arch::wgmma`'s functions.
        unsafe fn issue<T: super::Operand16, M: Issue>(
            a: &crate::arch::SharedMatrix,
            b: &crate::arch::SharedMatrix,
            d: &mut M::Registers,
        );
    }
}

/// A tile `wgmma` reads as its B operand, N columns of K with the element
/// type `T` and the swizzle `S` of its A: a [`KMajorTile`] of N rows (`Bᵀ`
/// row-major, each row one of N's columns) or an [`MnMajorTile`] of N
/// columns (B row-major, read transposed). Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a wgmma B operand of {N} columns with element `{T}` and swizzle `{S}`",
    label = "not B's {N} columns for this product",
    note = "B is a `KMajorTile<'_, {T}, {S}, {N}>` (Bᵀ row-major) or an `MnMajorTile<'_, {T}, {S}, {N}>` (B row-major): its columns are the accumulator's N, its element type and swizzle A's"
)]
pub trait BOperand<T: Operand16, S: Swizzle, const N: usize>: sealed::BTile {}

impl<T: Operand16, S: Swizzle, const N: usize> sealed::BTile for KMajorTile<'_, T, S, N> {
    #[inline(always)]
    fn k_step(&self, step: usize) -> arch::SharedMatrix {
        KMajorTile::k_step(self, step)
    }
    #[inline(always)]
    unsafe fn issue<U: Operand16, M: sealed::Issue>(
        a: &arch::SharedMatrix,
        b: &arch::SharedMatrix,
        d: &mut M::Registers,
    ) {
        // SAFETY: the caller's contract; `b` is this tile's (K-major).
        unsafe { M::issue::<U, 0>(a, b, d) }
    }
}
impl<T: Operand16, S: Swizzle, const N: usize> BOperand<T, S, N> for KMajorTile<'_, T, S, N> {}

impl<T: Operand16, S: Swizzle, const N: usize> sealed::BTile for MnMajorTile<'_, T, S, N> {
    #[inline(always)]
    fn k_step(&self, step: usize) -> arch::SharedMatrix {
        MnMajorTile::k_step(self, step)
    }
    #[inline(always)]
    unsafe fn issue<U: Operand16, M: sealed::Issue>(
        a: &arch::SharedMatrix,
        b: &arch::SharedMatrix,
        d: &mut M::Registers,
    ) {
        // SAFETY: the caller's contract; `b` is this tile's (MN-major).
        unsafe { M::issue::<U, 1>(a, b, d) }
    }
}
impl<T: Operand16, S: Swizzle, const N: usize> BOperand<T, S, N> for MnMajorTile<'_, T, S, N> {}

/// The shapes m64nNk16: [`M64N<64>`], [`M64N<128>`], [`M64N<256>`]. Sealed.
pub trait Shape: sealed::Sealed + sealed::Issue {}

/// The shape m64nNk16.
pub struct M64N<const N: usize>;

/// The 16-bit operand types `wgmma` takes ([`Bf16`](crate::mma::Bf16),
/// [`F16`](crate::mma::F16)). Sealed.
pub trait Operand16: SixteenBit + sealed::Sealed {
    #[doc(hidden)]
    const BF16: bool;
}
impl sealed::Sealed for crate::mma::Bf16 {}
impl sealed::Sealed for crate::mma::F16 {}
impl Operand16 for crate::mma::Bf16 {
    const BF16: bool = true;
}
impl Operand16 for crate::mma::F16 {
    const BF16: bool = false;
}

macro_rules! shapes {
    ($($n:literal: $regs:literal, $bf16:ident, $f16:ident;)*) => {$(
        impl sealed::Sealed for M64N<$n> {}
        impl Shape for M64N<$n> {}
        impl sealed::Issue for M64N<$n> {
            type Registers = [f32; $regs];
            const ZERO: [f32; $regs] = [0.0; $regs];
            #[inline(always)]
            fn fence(d: &mut [f32; $regs]) {
                arch::wgmma::fence_operand(d)
            }
            #[inline(always)]
            unsafe fn issue<T: Operand16, const TRANS_B: u32>(a: &arch::SharedMatrix, b: &arch::SharedMatrix, d: &mut [f32; $regs]) {
                // SAFETY: the caller's contract.
                unsafe {
                    if T::BF16 {
                        arch::wgmma::$bf16::<TRANS_B>(a, b, d, true)
                    } else {
                        arch::wgmma::$f16::<TRANS_B>(a, b, d, true)
                    }
                }
            }
        }
    )*};
}

shapes! {
    64: 32, m64n64k16_bf16, m64n64k16_f16;
    128: 64, m64n128k16_bf16, m64n128k16_f16;
    256: 128, m64n256k16_bf16, m64n256k16_f16;
}

/// This thread's share of a warpgroup's 64 × N f32 tile D: `N / 2`
/// elements, whose places the API owns.
#[derive(Clone, Copy)]
pub struct Accumulator<const N: usize>
where
    M64N<N>: Shape,
{
    regs: <M64N<N> as sealed::Issue>::Registers,
    rank: u32,
    owner: Owner,
    _not_send: NotSend,
}

impl<const N: usize> Accumulator<N>
where
    M64N<N>: Shape,
{
    /// A tile of zeros, this thread's share of it.
    #[inline(always)]
    pub fn zero(warpgroup: &Warpgroup) -> Accumulator<N> {
        Accumulator {
            regs: <M64N<N> as sealed::Issue>::ZERO,
            rank: warpgroup.rank,
            owner: warpgroup.owner,
            _not_send: PhantomData,
        }
    }

    /// This thread's elements, each with its `(row, col)` in the 64 × N
    /// tile: for warp `w` and lane `l` of the warpgroup, element `i` is row
    /// `16 w + l / 4 + 8 ((i % 4) / 2)`, column `8 (i / 4) + 2 (l % 4) +
    /// i % 2`. The warpgroup's 128 threads hold each element once.
    #[inline(always)]
    #[track_caller]
    pub fn elements(&self) -> impl Iterator<Item = (usize, usize, f32)> + '_ {
        self.owner.check("a wgmma::Accumulator");
        let (warp, lane) = (self.rank as usize / 32, self.rank as usize % 32);
        self.regs.as_ref().iter().enumerate().map(move |(i, &v)| {
            let row = 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
            let col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
            (row, col, v)
        })
    }
}

impl<const N: usize> Accumulator<N>
where
    M64N<N>: Shape,
{
    /// The 16 × 8 tile `j` (columns `8 j` to `8 j + 7` of this thread's
    /// warp's 16 rows) as an [`mma::Accumulator`](crate::mma::Accumulator):
    /// a warp's share of D is `N / 8` of them side by side, each in the
    /// `mma.sync` lane layout, so a GEMM's output is written through
    /// [`WarpTiles`](crate::mma::WarpTiles) (the warpgroup's four warps
    /// its 16-row strips). Panics when `j >= N / 8`.
    #[inline(always)]
    #[track_caller]
    pub fn tile(&self, j: usize) -> crate::mma::Accumulator {
        self.owner.check("a wgmma::Accumulator");
        let r = self.regs.as_ref();
        assert!(j < N / 8, "wgmma::Accumulator::tile: tile {j} of {}", N / 8);
        crate::mma::Accumulator::from_values([r[4 * j], r[4 * j + 1], r[4 * j + 2], r[4 * j + 3]])
    }
}

/// A product in flight: its accumulator, out of reach until
/// [`wait`](Self::wait), and the borrow of its tiles.
#[must_use = "a wgmma in flight is read only after InFlight::wait"]
pub struct InFlight<'t, const N: usize>
where
    M64N<N>: Shape,
{
    acc: Accumulator<N>,
    _tiles: PhantomData<&'t ()>,
}

impl<'t, const N: usize> InFlight<'t, N>
where
    M64N<N>: Shape,
{
    /// Issues a further product into the same accumulator (its own group)
    /// without waiting: as [`Warpgroup::mma_async`]; the wait covers both.
    #[inline(always)]
    #[track_caller]
    pub fn then<T: Operand16, S: Swizzle, B: BOperand<T, S, N>>(
        self,
        warpgroup: &Warpgroup,
        a: &'t KMajorTile<'_, T, S, 64>,
        b: &'t B,
    ) -> InFlight<'t, N> {
        warpgroup.mma_async(self.acc, a, b)
    }

    /// Waits for every group of the warpgroup (`wgmma.wait_group 0`) and
    /// gives the accumulator back. Every thread of the warpgroup calls it
    /// together.
    #[inline(always)]
    #[track_caller]
    pub fn wait(self, warpgroup: &Warpgroup) -> Accumulator<N> {
        warpgroup.check("wgmma::InFlight::wait");
        let mut acc = self.acc;
        arch::wgmma::wait_group::<0>();
        <M64N<N> as sealed::Issue>::fence(&mut acc.regs);
        acc
    }
}

#[track_caller]
#[inline(never)]
#[cold]
fn not_whole_warpgroups(threads: u32) -> ! {
    panic!("wgmma::Warpgroup: the block has {threads} threads, not a multiple of 128: a warpgroup is 4 whole warps")
}

#[track_caller]
#[inline(never)]
#[cold]
fn not_converged(active: u32) -> ! {
    panic!("wgmma: the warp's active lanes are {active:#010x}: every thread of the warpgroup must call wgmma together (.sync.aligned), none in a divergent branch or after an early return")
}
