//! Runs of consecutive elements moved as 16-byte vectors (`ld.global.v4`,
//! `st.global.v4`: SASS `LDG.E.128`, `STG.E.128`) where the address allows,
//! element by element where it does not: CUDA's `float4` loads, without the
//! cast whose alignment the programmer vouches for.
//!
//! Two forms:
//!
//! - [`vectors`] views a slice that starts 16-byte aligned as whole
//!   [`Vector`]s, tested once: each element of the view is one vector load.
//!   This is the form for loops (a row read in `float4`s);
//! - [`read_run`] and [`read_run_or`] test each run where it is read (it
//!   lies inside the slice, its address is a multiple of 16) and read it
//!   element by element otherwise: for one-off loads;
//! - [`read_run_unaligned`] (and [`read_runs_unaligned`], several runs' loads
//!   in flight together) reads a 16-byte run at any element offset as
//!   the one or two aligned vectors that cover it, shifted together: for
//!   runs that are never aligned (the rows of a matrix whose row length is
//!   odd).
//!
//! Stores go through the outputs' own methods (`set_run`), which test the
//! output's alignment the same way. When a test fails, the same values move
//! one element at a time, so a result never depends on alignment.
//!
//! ```no_run
//! use gpu_device::vector::{read_run_or, vectors};
//!
//! // Four consecutive floats from `x`, 0.0 past its end: one 16-byte load
//! // where `x[4 * q..]` is 16-byte aligned and inside `x`.
//! fn quad(x: &[f32], q: usize) -> [f32; 4] {
//!     read_run_or(x, 4 * q, 0.0)
//! }
//!
//! // The sum of a row, one 16-byte load per four floats when it is aligned.
//! fn row_sum(row: &[f32]) -> f32 {
//!     match vectors::<f32, 4>(row) {
//!         Some(quads) if quads.len() * 4 == row.len() => {
//!             quads.iter().map(|q| q.0.iter().sum::<f32>()).sum()
//!         }
//!         _ => row.iter().sum(),
//!     }
//! }
//! ```

/// Element types that move in 16-byte vectors: integers of 1 to 8 bytes,
/// floats, and the half-precision [`bf16`] and
/// [`f16`](struct@crate::half::f16). Each is valid for every bit pattern
/// and has no padding (the loads and stores here rely on it: a vector's
/// bytes are its elements' bytes). Sealed.
pub trait VectorElement: Copy + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! vector_element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl VectorElement for $t {}
    )*};
}
vector_element!(u8, i8, u16, i16, u32, i32, f32, u64, i64, f64);
// `#[repr(transparent)]` over a `u16` (see `crate::half`): every bit
// pattern is a value, no padding.
vector_element!(bf16, f16);

use crate::half::{bf16, f16};

/// `N` consecutive elements aligned to 16 bytes, `N * size_of::<T>()` a
/// multiple of 16: reading one is one 16-byte load per 16 bytes. From
/// [`vectors`].
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vector<T, const N: usize>(pub [T; N]);

/// The whole vectors of `slice` (its first `len / N * N` elements) as
/// [`Vector`]s, when `slice` starts 16-byte aligned; `None` otherwise.
/// `N` elements must be a multiple of 16 bytes (a compile error otherwise).
#[inline(always)]
pub fn vectors<T: VectorElement, const N: usize>(slice: &[T]) -> Option<&[Vector<T, N>]> {
    const {
        assert!(
            N >= 1 && core::mem::size_of::<[T; N]>().is_multiple_of(16),
            "a vector is a multiple of 16 bytes: 4 f32 or u32, 2 f64, ..."
        )
    };
    (slice.as_ptr() as usize)
        .is_multiple_of(16)
        .then(|| whole_vectors(slice))
}

