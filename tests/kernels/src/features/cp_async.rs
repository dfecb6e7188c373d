//! `cp.async` rings (`gpu_device::cp_async`, sm_80): a pipeline copying
//! rows through a 3-stage ring with zero-filled tails, and the misuses the
//! ring refuses at run time.

use gpu_device::cp_async::{CpAsyncRing, CpAsyncSource};
use gpu_device::prelude::*;

/// Steps of [`ring_rows`]: each moves 2 rows of 64 `u16` through the ring.
pub const RING_STEPS: usize = 4;
const _: () = assert!(2 * RING_STEPS == 8, "ring_rows records 2 elements a step");

/// Moves `x` (`2 RING_STEPS` rows of 64) through a 3-stage ring of 2-row
/// stages, copying the first `width` elements of each row (the rest of each
/// chunk zero-filled, the chunks past it not copied: zeros); launch 64
/// threads and `3 * 256` bytes. Thread `t` records, at each step, stage
/// elements `t` and `t + 64` (row-major over the stage's 2 rows).
#[kernel(arch = "sm_80", block = 64)]
pub fn ring_rows(
    x: &[u16],
    width: usize,
    mut out: DisjointSlice<[u16; 8]>,
    smem: DynamicShared<u16>,
) {
    let src = CpAsyncSource::new(x);
    let mut ring = CpAsyncRing::<u16, 3>::new(smem, 2);
    let fill = |ring: &mut CpAsyncRing<u16, 3>, step: usize| {
        ring.fill(|stage| {
            if step < RING_STEPS {
                if let Some((row, chunk)) = stage.own_chunk(0) {
                    let valid = width.saturating_sub(8 * chunk).min(8);
                    stage.copy(0, src, (2 * step + row) * 64 + 8 * chunk, valid);
                }
            }
        })
    };
    fill(&mut ring, 0);
    fill(&mut ring, 1);
    let t = thread_rank();
    let mut seen = [0; 8];
    for step in 0..RING_STEPS {
        let mut stage = ring.wait();
        stage.fill(|s| {
            if step + 2 < RING_STEPS {
                if let Some((row, chunk)) = s.own_chunk(0) {
                    let valid = width.saturating_sub(8 * chunk).min(8);
                    s.copy(0, src, (2 * (step + 2) + row) * 64 + 8 * chunk, valid);
                }
            }
        });
        seen[2 * step] = stage.get(t / 64, t % 64);
        seen[2 * step + 1] = stage.get((t + 64) / 64, (t + 64) % 64);
    }
    ring.finish();
    out.set(thread_index(), seen);
}

/// Which misuse [`ring_misuse`] makes.
pub const MISALIGNED_SOURCE: u32 = 0;
/// Three fills of a 3-stage ring before any wait.
pub const FILL_TOO_FAR: u32 = 1;
/// A wait with no fill.
pub const WAIT_WITHOUT_FILL: u32 = 2;
/// A chunk of more than 16 bytes.
pub const CHUNK_TOO_LONG: u32 = 3;

/// One misuse of a ring (`which`), refused with a panic; launch 32 threads
/// and `3 * 128` bytes (less, for the shared-memory check).
#[kernel(arch = "sm_80")]
pub fn ring_misuse(x: &[u16], which: u32, mut out: DisjointSlice<u16>, smem: DynamicShared<u16>) {
    let src = CpAsyncSource::new(x);
    let mut ring = CpAsyncRing::<u16, 3>::new(smem, 1);
    match which {
        MISALIGNED_SOURCE => ring.fill(|s| {
            s.copy(0, src, 1, 8);
        }),
        FILL_TOO_FAR => {
            for _ in 0..3 {
                ring.fill(|_| {});
            }
        }
        WAIT_WITHOUT_FILL => {
            let _ = ring.wait();
        }
        _ => ring.fill(|s| {
            s.copy(0, src, 0, 9);
        }),
    }
    out.set(thread_index(), 0);
}

/// Copies the 16 × 64 tile at `(row0, col0)` (`col0` a multiple of 8) of
/// `x`, a `rows × cols` matrix with rows `ld` apart, through a 2-stage ring
/// with its checks proved once (`CpAsyncSource::matrix`,
/// `StageFill::chunks`): zero outside the matrix. Launch 64 threads and `2 *
/// 16 * 128` bytes; thread `t` writes the tile's elements `16 t .. 16 t +
/// 16` (row-major).
#[kernel(arch = "sm_80", block = 64)]
#[allow(clippy::too_many_arguments)]
pub fn matrix_tile(
    x: &[u16],
    rows: usize,
    cols: usize,
    ld: usize,
    row0: usize,
    col0: usize,
    mut out: DisjointSlice<[u16; 16]>,
    smem: DynamicShared<u16>,
) {
    let x = CpAsyncSource::new(x).matrix(rows, cols, ld);
    let mut ring = CpAsyncRing::<u16, 2>::new(smem, 16);
    ring.fill(|stage| {
        // 16 rows of 8 chunks: 2 chunks for each of the 64 threads.
        let mut chunks = stage.chunks::<64, 2>();
        for q in 0..2 {
            let (row, chunk) = chunks.position(q);
            chunks.copy(q, &x, row0 + row, col0 / 8 + chunk);
        }
    });
    let t = thread_rank();
    let mut seen = [0; 16];
    {
        let stage = ring.wait();
        for (e, s) in seen.iter_mut().enumerate() {
            let i = 16 * t + e;
            *s = stage.get(i / 64, i % 64);
        }
    }
    ring.finish();
    out.set(thread_index(), seen);
}

