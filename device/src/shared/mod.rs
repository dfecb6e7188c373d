//! Shared memory: arrays per block, visible to all of the block's threads,
//! safe to use through a barrier-phase token.
//!
//! # The safe API: a phase token and an ownership rule
//!
//! A kernel that uses shared memory declares a parameter `block: Block`. The
//! `#[kernel]` macro builds this [`Block`] token on the device, one per
//! thread, in the [`Writing`] phase; the launcher does not take it. Arrays
//! come from [`shared_array!`](crate::shared_array) (`shared_array!(f32; 256)`,
//! `shared_array!(f32; 16, 16)`, `shared_array!(f32; 32, 32, padding = 1)`)
//! and, for the dynamic shared memory the launch sizes, from a kernel
//! parameter `smem: DynamicShared<T>`. Every access takes the token:
//!
//! - in [`Writing`] (`&mut Block<Writing>`), a thread writes, and reads, only
//!   the slots it owns: slot `t + k * B` for `k = 0, 1, ...`, where `t` is its
//!   linear index in the block ([`Block::thread_rank`]) and `B` the number of
//!   threads of the block ([`Block::size`]): `set_own`, `own_mut`, `own`, and
//!   `fill`, which writes every owned slot (so all slots, whatever `B`);
//! - in [`Reading`] (`&Block<Reading>`), any thread reads any slot: `get`,
//!   `get_ref`, `as_array`, `window`, and `row` for 2-D arrays; a
//!   [`DeviceAtomic`](crate::DeviceAtomic) slot is updated atomically;
//! - `block.sync()` consumes the token, waits at a barrier, and returns the
//!   token of the other phase.
//!
//! That is an array's default: its *map* ([`BlockStride`](crate::ownership::BlockStride),
//! slots `t + k * B`) and its *write phase* (`Writing`). Both can be chosen
//! where the array is declared:
//!
//! - `shared_array!(T; N, map = M)` gives the array another ownership map
//!   for its write phase ([`ownership`](crate::ownership)): `ByWarp<L>` (lane
//!   `L` of each warp writes its warp's slot, with its
//!   [`WarpLeader`](crate::WarpLeader)), `ByBlock` (the block's leader owns
//!   every slot), `Blocked<K>` (runs of `K` slots), `Halo<R>` (a stencil's
//!   span: `t + R`, and the edges), `Tiles<R, C>` (register tiles of a 2-D
//!   array). Every map's slots are disjoint by construction; the map cannot
//!   name a generic parameter, so one array has one map;
//! - `shared_array!(T; N, written_in = Reading)` makes an array that is
//!   written in the Reading phase and read in the Writing phase: the second
//!   buffer of a double buffer, so that a loop that computes from one buffer
//!   while filling the other needs one barrier a step.
//!   [`DoubleBuffer`] and [`DoubleBuffer2d`] (`shared_array!(T; N,
//!   buffers = 2)` and `shared_array!(T; ROWS, COLS, buffers = 2)`) pair
//!   the two, with an [`Alternating`] token (the phase as a run-time bit,
//!   from [`Block::alternate`]), so that such a loop's body is written
//!   once, as CUDA's `buf ^= 1` loop is; a tree reduction's step `a[t] +=
//!   a[t + s]` is then one barrier, as in CUDA.
//!
//! Out-of-range accesses panic as slice indexing does: a trap on the GPU,
//! and on the simulator a report naming the kernel, the block and the thread.
//!
//! The block collectives take the token too: [`block_reduce`],
//! [`block_inclusive_scan`], [`block_exclusive_scan`], their sums and
//! [`block_broadcast`] take it in the Writing phase and return it in the
//! Reading phase, with one barrier (see [`collective`](crate::collective)).
//!
//! ```no_run
//! use gpu_device::prelude::*;
//!
//! // With `#[kernel]`: each block sums its 256 inputs into `sums[block]`.
//! pub fn block_sums(input: &[f32], mut sums: DisjointSlice<f32>, block: Block) {
//!     let tile = shared_array!(f32; 256);
//!     let mut w = block;
//!     let base = block_idx().x as usize * 256;
//!     tile.fill(&mut w, |s| input.get(base + s).copied().unwrap_or(0.0));
//!     let mut stride = 128;
//!     let mut r = w.sync();
//!     while stride > 0 {
//!         // Reading: slots t and t + stride; then Writing: slot t, its own
//!         // (two barriers a step; a double buffer, `buffers = 2`, needs one:
//!         // see `DoubleBuffer`).
//!         let t = r.thread_rank();
//!         let sum = if t < stride { tile.get(&r, t) + tile.get(&r, t + stride) } else { 0.0 };
//!         let mut w = r.sync();
//!         if t < stride {
//!             tile.set_own(&mut w, 0, sum);
//!         }
//!         r = w.sync();
//!         stride /= 2;
//!     }
//!     // `sums` is written by one thread per block, at the block's index:
//!     // a `DisjointSlice<f32, ByBlock>` and the block's leader do that
//!     // (see `gpu_device::leader`).
//!     let total = tile.get(&r, 0);
//!     # let _ = (total, &mut sums);
//! }
//! ```
//!
//! # Why it is sound
//!
//! The token makes a thread's phase a fact of its type, and that is only
//! sound if every thread's phase is fixed by how many phase barriers it has
//! passed. It is:
//!
//! 1. *One token per thread, at barrier count 0.* Only the entry point makes
//!    a token (its constructor is `unsafe` and hidden); it is not `Clone`,
//!    `Copy`, `Send` or `Sync`, so a thread never holds two and never passes
//!    one to another thread. Every thread starts in `Writing`.
//! 2. *Every phase change is a barrier, and only phase changes use its id.*
//!    `sync` executes `barrier.sync 1` (the barrier that counts threads, defined
//!    in divergent code); [`sync_threads`](crate::sync_threads) uses barrier
//!    0, so it never completes a phase barrier. The `k`-th phase barrier
//!    completes only when every thread of the block has arrived at its own
//!    `k`-th `sync`, whatever the control flow that led there.
//! 3. *Phases alternate.* A thread's phase after `k` barriers is `Writing` for
//!    even `k` and `Reading` for odd `k`; Rust makes both branches of an `if`
//!    produce the same token type. So between barriers `k` and `k + 1` every
//!    thread (that has not exited) is in the same phase.
//! 4. *In an array's write phase, threads touch disjoint slots; in the
//!    other, nobody writes it.* Under the default map slot `t + k * B` has
//!    exactly one owner `t < B`, and every other map's sets are disjoint too
//!    ([`ownership`](crate::ownership)). A thread's references into the
//!    array borrow its token (exclusive in the write phase, shared in the
//!    other), so none survives a `sync`, which moves the token. An array
//!    written in `Reading` is read in `Writing`: between any two consecutive
//!    barriers each array is either written (by its owners) or read, never
//!    both. Atomic updates are race-free by definition. The barrier orders
//!    each phase's accesses before the next phase's.
//! 5. *Element types are `Send + Sync` and valid for every bit pattern*
//!    ([`SharedElement`]): a value crosses threads through the array, and a
//!    slot nobody wrote holds leftover bits. Handle construction hides the
//!    array's contents from the compiler (an empty `asm!` that may write it),
//!    so a read of an unwritten slot is an arbitrary value, not `undef`.
//! 6. *One element type per dynamic array per launch*: the dynamic array is
//!    reached only through the [`DynamicShared<T>`] kernel parameter (at most
//!    one per kernel, built by the entry point), so its `T` is fixed by the
//!    kernel's signature. Its start is aligned for `T` at run time.
//!
//! A thread that exits early leaves the barriers to the others: a GPU may
//! hang waiting for it (never a race); the simulator reports it.
//!
//! # The escape hatch
//!
//! [`SharedArray<T>`] (from `.raw()` on a safe handle, or [`dynamic`]) has
//! `unsafe fn read` and `write` with no phase: for patterns neither the
//! token nor a map can express. The caller
//! orders conflicting accesses with [`sync_threads`](crate::sync_threads) or
//! phase barriers, keeps indices in bounds, and never reads a slot as a type
//! other than the one written.