/// The whole vectors of `slice` when it starts 16-byte aligned and `N`
/// elements are a multiple of 16 bytes, else no vector: an empty view at
/// the slice's address rounded down to 16 (not `None`, and no other
/// pointer: the view's address stays derived from the slice's alone, so
/// that the compiler still sees loads through a read-only kernel input,
/// which it makes `ld.global.nc`).
#[inline(always)]
fn whole_vectors<T: VectorElement, const N: usize>(slice: &[T]) -> &[Vector<T, N>] {
    let ptr = slice.as_ptr();
    let usable = N != 0
        && core::mem::size_of::<[T; N]>().is_multiple_of(16)
        && (ptr as usize).is_multiple_of(16);
    let count = if usable { slice.len() / N } else { 0 };
    // The slice's address when usable (already a multiple of 16).
    let base = ptr.map_addr(|a| a & !15).cast::<Vector<T, N>>();
    // SAFETY: `base` is 16-byte aligned. With `count > 0` it is the slice's
    // own address and `Vector<T, N>` is `repr(C)` over `[T; N]` with no
    // padding (its size is a multiple of 16, its alignment): the first
    // `count` vectors are the slice's first `count * N` elements, of a type
    // valid for every bit pattern of them (plain integers and floats),
    // borrowed as the slice is. With `count == 0` the view is empty.
    unsafe { core::slice::from_raw_parts(base, count) }
}

/// The `N` elements of `slice` from `start`, or `None` when they do not all
/// lie inside it. One 16-byte load per 16 bytes where the slice starts
/// 16-byte aligned and `start` is a multiple of `N` (`N` elements a
/// multiple of 16 bytes): the run is then one of [`vectors`]' vectors.
#[inline(always)]
pub fn read_run<T: VectorElement, const N: usize>(slice: &[T], start: usize) -> Option<[T; N]> {
    if start > slice.len() || slice.len() - start < N {
        return None;
    }
    let ptr = slice.as_ptr().wrapping_add(start);
    if core::mem::size_of::<[T; N]>().is_multiple_of(16) && (ptr as usize).is_multiple_of(16) {
        // SAFETY: `start + N <= len`: the run is inside the slice, read-only
        // as it is; aligned (tested), whole vectors.
        return Some(unsafe { load_vectors(ptr) });
    }
    // SAFETY: `start + N <= len`: the run is inside the slice.
    Some(unsafe { load_elements(ptr) })
}

/// The `N` elements of `slice` from `start`, with `fill` for those past its
/// end: vector loads when the whole run is inside and aligned, as
/// [`read_run`], else element by element (CUDA's guarded `float4` load).
#[inline(always)]
pub fn read_run_or<T: VectorElement, const N: usize>(slice: &[T], start: usize, fill: T) -> [T; N] {
    match read_run(slice, start) {
        Some(run) => run,
        None => {
            let mut run = [fill; N];
            // Constant indices (unrolled): the run stays in registers.
            crate::unroll::full::<N>(|i| {
                if let Some(v) = start.checked_add(i).and_then(|j| slice.get(j)) {
                    run[i] = *v;
                }
            });
            run
        }
    }
}

/// The `N` elements of `slice` from `start`, at any `start` (no alignment
/// needed), or `None` when they do not all lie inside it. `N` elements are
/// exactly 16 bytes: 16 `u8`, 8 `u16` or [`bf16`], 4 `f32`, 2 `f64` (a
/// compile error otherwise).
///
/// The run is read as the 16-byte aligned vectors that cover it
/// (`ld.global.v4`, `LDG.E.128`; `ld.global.nc.v4` from a kernel's
/// read-only input): one when its address is a multiple of 16, else the two
/// it straddles, their bytes shifted together (funnel shifts of 32-bit
/// words), when both lie wholly inside `slice`. Near the slice's ends, where
/// the lower vector would start before `slice` or the upper one end past
/// it, the run is read element by element: never a byte outside `slice`.
/// The values are the same either way, on the GPU and on the simulator.
///
/// Threads that read consecutive runs share their vectors: a warp's second
/// load reads what its first brought into the first-level cache, so the
/// memory behind it is read about once.
///
/// ```no_run
/// use gpu_device::half::bf16;
/// use gpu_device::vector::read_run_unaligned;
///
/// // The 8 elements of row `r` from column `c` of a `rows x cols`
/// // row-major matrix whose rows (`cols` odd) are never 16-byte aligned;
/// // `None` where the run leaves the row or the matrix.
/// fn eight(src: &[bf16], cols: usize, r: usize, c: usize) -> Option<[bf16; 8]> {
///     if c.checked_add(8)? > cols {
///         return None;
///     }
///     read_run_unaligned(src, r.checked_mul(cols)?.checked_add(c)?)
/// }
/// ```
#[inline(always)]
pub fn read_run_unaligned<T: VectorElement, const N: usize>(
    slice: &[T],
    start: usize,
) -> Option<[T; N]> {
    let [run] = read_runs_unaligned::<T, N, 1>(slice, [start]);
    run
}

