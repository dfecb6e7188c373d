//! Runs of consecutive elements moved as 16-byte vectors (`ld.global.v4`,
//! `st.global.v4`: SASS `LDG.E.128`, `STG.E.128`) where the address allows,
//! element by element where it does not: CUDA's `float4` loads, without the
//! cast whose alignment the programmer vouches for.
//!
//! Whether a run may move as vectors is tested where it moves: the run lies
//! wholly inside the slice and its first element's address is a multiple of
//! 16. The test is a few integer instructions; when it fails the same values
//! move one element at a time, so a result never depends on alignment.
//!
//! ```no_run
//! use gpu_device::vector::read_run_or;
//!
//! // Four consecutive floats from `x`, 0.0 past its end: one 16-byte load
//! // where `x[4 * q..]` is 16-byte aligned and inside `x`.
//! fn quad(x: &[f32], q: usize) -> [f32; 4] {
//!     read_run_or(x, 4 * q, 0.0)
//! }
//! ```

/// Element types that move in 16-byte vectors: integers of 1 to 8 bytes
/// and floats. Sealed.
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

/// `N` elements aligned to 16 bytes: what one vector access moves (several,
/// for more than 16 bytes).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned16<A>(A);

/// Whether `[T; N]` at `ptr` moves as whole 16-byte vectors: its size is a
/// multiple of 16 and `ptr` is 16-byte aligned.
#[inline(always)]
fn moves_as_vectors<T, const N: usize>(ptr: *const T) -> bool {
    core::mem::size_of::<[T; N]>().is_multiple_of(16) && (ptr as usize).is_multiple_of(16)
}

/// The `N` elements of `slice` from `start`, or `None` when they do not all
/// lie inside it. One 16-byte load per 16 bytes where `&slice[start]` is
/// 16-byte aligned.
#[inline(always)]
pub fn read_run<T: VectorElement, const N: usize>(slice: &[T], start: usize) -> Option<[T; N]> {
    if start > slice.len() || slice.len() - start < N {
        return None;
    }
    // In bounds: `start + N <= len`.
    let ptr = slice.as_ptr().wrapping_add(start);
    Some(if moves_as_vectors::<T, N>(ptr) {
        // SAFETY: the `N` elements from `ptr` lie inside `slice`; the address
        // is 16-byte aligned and `[T; N]` a multiple of 16 bytes, so the
        // aligned wrapper (of the same size) reads exactly them.
        unsafe { ptr.cast::<Aligned16<[T; N]>>().read().0 }
    } else {
        core::array::from_fn(|i| slice[start + i])
    })
}

/// The `N` elements of `slice` from `start`, with `fill` for those past its
/// end: vector loads when the whole run is inside and aligned, as
/// [`read_run`], else element by element (CUDA's guarded `float4` load).
#[inline(always)]
pub fn read_run_or<T: VectorElement, const N: usize>(slice: &[T], start: usize, fill: T) -> [T; N] {
    match read_run(slice, start) {
        Some(run) => run,
        None => core::array::from_fn(|i| {
            start
                .checked_add(i)
                .and_then(|j| slice.get(j))
                .copied()
                .unwrap_or(fill)
        }),
    }
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
    if start >= limit {
        return;
    }
    let first = ptr.wrapping_add(start);
    if limit - start >= N && moves_as_vectors::<T, N>(first) {
        // SAFETY: `start + N <= limit`, so the run is inside the caller's
        // memory and the caller's alone; aligned as `read_run` argues.
        unsafe { first.cast::<Aligned16<[T; N]>>().write(Aligned16(values)) };
    } else {
        let mut i = 0;
        while i < N && i < limit - start {
            // SAFETY: `start + i < limit`: inside, and the caller's alone.
            unsafe { first.add(i).write(values[i]) };
            i += 1;
        }
    }
}