mod alternating;
mod array;
mod dynamic;
mod element;
mod mapped;
mod phase;
pub mod reduce;
pub mod scan;
pub(crate) mod scratch;

pub use alternating::{Alternating, DoubleBuffer, DoubleBuffer2d};
pub use array::{Shared, Shared2d};
pub use dynamic::DynamicShared;
pub use element::SharedElement;
pub use phase::{Block, Phase, Reading, Writing};
pub use reduce::{block_reduce, block_sum, ReduceElement};
pub use scan::{
    block_broadcast, block_exclusive_scan, block_exclusive_sum, block_inclusive_scan,
    block_inclusive_sum,
};

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

/// A raw array in the block's shared memory: the `unsafe` escape hatch (see
/// the [module documentation](self)).
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    ptr: *mut T,
    len: usize,
    _element: PhantomData<T>,
}

impl<T> SharedArray<T> {
    /// Wraps `len` elements of shared memory at the generic address `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of at least `len` elements of `T` in
    /// shared memory, aligned for `T`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        SharedArray {
            ptr,
            len,
            _element: PhantomData,
        }
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads element `index`.
    ///
    /// # Safety
    /// `index < self.len()`; no other thread writes element `index`
    /// concurrently (between the barriers around this read); the element
    /// holds a `T` (written as a `T`, or `T` is valid for every bit pattern).
    #[inline(always)]
    pub unsafe fn read(&self, index: usize) -> T
    where
        T: Copy,
    {
        crate::race_check::read(self.ptr.wrapping_add(index));
        // SAFETY: upheld by the caller.
        unsafe { self.ptr.add(index).read() }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// `index < self.len()`, and no other thread reads or writes element
    /// `index` concurrently (between the barriers around this write).
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: T) {
        crate::race_check::write(self.ptr.wrapping_add(index));
        // SAFETY: upheld by the caller.
        unsafe { self.ptr.add(index).write(value) }
    }

    /// The generic address of the first element.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// The block's dynamic shared memory as a raw array of `T`: as many whole