/// [`read_run_unaligned`] of `K` runs, their vector loads all issued before
/// any is used: a thread that reads several runs (rows of a tile) has `K`
/// of them in flight, not one after the other. The same values as `K`
/// calls of [`read_run_unaligned`].
///
/// ```no_run
/// use gpu_device::half::bf16;
/// use gpu_device::vector::read_runs_unaligned;
///
/// // Column `c` and the 7 after it of rows `r` and `r + 1`, both loads
/// // in flight together.
/// fn two_rows(src: &[bf16], cols: usize, r: usize, c: usize) -> [Option<[bf16; 8]>; 2] {
///     let at = r * cols + c;
///     read_runs_unaligned(src, [at, at + cols])
/// }
/// ```
#[inline(always)]
pub fn read_runs_unaligned<T: VectorElement, const N: usize, const K: usize>(
    slice: &[T],
    starts: [usize; K],
) -> [Option<[T; N]>; K] {
    const {
        assert!(
            N >= 1 && core::mem::size_of::<[T; N]>() == 16,
            "a run of `read_run_unaligned` is 16 bytes: 16 u8, 8 u16 or bf16, 4 f32, 2 f64"
        )
    };
    let size = core::mem::size_of::<T>();
    let bytes = core::mem::size_of_val(slice);
    let base = slice.as_ptr().cast::<u8>();
    // Per run: how it is read, its address modulo 16, and its aligned
    // vectors. First every load, then every use.
    let mut how = [Read::Outside; K];
    let mut skews = [0usize; K];
    let mut lows = [[0u32; 4]; K];
    let mut highs = [[0u32; 4]; K];
    crate::unroll::full::<K>(|k| {
        let start = starts[k];
        let inside = start <= slice.len() && slice.len() - start >= N;
        // Byte offsets in the slice: when `inside`, `start + N <= len` and a
        // slice spans at most `isize::MAX` bytes, so the product does not
        // wrap, nor does an address inside the slice. (Wrapping arithmetic:
        // outside, the values are computed and not used.)
        let first = start.wrapping_mul(size);
        let skew = base.addr().wrapping_add(first) & 15;
        // The aligned vector at or below the run starts `skew` bytes before
        // it; with `skew > 0` the run also reaches into the next one. Both
        // are inside the slice when the lower starts at or after its first
        // byte and the upper ends at or before its last. (`shift_bytes`
        // assumes little-endian words, as the GPU and the simulator's hosts
        // are; elsewhere, element by element.)
        let vectors = inside
            && (skew == 0
                || (cfg!(target_endian = "little")
                    && first >= skew
                    && bytes - (first - skew) >= 32));
        // Derived from the slice's pointer (not an address made up): the
        // loads stay loads of the kernel input (`ld.global.nc`).
        let lower = base
            .wrapping_add(first.wrapping_sub(skew))
            .cast::<[u32; 4]>();
        // Each value written whole, whichever branch (no array element
        // written in one branch only: the arrays stay in registers).
        lows[k] = if vectors {
            // SAFETY: `lower` is 16-byte aligned (the run's address less
            // its remainder modulo 16). With `skew == 0` it is the run,
            // inside the slice (`start + N <= len`, 16 bytes); otherwise its
            // 32 bytes, bytes `first - skew .. first - skew + 32` of the
            // slice, are inside it (`vectors`). Read-only, as the slice is.
            unsafe { load16(lower) }
        } else {
            [0; 4]
        };
        highs[k] = if vectors && skew != 0 {
            // SAFETY: as above: the second of the two vectors inside.
            unsafe { load16(lower.add(1)) }
        } else {
            [0; 4]
        };
        skews[k] = skew;
        how[k] = match (inside, vectors) {
            (false, _) => Read::Outside,
            (true, true) => Read::Vectors,
            (true, false) => Read::Elements,
        };
    });
    let mut runs = [None; K];
    crate::unroll::full::<K>(|k| {
        runs[k] = match how[k] {
            Read::Outside => None,
            Read::Vectors => {
                // `skew == 0`: the lower vector as it is.
                let words = shift_bytes(lows[k], highs[k], skews[k]);
                // SAFETY: `[T; N]` is 16 bytes (the assertion above), as
                // `words` is, and every bit pattern is a `T`
                // (`VectorElement`: plain numbers and half floats, no
                // padding).
                Some(unsafe { core::mem::transmute_copy::<[u32; 4], [T; N]>(&words) })
            }
            // SAFETY: `start + N <= len`: the run is inside the slice.
            Read::Elements => Some(unsafe { load_elements(slice.as_ptr().add(starts[k])) }),
        }
    });
    runs
}

