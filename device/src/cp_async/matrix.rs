//! Copies of a matrix's tiles with their checks proved once: a
//! [`CpAsyncMatrix`] (a source checked once as a row-major matrix whose
//! 16-byte chunks are all aligned and in bounds) and [`OwnChunks`] (a
//! stage's chunks checked once to be this thread's), so that the copy of
//! one chunk, [`OwnChunks::copy`], checks nothing but which of its elements
//! are inside the matrix, as a CUDA C GEMM's copy does.
//!
//! ```no_run
//! use gpu_device::cp_async::{CpAsyncMatrix, CpAsyncRing, CpAsyncSource};
//! use gpu_device::prelude::*;
//!
//! // With `#[kernel(arch = "sm_80")]`, 128 threads and `2 * 16 * 128`
//! // bytes: a 16 × 64 tile of `x` (`rows × cols`, rows `ld` apart, a
//! // multiple of 8 elements) through a 2-stage ring, zero outside `x`.
//! pub fn tile(x: &[u16], rows: usize, cols: usize, ld: usize,
//!             mut out: DisjointSlice<u16>, smem: DynamicShared<u16>) {
//!     let x = CpAsyncSource::new(x).matrix(rows, cols, ld);
//!     let mut ring = CpAsyncRing::<u16, 2>::new(smem, 16);
//!     ring.fill(|stage| {
//!         // 16 rows of 8 chunks: one chunk for each of the 128 threads.
//!         let mut chunks = stage.chunks::<128, 1>();
//!         let (row, chunk) = chunks.position(0);
//!         chunks.copy(0, &x, row, chunk);
//!     });
//!     let stage = ring.wait();
//!     let t = thread_rank();
//!     out.set(thread_index(), stage.get(t / 8, t % 8 * 8));
//! }
//! ```

use super::{StageFill, CHUNKS_PER_ROW, CHUNK_BYTES, ZERO_CHUNK};
use crate::arch;
use crate::race_check;
use crate::shared::SharedElement;
use core::marker::PhantomData;

/// A [`CpAsyncSource`](super::CpAsyncSource) as a row-major `rows × cols`
/// matrix, rows `ld` elements apart, checked once (by
/// [`CpAsyncSource::matrix`](super::CpAsyncSource::matrix)) so that every
/// 16-byte chunk of it is aligned and inside the source: copies of its
/// chunks ([`OwnChunks::copy`]) check only which elements are inside the
/// matrix.
pub struct CpAsyncMatrix<'a, T> {
    /// The first element: 16-byte aligned unless the matrix is empty.
    base: *const T,
    rows: u32,
    cols: u32,
    /// Chunks a row holds (the last cut at `cols`).
    col_chunks: u32,
    ld: u32,
    _source: PhantomData<&'a [T]>,
}

impl<T> Clone for CpAsyncMatrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for CpAsyncMatrix<'_, T> {}

impl<T> CpAsyncMatrix<'_, T> {
    /// Elements in a 16-byte chunk.
    const CHUNK: usize = {
        assert!(
            core::mem::size_of::<T>() > 0 && CHUNK_BYTES.is_multiple_of(core::mem::size_of::<T>()),
            "a cp.async matrix's element divides its 16-byte chunks"
        );
        CHUNK_BYTES / core::mem::size_of::<T>()
    };

    /// The rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// The columns.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }
}

impl<'a, T: Copy> super::CpAsyncSource<'a, T> {
    /// The source as a row-major `rows × cols` matrix, rows `ld` elements
    /// apart. Panics unless each of `rows`, `cols` and `ld` is below
    /// 2³², `cols <= ld`, and, for a matrix with elements, `ld` is a
    /// multiple of 16 bytes, the source starts 16-byte aligned and holds
    /// the last row's `cols` elements (`(rows - 1) ld + cols`).
    #[inline(always)]
    #[track_caller]
    pub fn matrix(self, rows: usize, cols: usize, ld: usize) -> CpAsyncMatrix<'a, T> {
        let chunk = CpAsyncMatrix::<T>::CHUNK;
        let fits = |x: usize| u32::try_from(x).is_ok();
        let empty = rows == 0 || cols == 0;
        let ok = fits(rows)
            && fits(cols)
            && fits(ld)
            && cols <= ld
            && (empty
                || (ld.is_multiple_of(chunk)
                    && (self.slice.as_ptr() as usize).is_multiple_of(CHUNK_BYTES)
                    && (rows - 1)
                        .checked_mul(ld)
                        .and_then(|end| end.checked_add(cols))
                        .is_some_and(|end| end <= self.slice.len())));
        if !ok {
            bad_matrix(rows, cols, ld, self.slice.len(), chunk)
        }
        CpAsyncMatrix {
            base: self.slice.as_ptr(),
            rows: rows as u32,
            cols: cols as u32,
            col_chunks: cols.div_ceil(chunk) as u32,
            ld: ld as u32,
            _source: PhantomData,
        }
    }
}