/// Which misuse [`matrix_misuse`] makes.
pub const MATRIX_MISALIGNED: u32 = 0;
/// Rows `ld` apart that are not a multiple of 16 bytes.
pub const MATRIX_ODD_LD: u32 = 1;
/// More columns than `ld`.
pub const MATRIX_COLS_PAST_LD: u32 = 2;
/// A last row past the source.
pub const MATRIX_PAST_THE_SOURCE: u32 = 3;
/// `chunks` for a block size the launch did not use.
pub const CHUNKS_WRONG_BLOCK: u32 = 4;
/// `chunks` for more chunks than the stage holds.
pub const CHUNKS_TOO_MANY: u32 = 5;
/// A chunk `q` past the thread's.
pub const CHUNK_PAST_OWN: u32 = 6;

/// One misuse (`which`) of `CpAsyncSource::matrix` or `StageFill::chunks`
/// on `x` (64 elements), refused with a panic; launch 32 threads and `3 *
/// 512` bytes (stages of 4 rows: a chunk for each thread).
#[kernel(arch = "sm_80")]
pub fn matrix_misuse(x: &[u16], which: u32, mut out: DisjointSlice<u16>, smem: DynamicShared<u16>) {
    let src = CpAsyncSource::new(x);
    let mut ring = CpAsyncRing::<u16, 3>::new(smem, 4);
    let whole = src.matrix(8, 8, 8);
    match which {
        MATRIX_MISALIGNED => {
            let _ = CpAsyncSource::new(&x[1..]).matrix(2, 8, 8);
        }
        MATRIX_ODD_LD => {
            let _ = src.matrix(2, 4, 12);
        }
        MATRIX_COLS_PAST_LD => {
            let _ = src.matrix(2, 16, 8);
        }
        MATRIX_PAST_THE_SOURCE => {
            let _ = src.matrix(9, 8, 8);
        }
        CHUNKS_WRONG_BLOCK => ring.fill(|s| {
            let _ = s.chunks::<64, 1>();
        }),
        CHUNKS_TOO_MANY => ring.fill(|s| {
            let _ = s.chunks::<32, 2>();
        }),
        _ => ring.fill(|s| {
            // A chunk number not known when compiled.
            let q = 1 + (which as usize & 1);
            s.chunks::<32, 1>().copy(q, &whole, 0, 0);
        }),
    }
    out.set(thread_index(), 0);
}

/// Which disagreement [`ring_made_differently`] makes.
pub const RING_ROWS_DIFFER: u32 = 0;
/// Threads 16 and up make the ring with async reads, the others plain.
pub const RING_KIND_DIFFERS: u32 = 1;
/// Odd threads make a ring of 2 stages, even ones of 3.
pub const RING_STAGES_DIFFER: u32 = 2;
/// Every thread makes the same ring (3 stages of 1 row, plain).
pub const RING_AGREES: u32 = 3;

/// Fills and waits for one stage of `ring`, then gives it up.
fn one_stage<const STAGES: usize>(mut ring: CpAsyncRing<u16, STAGES>) {
    ring.fill(|_| {});
    let _ = ring.wait();
    ring.finish();
}

/// Threads of one block make the ring over the same shared memory with
/// parameters chosen by their index (`which`): their views of which stage
/// is filled and read would disagree, which the ring's construction
/// refuses (a panic naming both rings). Launch 32 threads and `3 * 256`
/// bytes; each thread writes 1 once past its ring.
#[kernel(arch = "sm_80")]
pub fn ring_made_differently(which: u32, mut out: DisjointSlice<u32>, smem: DynamicShared<u16>) {
    let t = thread_rank();
    match which {
        RING_ROWS_DIFFER => one_stage(CpAsyncRing::<u16, 3>::new(smem, 1 + t % 2)),
        RING_KIND_DIFFERS if t >= 16 => one_stage(CpAsyncRing::<u16, 3>::with_async_reads(smem, 1)),
        RING_STAGES_DIFFER if t % 2 == 1 => one_stage(CpAsyncRing::<u16, 2>::new(smem, 1)),
        _ => one_stage(CpAsyncRing::<u16, 3>::new(smem, 1)),
    }
    out.set(thread_index(), 1);
}