/// How [`read_runs_unaligned`] reads a run.
#[derive(Clone, Copy)]
enum Read {
    /// Not inside the slice: `None`.
    Outside,
    /// Its one or two aligned vectors, inside the slice.
    Vectors,
    /// Element by element: inside, but its vectors are not.
    Elements,
}

/// The 16 bytes from byte `skew` (0 to 15) of the 32 bytes `lo` then `hi`
/// (little-endian words): the whole words by two selects (no array indexed
/// by a variable, which would put the words in local memory), the rest by
/// one funnel shift a word (`SHF.R`).
#[inline(always)]
fn shift_bytes(lo: [u32; 4], hi: [u32; 4], skew: usize) -> [u32; 4] {
    let [a, b, c, d] = lo;
    let [e, f, g, h] = hi;
    let w = if skew & 8 != 0 {
        [c, d, e, f, g, h]
    } else {
        [a, b, c, d, e, f]
    };
    let w = if skew & 4 != 0 {
        [w[1], w[2], w[3], w[4], w[5]]
    } else {
        [w[0], w[1], w[2], w[3], w[4]]
    };
    let bits = ((skew & 3) * 8) as u32;
    let funnel = |low: u32, high: u32| ((u64::from(high) << 32 | u64::from(low)) >> bits) as u32;
    [
        funnel(w[0], w[1]),
        funnel(w[1], w[2]),
        funnel(w[2], w[3]),
        funnel(w[3], w[4]),
    ]
}

/// The `N` elements at `ptr`, read as 16-byte vector loads (one LLVM
/// `<4 x i32>` load of alignment 16 each, see `load16`).
///
/// # Safety
/// `ptr` is 16-byte aligned and valid for reads of `N` elements, and `N *
/// size_of::<T>()` is a multiple of 16.
#[inline(always)]
pub(crate) unsafe fn load_vectors<T: VectorElement, const N: usize>(ptr: *const T) -> [T; N] {
    let chunks = core::mem::size_of::<[T; N]>() / 16;
    let mut out = core::mem::MaybeUninit::<[T; N]>::uninit();
    let words = out.as_mut_ptr().cast::<[u32; 4]>();
    crate::unroll::full::<N>(|c| {
        if c < chunks {
            // SAFETY: chunk `c < chunks` lies inside the caller's aligned
            // source and inside `out`.
            unsafe {
                words
                    .add(c)
                    .write_unaligned(load16(ptr.cast::<[u32; 4]>().add(c)))
            };
        }
    });
    // SAFETY: every chunk was written (`chunks * 16` bytes: all of `out`),
    // and every bit pattern is a `T` (plain integers and floats).
    unsafe { out.assume_init() }
}

/// The `N` elements at `ptr`, one load each, kept apart from the vector
/// loads of an aligned path (volatile loads): where both paths read the same
/// addresses, ptxas otherwise merges them into the scalar loads, and the
/// aligned path loses its 16-byte loads (`gpu_ops::scan`'s runs did). For
/// the unaligned path only, which aligned data never takes.
///
/// # Safety
/// `ptr` is valid for reads of `N` elements, which nothing writes meanwhile.
#[inline(always)]
pub(crate) unsafe fn load_elements<T: VectorElement, const N: usize>(ptr: *const T) -> [T; N] {
    let mut run = core::mem::MaybeUninit::<[T; N]>::uninit();
    let out = run.as_mut_ptr().cast::<T>();
    crate::unroll::full::<N>(|i| {
        // SAFETY: element `i < N` of the caller's run, and of `run`.
        unsafe { out.add(i).write(ptr.add(i).read_volatile()) }
    });
    // SAFETY: all `N` elements were written.
    unsafe { run.assume_init() }
}

