//! Safe shared arrays: a static 1-D array ([`Shared`]), a static row-major
//! 2-D array with an optional row padding ([`Shared2d`]), and the dynamic
//! array ([`DynamicShared`]). Every access takes the phase token.

use super::phase::{Block, Phase, Writing};
use super::{SharedArray, SharedElement};
use crate::ownership::{BlockStride, SharedMap};
use crate::race_check;
use core::marker::PhantomData;

#[cold]
#[inline(never)]
#[track_caller]
fn own_slot_out_of_range(k: usize, rank: usize, size: usize, len: usize) -> ! {
    panic!(
        "own slot {k} of thread {rank} (slot {rank} + {k} * {size}) is out of range for a shared array of {len} slots"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn out_of_range(index: usize, len: usize) -> ! {
    panic!("shared array index out of bounds: the len is {len} but the index is {index}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range_2d(row: usize, col: usize, rows: usize, cols: usize) -> ! {
    panic!("shared array index out of bounds: the shape is {rows} x {cols} but the index is ({row}, {col})")
}

#[cold]
#[inline(never)]
#[track_caller]
fn window_out_of_range(start: usize, width: usize, len: usize) -> ! {
    panic!("shared array window out of bounds: the len is {len} but the window is {start}..{start} + {width}")
}

/// Slot `t + k * B` of `block`, checked against `len`.
#[inline(always)]
#[track_caller]
pub(super) fn own_slot<P: Phase>(block: &Block<P>, k: usize, len: usize) -> usize {
    block.check_owner();
    match block.own_slot(k, len) {
        Some(slot) => slot,
        None => own_slot_out_of_range(k, block.thread_rank(), block.size(), len),
    }
}

/// `(len / b, len % b)`, in 32 bits where both fit (a block's size always
/// does, an array's length in shared memory too): with a block size known
/// only at run time, a 64-bit division costs several times a 32-bit one.
/// With constants, both fold.
#[inline(always)]
fn rounds_and_rest(len: usize, b: usize) -> (usize, usize) {
    match (u32::try_from(len), u32::try_from(b)) {
        (Ok(len), Ok(b)) => ((len / b) as usize, (len % b) as usize),
        _ => (len / b, len % b),
    }
}

/// Calls `store(slot, f(slot))` for each slot `t + k * B < len`, evaluating
/// four values before storing them, so that their loads are in flight
/// together. `f` cannot observe the order: it cannot reach the array while
/// the Writing token is borrowed.
///
/// The slots are counted in rounds: every thread owns one slot in each of
/// the first `len / B` rounds, and threads `t < len % B` one more. With a
/// block of constant shape ([`Block::require_shape`]) and an array of
/// constant length, both are constants and the loops unroll to exactly the
/// thread's slots, with no test left.
#[inline(always)]
#[track_caller]
pub(super) fn for_each_own_slot<T, P: Phase>(
    block: &Block<P>,
    len: usize,
    mut f: impl FnMut(usize) -> T,
    mut store: impl FnMut(usize, T),
) {
    block.check_owner();
    let (b, t) = (block.size(), block.thread_rank());
    if t >= b {
        // Never: a thread's rank is below its block's size. Tested so that
        // every slot below is provably in bounds: `t + k * b < (k + 1) * b
        // <= rounds * b <= len` for `k < rounds`, and `t + rounds * b <
        // rest + rounds * b = len` for `t < rest`.
        return;
    }
    let (rounds, rest) = rounds_and_rest(len, b);
    let mut s = t;
    let mut k = 0;
    while rounds - k >= 4 {
        // Named values, not an array: an array's by-value iterator would
        // stay in local memory.
        let (v0, v1, v2, v3) = (f(s), f(s + b), f(s + 2 * b), f(s + 3 * b));
        store(s, v0);
        store(s + b, v1);
        store(s + 2 * b, v2);
        store(s + 3 * b, v3);
        s += 4 * b;
        k += 4;
    }
    while k < rounds {
        store(s, f(s));
        s += b;
        k += 1;
    }
    if t < rest {
        store(s, f(s));
    }
}

/// The two-dimensional form of [`for_each_own_slot`] for a `rows x cols`
/// array: calls `store(row, col, f(row, col))` for each own slot, whose
/// logical index `row * cols + col` is `t + k * B`. The position is tracked
/// as the slot advances by `B` (`B / cols` rows and `B % cols` columns, with
/// a carry), so no slot index is divided; with a constant block size that
/// is a multiple of `cols`, each further slot is `B / cols` rows down.
///
/// Every position stored has `row * cols + col = t + k * B < rows * cols`
/// (the rounds of `for_each_own_slot`) and `col < cols`, hence `row < rows`.
#[inline(always)]
#[track_caller]
fn for_each_own_position<T, P: Phase>(
    block: &Block<P>,
    rows: usize,
    cols: usize,
    mut f: impl FnMut(usize, usize) -> T,
    mut store: impl FnMut(usize, usize, T),
) {
    block.check_owner();
    let (b, t) = (block.size(), block.thread_rank());
    let len = rows * cols;
    if t >= b || len == 0 {
        // `t >= b` never happens (see `for_each_own_slot`); an empty array
        // has no slot (and `cols` may be 0).
        return;
    }
    let (rounds, rest) = rounds_and_rest(len, b);
    let (row_step, col_step) = (b / cols, b % cols);
    // Invariant: `row * cols + col = t + k * b` and `col < cols`.
    let next = |(row, col): (usize, usize)| {
        let (row, col) = (row + row_step, col + col_step);
        if col >= cols {
            (row + 1, col - cols)
        } else {
            (row, col)
        }
    };
    let mut p0 = (t / cols, t % cols);
    let mut k = 0;
    while rounds - k >= 4 {
        let (p1, p2, p3) = (next(p0), next(next(p0)), next(next(next(p0))));
        let (v0, v1, v2, v3) = (f(p0.0, p0.1), f(p1.0, p1.1), f(p2.0, p2.1), f(p3.0, p3.1));
        store(p0.0, p0.1, v0);
        store(p1.0, p1.1, v1);
        store(p2.0, p2.1, v2);
        store(p3.0, p3.1, v3);
        p0 = next(p3);
        k += 4;
    }
    while k < rounds {
        store(p0.0, p0.1, f(p0.0, p0.1));
        p0 = next(p0);
        k += 1;
    }
    if t < rest {
        store(p0.0, p0.1, f(p0.0, p0.1));
    }
}

/// A block's static shared array of `N` slots of `T`, from
/// [`shared_array!(T; N)`](crate::shared_array). Accesses take the phase
/// token: in [`Writing`], only the slots a thread owns (`t + k * B`); in
/// [`Reading`](super::Reading), any slot, read-only.
///
/// `M` is the array's ownership map in its write phase, `W` the phase in
/// which it is written (see the [module documentation](super)): by default
/// slots `t + k * B` ([`BlockStride`]), written in [`Writing`]. Other maps
/// and phases are chosen where the array is declared:
/// `shared_array!(T; N, map = ByWarp<0>)`, `shared_array!(T; N, written_in =
/// Reading)`.
pub struct Shared<T, const N: usize, M: SharedMap = BlockStride, W: Phase = Writing> {
    pub(super) ptr: *mut T,
    _map: PhantomData<(M, W)>,
}

impl<T, const N: usize, M: SharedMap, W: Phase> Clone for Shared<T, N, M, W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize, M: SharedMap, W: Phase> Copy for Shared<T, N, M, W> {}

/// A block's static `ROWS x COLS` shared array, row-major with rows `STRIDE`
/// slots apart (`STRIDE > COLS` pads each row, as a 32 x 33 tile avoids bank
/// conflicts in a transpose), from
/// [`shared_array!(T; ROWS, COLS)`](crate::shared_array) or
/// `shared_array!(T; ROWS, COLS, padding = P)`. Ownership is by logical index:
/// thread `t` owns the slots `(row, col)` with `row * COLS + col = t + k * B`,
/// so a 16 x 16 tile in a 16 x 16 block, or a 32 x 32 tile in a 32 x 8 block
/// (four slots each, rows `ty + 8k`), is written in the natural pattern.
///
/// `M` and `W` are its ownership map and write phase, as for [`Shared`]:
/// by default the logical index rule above ([`BlockStride`]), written in
/// [`Writing`]; a register-tile map
/// ([`Tiles`](crate::ownership::Tiles)) is declared with
/// `shared_array!(T; ROWS, COLS, map = Tiles<R, C>)`.
pub struct Shared2d<
    T,
    const ROWS: usize,
    const COLS: usize,
    const STRIDE: usize,
    M: SharedMap = BlockStride,
    W: Phase = Writing,
> {
    pub(super) ptr: *mut T,
    _map: PhantomData<(M, W)>,
}

impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, M: SharedMap, W: Phase> Clone
    for Shared2d<T, ROWS, COLS, STRIDE, M, W>
{
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const ROWS: usize, const COLS: usize, const STRIDE: usize, M: SharedMap, W: Phase> Copy
    for Shared2d<T, ROWS, COLS, STRIDE, M, W>
{
}

impl<T: SharedElement, const N: usize, M: SharedMap, W: Phase> Shared<T, N, M, W> {
    /// Wraps the static array at `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of `N` slots of `T` in the block's shared
    /// memory, aligned for `T`, reserved for this handle (one
    /// `shared_array!` invocation).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        super::opaque_contents(ptr);
        Shared {
            ptr,
            _map: PhantomData,
        }
    }

    /// The number of slots, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether the array has no slots.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

impl<T: SharedElement, const N: usize, W: Phase> Shared<T, N, BlockStride, W> {
    /// Writes this thread's `k`-th owned slot, `t + k * B`. Panics (a trap on
    /// the GPU) if that slot is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_own(&self, block: &mut Block<W>, k: usize, value: T) {
        *self.own_mut(block, k) = value;
    }

    /// This thread's `k`-th owned slot, to write or read (`&mut T`, so a
    /// [`DeviceAtomic`](crate::DeviceAtomic) slot can be reset). Panics if it
    /// is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own_mut<'w>(&self, block: &'w mut Block<W>, k: usize) -> &'w mut T {
        let slot = own_slot(block, k, N);
        // SAFETY: in bounds; in the array's write phase `W` only thread `t` touches slot
        // `t + k * B` (no other thread owns it), and the token's exclusive
        // borrow stops this thread from holding two references into the array.
        let element = unsafe { self.ptr.add(slot) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { &mut *element }
    }

    /// Reads this thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own<'w>(&self, block: &'w Block<W>, k: usize) -> &'w T {
        let slot = own_slot(block, k, N);
        // SAFETY: as in `own_mut`; the token's shared borrow excludes this
        // thread's writes while the reference lives.
        let element = unsafe { self.ptr.add(slot) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// Writes every slot this thread owns: slot `s` gets `f(s)`. With `B`
    /// threads, thread `t` fills `t, t + B, t + 2B, ...`: all `N` slots are
    /// written whatever the block's size.
    #[inline(always)]
    #[track_caller]
    pub fn fill(&self, block: &mut Block<W>, f: impl FnMut(usize) -> T) {
        let ptr = self.ptr;
        for_each_own_slot(block, N, f, |slot, value| {
            // SAFETY: `slot < N` is one of this thread's own slots (see `own_mut`).
            let element = unsafe { ptr.add(slot) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { *element = value }
        });
    }
}

impl<T: SharedElement, const N: usize, M: SharedMap, W: Phase> Shared<T, N, M, W> {
    /// Slot `index`, shared with the other readers. Panics if `index >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn get_ref<'r>(&self, block: &'r Block<W::Next>, index: usize) -> &'r T {
        block.check_owner();
        if index >= N {
            out_of_range(index, N)
        }
        // SAFETY: `index < N`; read-only as in `as_array`.
        let element = unsafe { self.ptr.add(index) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// The whole array, shared with the other readers.
    #[inline(always)]
    #[track_caller]
    pub fn as_array<'r>(&self, block: &'r Block<W::Next>) -> &'r [T; N] {
        block.check_owner();
        if !T::ATOMIC_CELL {
            race_check::read_range(self.ptr, N);
        }
        // SAFETY: in the phase after the array's write phase `W` no thread
        // writes the array (non-atomic writes need a token of phase `W`), and
        // this thread cannot reach the next phase while the token is borrowed.
        unsafe { &*self.ptr.cast::<[T; N]>() }
    }

    /// The `WIDTH` slots from `start`, as an array (one bounds check for the
    /// window, none for constant indices into it). Panics if the window
    /// does not fit.
    #[inline(always)]
    #[track_caller]
    pub fn window<'r, const WIDTH: usize>(
        &self,
        block: &'r Block<W::Next>,
        start: usize,
    ) -> &'r [T; WIDTH] {
        block.check_owner();
        if start > N || N - start < WIDTH {
            window_out_of_range(start, WIDTH, N)
        }
        // SAFETY: `start + WIDTH <= N`; read-only as in `as_array`.
        let window = unsafe { self.ptr.add(start) };
        if !T::ATOMIC_CELL {
            race_check::read_range(window, WIDTH);
        }
        // SAFETY: as above.
        unsafe { &*window.cast::<[T; WIDTH]>() }
    }

    /// The raw array, for patterns the phase token cannot express: every
    /// access through it is `unsafe`.
    #[inline(always)]
    pub fn raw(&self) -> SharedArray<T> {
        // SAFETY: the same `N` slots of shared memory.
        unsafe { SharedArray::from_raw_parts(self.ptr, N) }
    }
}

impl<T: SharedElement + Copy, const N: usize, M: SharedMap, W: Phase> Shared<T, N, M, W> {
    /// Reads slot `index`. Panics (a trap on the GPU) if `index >= N`.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, block: &Block<W::Next>, index: usize) -> T {
        *self.get_ref(block, index)
    }
}

impl<
        T: SharedElement,
        const ROWS: usize,
        const COLS: usize,
        const STRIDE: usize,
        M: SharedMap,
        W: Phase,
    > Shared2d<T, ROWS, COLS, STRIDE, M, W>
{
    /// The number of logical slots, `ROWS * COLS`.
    pub(crate) const SLOTS: usize = ROWS * COLS;

    /// Wraps the static array at `ptr`.
    ///
    /// # Safety
    /// `ptr` is the generic address of `ROWS * STRIDE` slots of `T` in the
    /// block's shared memory, aligned for `T`, reserved for this handle, and
    /// `STRIDE >= COLS`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        super::opaque_contents(ptr);
        Shared2d {
            ptr,
            _map: PhantomData,
        }
    }

    /// The shape `(ROWS, COLS)`.
    #[inline(always)]
    pub const fn shape(&self) -> (usize, usize) {
        (ROWS, COLS)
    }
}