/// elements as fit after aligning the start for `T` (the escape hatch; the
/// safe form is a [`DynamicShared<T>`] kernel parameter).
#[inline(always)]
pub fn dynamic<T>() -> SharedArray<T> {
    let (ptr, len) = aligned_dynamic::<T>();
    // SAFETY: `len` elements of `T` fit from the aligned `ptr`.
    unsafe { SharedArray::from_raw_parts(ptr, len) }
}

/// The dynamic shared memory's start aligned up for `T`, and how many `T`
/// fit from there (0 for zero-sized `T`).
#[inline(always)]
pub(crate) fn aligned_dynamic<T>() -> (*mut T, usize) {
    let (base, bytes) = crate::arch::dynamic_shared();
    // The same in every thread of the block: one base address.
    let skip = base.align_offset(core::mem::align_of::<T>()).min(bytes);
    let len = (bytes - skip)
        .checked_div(core::mem::size_of::<T>())
        .unwrap_or(0);
    (base.wrapping_add(skip).cast(), len)
}

/// Hides the contents of the shared array at `ptr` from the compiler: an
/// empty `asm!` that may write it. Shared memory is uninitialised and LLVM
/// gives such globals an `undef` initial value; without this, a read of a
/// slot no thread wrote could fold to `undef`. With it, such a read is the
/// (arbitrary, fixed) bits the hardware holds.
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn opaque_contents<T>(ptr: *mut T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the asm is empty: it changes no register or memory.
    unsafe {
        core::arch::asm!("// shared array at {p}", p = in(reg64) ptr, options(nostack, preserves_flags))
    };
}

/// The storage of one `shared_array!` on the device: a static that
/// `gpu-builder` moves into the shared state space (its symbol starts with
/// `__gpu_shared_`).
///
/// Public for the macro, and safe: it hands out only a raw pointer
/// ([`as_ptr`](Self::as_ptr)), whose every use is `unsafe`. A storage that
/// safe code makes is none of `shared_array!`'s (those are statics inside
/// the macro's expansion, which nothing outside it can name), so no handle
/// the crate's `unsafe` code trusts can reach it.
///
/// Aligned to 16 bytes at least (`.shared .align 16`), as CUDA's
/// `__align__(16)`: the arrays' vector reads (`vector`, `row_vector`) rely on
/// it, and ptxas merges four consecutive 4-byte loads into one `LDS.128`
/// only where it can prove that alignment.
#[doc(hidden)]
#[repr(C, align(16))]
pub struct SharedStorage<T, const LEN: usize>(UnsafeCell<MaybeUninit<[T; LEN]>>);

// SAFETY: the storage is reached only through the handles of this module,
// whose safe accessors follow the phase protocol (module documentation), or
// through `unsafe` raw accesses whose callers order them.
unsafe impl<T, const LEN: usize> Sync for SharedStorage<T, LEN> {}

impl<T, const LEN: usize> SharedStorage<T, LEN> {
    /// Uninitialised storage (shared memory has no initial value).
    pub const fn uninit() -> Self {
        SharedStorage(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// The generic address of the first slot.
    #[inline(always)]
    pub const fn as_ptr(&'static self) -> *mut T {
        self.0.get().cast()
    }
}