impl<'s, T: SharedElement + Copy> StageFill<'s, T> {
    /// This thread's chunks `0 .. CHUNKS` of the stage, for a block of
    /// `THREADS` threads, checked once: panics unless the block has
    /// `THREADS` threads and the stage holds `CHUNKS · THREADS` chunks.
    #[inline(always)]
    #[track_caller]
    pub fn chunks<const THREADS: usize, const CHUNKS: usize>(
        &mut self,
    ) -> OwnChunks<'_, 's, T, THREADS, CHUNKS> {
        if self.threads != THREADS
            || CHUNKS
                .checked_mul(THREADS)
                .is_none_or(|all| all > self.rows * CHUNKS_PER_ROW)
        {
            chunks_do_not_fit(THREADS, CHUNKS, self.threads, self.rows)
        }
        OwnChunks { fill: self }
    }
}

/// This thread's chunks `q < CHUNKS` of a stage being filled, chunk `t +
/// q · THREADS` for thread rank `t` (row `/ 8`, chunk `% 8`), checked once
/// to be inside the stage: from [`StageFill::chunks`].
pub struct OwnChunks<'f, 's, T, const THREADS: usize, const CHUNKS: usize> {
    fill: &'f mut StageFill<'s, T>,
}

impl<T: SharedElement + Copy, const THREADS: usize, const CHUNKS: usize>
    OwnChunks<'_, '_, T, THREADS, CHUNKS>
{
    /// The `(row, chunk)` of this thread's chunk `q` in the stage. Panics
    /// when `q >= CHUNKS` (a constant `q` folds the check away).
    #[inline(always)]
    #[track_caller]
    pub fn position(&self, q: usize) -> (usize, usize) {
        if q >= CHUNKS {
            chunk_out_of_range(q, CHUNKS)
        }
        // `rank < THREADS` (checked in `chunks`), `q < CHUNKS`: below
        // `CHUNKS · THREADS`, which does not overflow.
        let i = self.fill.rank + q * THREADS;
        (i / CHUNKS_PER_ROW, i % CHUNKS_PER_ROW)
    }

    /// Queues the copy of chunk `col_chunk` of row `row` of `src` (its
    /// elements `8 col_chunk ..` for 2-byte `T`, cut at the matrix's
    /// columns) into this thread's chunk `q`, the rest of the chunk zero;
    /// a row or chunk outside the matrix is all zero (read from nowhere).
    /// Panics only when `q >= CHUNKS`.
    #[inline(always)]
    #[track_caller]
    pub fn copy(&mut self, q: usize, src: &CpAsyncMatrix<'_, T>, row: usize, col_chunk: usize) {
        let (stage_row, chunk) = self.position(q);
        let elements = CpAsyncMatrix::<T>::CHUNK;
        let slot = stage_row * CHUNKS_PER_ROW + (chunk ^ (stage_row % CHUNKS_PER_ROW));
        // In the stage: `stage_row < rows` (`position` and `chunks`).
        let dst = self.fill.base.wrapping_add(slot * elements);
        race_check::write_range(dst, elements);
        let (from, valid) = if row < src.rows() && col_chunk < src.col_chunks as usize {
            // Below 2³² each (`matrix`); the chunk's first column is below
            // `cols`, so `valid` is 1 to `elements`.
            let (row, col) = (row as u32, col_chunk as u32 * elements as u32);
            let valid = (src.cols - col).min(elements as u32);
            let at = row as u64 * src.ld as u64 + col as u64;
            // In the source: `row < rows` and `col + valid <= cols` give
            // `at + valid <= (rows - 1) ld + cols <= len` (`matrix`).
            (src.base.wrapping_add(at as usize).cast::<u8>(), valid)
        } else {
            (ZERO_CHUNK.as_ptr(), 0)
        };
        // SAFETY: `dst`: this thread's chunk of the stage (`position`: the
        // chunks of distinct threads are distinct), which nobody reads
        // until this thread's wait covers the copy (the ring's argument,
        // see the parent module), 16-byte aligned and 16 bytes in bounds;
        // `from`: `valid` elements inside the source (above), in global
        // memory (`CpAsyncSource`), 16-byte aligned (the matrix starts
        // aligned, `ld` and `col` are multiples of a chunk), or, with
        // `valid == 0`, the zero chunk, never read.
        unsafe {
            arch::mma::cp_async_16(
                self.fill.base.cast(),
                slot * CHUNK_BYTES,
                from,
                valid * core::mem::size_of::<T>() as u32,
            )
        };
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_matrix(rows: usize, cols: usize, ld: usize, len: usize, chunk: usize) -> ! {
    panic!("CpAsyncSource::matrix: a {rows} × {cols} matrix with rows {ld} elements apart does not fit the source of {len} elements as cp.async copies it (16-byte aligned, rows a multiple of {chunk} elements apart, cols <= ld, each figure below 2^32)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn chunks_do_not_fit(threads: usize, chunks: usize, block: usize, rows: usize) -> ! {
    panic!("StageFill::chunks: {chunks} chunks for each of {threads} threads do not fit a stage of {rows} rows of {CHUNKS_PER_ROW} chunks filled by a block of {block} threads")
}

#[cold]
#[inline(never)]
#[track_caller]
fn chunk_out_of_range(q: usize, chunks: usize) -> ! {
    panic!("OwnChunks: chunk {q} is not one of this thread's {chunks}")
}