impl<T: SharedElement, const ROWS: usize, const COLS: usize, const STRIDE: usize, W: Phase>
    Shared2d<T, ROWS, COLS, STRIDE, BlockStride, W>
{
    /// The position `(row, col)` of this thread's `k`-th owned slot (logical
    /// index `t + k * B`), or `None` past the end.
    #[inline(always)]
    pub fn own_position(&self, block: &Block<W>, k: usize) -> Option<(usize, usize)> {
        let slot = block.own_slot(k, Self::SLOTS)?;
        Some((slot / COLS, slot % COLS))
    }

    /// Writes this thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_own(&self, block: &mut Block<W>, k: usize, value: T) {
        *self.own_mut(block, k) = value;
    }

    /// This thread's `k`-th owned slot, to write or read. Panics if it is past
    /// the end.
    #[inline(always)]
    #[track_caller]
    pub fn own_mut<'w>(&self, block: &'w mut Block<W>, k: usize) -> &'w mut T {
        let slot = own_slot(block, k, Self::SLOTS);
        // SAFETY: the logical slot is in bounds, so its physical offset
        // `row * STRIDE + col < ROWS * STRIDE`; only this thread owns it in
        // the write phase (see `Shared::own_mut`).
        let element = unsafe { self.ptr.add(slot / COLS * STRIDE + slot % COLS) };
        race_check::write(element);
        // SAFETY: as above.
        unsafe { &mut *element }
    }

    /// Reads this thread's `k`-th owned slot. Panics if it is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn own<'w>(&self, block: &'w Block<W>, k: usize) -> &'w T {
        let slot = own_slot(block, k, Self::SLOTS);
        // SAFETY: as in `own_mut`, read-only.
        let element = unsafe { self.ptr.add(slot / COLS * STRIDE + slot % COLS) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// Writes every slot this thread owns: `(row, col)` gets `f(row, col)`.
    /// All `ROWS * COLS` slots are written whatever the block's size.
    #[inline(always)]
    #[track_caller]
    pub fn fill(&self, block: &mut Block<W>, f: impl FnMut(usize, usize) -> T) {
        let ptr = self.ptr;
        for_each_own_position(block, ROWS, COLS, f, |row, col, value| {
            // SAFETY: `(row, col)` is an own slot in bounds (`row < ROWS`,
            // `col < COLS <= STRIDE`, see `for_each_own_position`), so the
            // offset is below `ROWS * STRIDE`; only this thread owns it.
            let element = unsafe { ptr.add(row * STRIDE + col) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { *element = value }
        });
    }
}

impl<
        T: SharedElement,
        const ROWS: usize,
        const COLS: usize,
        const STRIDE: usize,
        M: SharedMap,
        W: Phase,
    > Shared2d<T, ROWS, COLS, STRIDE, M, W>
{
    /// Row `row`, shared with the other readers. Panics if `row >= ROWS`.
    #[inline(always)]
    #[track_caller]
    pub fn row<'r>(&self, block: &'r Block<W::Next>, row: usize) -> &'r [T; COLS] {
        block.check_owner();
        if row >= ROWS {
            out_of_range_2d(row, 0, ROWS, COLS)
        }
        // SAFETY: `row < ROWS` and `COLS <= STRIDE`: the row lies in the
        // array; read-only as in `Shared::as_array`.
        let start = unsafe { self.ptr.add(row * STRIDE) };
        if !T::ATOMIC_CELL {
            race_check::read_range(start, COLS);
        }
        // SAFETY: as above.
        unsafe { &*start.cast::<[T; COLS]>() }
    }

    /// Slot `(row, col)`, shared with the other readers. Panics outside the
    /// shape (each axis is checked).
    #[inline(always)]
    #[track_caller]
    pub fn get_ref<'r>(&self, block: &'r Block<W::Next>, row: usize, col: usize) -> &'r T {
        block.check_owner();
        if row >= ROWS || col >= COLS {
            out_of_range_2d(row, col, ROWS, COLS)
        }
        // SAFETY: `row < ROWS` and `col < COLS <= STRIDE`; read-only as in
        // `Shared::as_array`.
        let element = unsafe { self.ptr.add(row * STRIDE + col) };
        if !T::ATOMIC_CELL {
            race_check::read(element);
        }
        // SAFETY: as above.
        unsafe { &*element }
    }

    /// The raw array (`ROWS * STRIDE` slots, padding included): every access
    /// through it is `unsafe`.
    #[inline(always)]
    pub fn raw(&self) -> SharedArray<T> {
        // SAFETY: the same slots of shared memory.
        unsafe { SharedArray::from_raw_parts(self.ptr, ROWS * STRIDE) }
    }
}

impl<
        T: SharedElement + Copy,
        const ROWS: usize,
        const COLS: usize,
        const STRIDE: usize,
        M: SharedMap,
        W: Phase,
    > Shared2d<T, ROWS, COLS, STRIDE, M, W>
{
    /// Reads slot `(row, col)`. Panics outside the shape.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, block: &Block<W::Next>, row: usize, col: usize) -> T {
        *self.get_ref(block, row, col)
    }
}