/// One 16-byte load: one LLVM vector load of 16-byte alignment, which the
/// NVPTX backend emits as `ld.shared.v4` for shared memory and as
/// `ld.global.nc.v4` for a kernel's read-only input (`LDG.E.128.CONSTANT`,
/// CUDA's `__ldg` of a `float4`; see `gpu_builder::kernel_inputs`), else
/// `ld.v4`.
///
/// # Safety
/// `p` is 16-byte aligned and valid for reads of 16 bytes.
#[inline(always)]
unsafe fn load16(p: *const [u32; 4]) -> [u32; 4] {
    // SAFETY: the caller's guarantee; `Simd<u32, 4>` is 16 bytes of
    // alignment 16.
    unsafe { p.cast::<core::simd::Simd<u32, 4>>().read().to_array() }
}

/// Writes `values` at `ptr` as 16-byte vector stores (`st.v4.b32`): one
/// LLVM vector store each, which no pass splits or merges with the scalar
/// stores of a fallback path.
///
/// # Safety
/// `ptr` is 16-byte aligned and valid for writes of `N` elements, and
/// `N * size_of::<T>()` is a multiple of 16.
#[inline(always)]
pub(crate) unsafe fn store_vectors<T: VectorElement, const N: usize>(ptr: *mut T, values: [T; N]) {
    use core::simd::Simd;
    let chunks = core::mem::size_of::<[T; N]>() / 16;
    let words = values.as_ptr().cast::<[u32; 4]>();
    crate::unroll::full::<N>(|c| {
        if c < chunks {
            // SAFETY: chunk `c < chunks` lies inside `values` (plain 4- or
            // 8-byte numbers, no padding: every 16 bytes are four `u32`
            // words) and inside the caller's aligned destination.
            unsafe {
                let chunk = words.add(c).read_unaligned();
                ptr.cast::<Simd<u32, 4>>()
                    .add(c)
                    .write(Simd::from_array(chunk));
            }
        }
    });
}

/// Writes `values[i]` at `ptr + start + i` for each `i` with `start + i <
/// limit`: 16-byte vector stores when all `N` fit below `limit` and the
/// first address is 16-byte aligned, else one element at a time.
///
/// # Safety
/// `ptr` is valid for writes of `limit` elements, and the calling thread
/// alone accesses elements `start .. start + N` below `limit` meanwhile.
#[inline(always)]
pub(crate) unsafe fn write_run<T: VectorElement, const N: usize>(
    ptr: *mut T,
    start: usize,
    limit: usize,
    values: [T; N],
) {
    // The run's elements below `limit`: none when it starts at or past it.
    // No early return for that case: the element path below writes
    // nothing then, and the values keep two paths that use them (as CUDA's
    // `if whole { vector } else { guarded elements }`), so that the
    // compiler does not sink their computation into one guarded block,
    // which keeps their operands live instead (`gpu_ops::scan`'s prefixes
    // across the look-back: 11 registers, `benches/NOTES.md`).
    let inside = limit.saturating_sub(start);
    let first = ptr.wrapping_add(start);
    if inside > 0 {
        crate::race_check::write_range(first, N.min(inside));
    }
    let aligned =
        core::mem::size_of::<[T; N]>().is_multiple_of(16) && (first as usize).is_multiple_of(16);
    if inside >= N && aligned {
        // SAFETY: `start + N <= limit`, so the run is inside the caller's
        // memory and the caller's alone; aligned (tested), whole vectors.
        unsafe { store_vectors(first, values) };
    } else {
        // Constant indices (unrolled): the values stay in registers.
        crate::unroll::full::<N>(|i| {
            if i < inside {
                // SAFETY: `start + i < limit`: inside, and the caller's alone.
                unsafe { first.add(i).write(values[i]) };
            }
        });
    }
}

#[cfg(test)]
mod tests;
