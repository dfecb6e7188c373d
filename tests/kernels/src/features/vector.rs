//! `gpu_device::vector::read_run_unaligned` at every start of sub-slices
//! that begin and end at every offset of a 16-byte line, for the suite's
//! comparison with plain indexing (`tests/suite/device_api/vector.rs`).

use gpu_device::half::bf16;
use gpu_device::ownership::{Blocked, Items};
use gpu_device::prelude::*;
use gpu_device::vector::{read_run_unaligned, VectorElement};

/// The elements of the source buffer each kernel here reads a sub-slice of.
pub const RUNS_SOURCE_LEN: usize = 96;

/// The threads of a block: one per start, `0 .. RUNS_STARTS`, past the
/// longest sub-slice's end.
pub const RUNS_STARTS: usize = RUNS_SOURCE_LEN + 2;

/// Block `b`, thread `t` reads the run at `t` of `src[skip .. len - b]` into
/// its `N` elements of `runs` (zeros for `None`), and 1 or 0 into `found`.
#[inline(always)]
fn runs_at<T: VectorElement + Default, const N: usize>(
    src: &[T],
    skip: usize,
    runs: &mut DisjointSlice<T, Blocked<N>>,
    found: &mut DisjointSlice<u32, Blocked<1>>,
) {
    let tail = block_idx().x as usize;
    let start = thread_idx().x as usize;
    let end = src.len().saturating_sub(tail);
    let run = src
        .get(skip.min(end)..end)
        .and_then(|slice| read_run_unaligned::<T, N>(slice, start));
    runs.set_run(
        &Items::<Blocked<N>>::mine(),
        run.unwrap_or([T::default(); N]),
    );
    found.set_run(&Items::<Blocked<1>>::mine(), [run.is_some() as u32]);
}

/// Block `b`, thread `t`: the run of 16 `u8` at `t` of `src[skip .. len -
/// b]` into its elements of `runs` (zeros for none), 1 or 0 into `found`.
#[kernel]
pub fn unaligned_runs_u8(
    src: &[u8],
    skip: usize,
    mut runs: DisjointSlice<u8, Blocked<16>>,
    mut found: DisjointSlice<u32, Blocked<1>>,
) {
    runs_at(src, skip, &mut runs, &mut found);
}

/// Block `b`, thread `t`: the run of 8 `u16` at `t` of `src[skip .. len -
/// b]` into its elements of `runs` (zeros for none), 1 or 0 into `found`.
#[kernel]
pub fn unaligned_runs_u16(
    src: &[u16],
    skip: usize,
    mut runs: DisjointSlice<u16, Blocked<8>>,
    mut found: DisjointSlice<u32, Blocked<1>>,
) {
    runs_at(src, skip, &mut runs, &mut found);
}

/// Block `b`, thread `t`: the run of 8 `bf16` at `t` of `src[skip .. len -
/// b]` into its elements of `runs` (zeros for none), 1 or 0 into `found`.
#[kernel]
pub fn unaligned_runs_bf16(
    src: &[bf16],
    skip: usize,
    mut runs: DisjointSlice<bf16, Blocked<8>>,
    mut found: DisjointSlice<u32, Blocked<1>>,
) {
    runs_at(src, skip, &mut runs, &mut found);
}

/// Block `b`, thread `t`: the run of 4 `f32` at `t` of `src[skip .. len -
/// b]` into its elements of `runs` (zeros for none), 1 or 0 into `found`.
#[kernel]
pub fn unaligned_runs_f32(
    src: &[f32],
    skip: usize,
    mut runs: DisjointSlice<f32, Blocked<4>>,
    mut found: DisjointSlice<u32, Blocked<1>>,
) {
    runs_at(src, skip, &mut runs, &mut found);
}
