//! Prefix scans of a device array (CuPy's `cp.cumsum`, CUB's
//! `DeviceScan::ExclusiveSum` and `InclusiveScan`): sums, minima and maxima
//! of 32-bit integers and floats, exclusive or inclusive, in one pass.
//!
//! One kernel, [`scan_tiles`]: decoupled look-back (`gpu_device::lookback`),
//! one instance per element type, operation and kind (exclusive or
//! inclusive: a compile-time choice, see [`ScanSpec::INCLUSIVE`]).
//! Each block of 128 threads claims the next tile of 3072 elements; each
//! warp owns 768 consecutive elements of it, and each lane six runs of four
//! (`ClaimedRuns<4, 6>`: a warp's loads and stores are 512 contiguous bytes,
//! one 16-byte vector a lane). A lane scans each run, the warp scans the
//! runs' totals row by row (six warp scans), the block combines its four
//! warps' totals, and the first warp looks back for the tile's prefix. CUB's
//! tuning for 4-byte sums on sm_90 is the same size: 128 threads, 24 items
//! a thread.
//!
//! The result is exact for integers (wrapping sums) and for minima and
//! maxima; float sums are added in the order above (a tree per warp row;
//! an element is `prefix + (row + run)` in an inclusive scan, `(prefix +
//! row) + run` in an exclusive one, where `prefix` is the earlier tiles'
//! and warps', `row` the earlier lanes' of its row, `run` its run's), the
//! same on every run and on the simulator.

use gpu_device::collective::{Max, Min, Operator, Sum};
use gpu_device::lookback::{claim_tile, StatusValue, TileStatus};
use gpu_device::ownership::ClaimedRuns;
use gpu_device::prelude::*;
use gpu_device::vector::{read_run_or, VectorElement};

/// Elements a lane's run holds: one 16-byte vector of 4-byte elements.
pub const RUN: usize = 4;
/// Runs a lane owns per tile.
pub const RUNS: usize = 6;
/// Threads per block.
pub const THREADS: usize = 128;
/// Elements per tile.
pub const TILE: usize = THREADS * RUN * RUNS;

/// A scan's element type and operation, for [`scan_tiles`]'s instances.
pub trait ScanSpec: 'static {
    /// The element type.
    type Element: StatusValue + VectorElement + DeviceCopy;
    /// The operation.
    type Op: Operator<Self::Element> + Default + Copy;
    /// The operation's identity (`op(identity, x) == x`): what elements past
    /// the end of the input contribute.
    const IDENTITY: Self::Element;
    /// Inclusive (element `i` combines elements `0 ..= i`) or exclusive
    /// (`0 .. i`). A constant, not a kernel parameter: an exclusive scan
    /// stores each run's first three prefixes only, so the fourth is dead
    /// before the look-back; with a run-time flag the inclusive store kept
    /// it live across it (64 registers a thread against the CUDA C twin's
    /// 48, `benches/NOTES.md`).
    const INCLUSIVE: bool;
}

macro_rules! scan_specs {
    ($($(#[$doc:meta])* $name:ident, $inclusive_name:ident = $t:ty, $op:ident, $identity:expr;)*) => {$(
        $(#[$doc])*
        #[doc = ""]
        #[doc = "Exclusive (element `i` combines elements `0 .. i`; element 0 is the identity)."]
        #[repr(C)]
        #[derive(Clone, Copy, Debug, DeviceCopy)]
        pub struct $name;
        impl ScanSpec for $name {
            type Element = $t;
            type Op = $op;
            const IDENTITY: $t = $identity;
            const INCLUSIVE: bool = false;
        }
        $(#[$doc])*
        #[doc = ""]
        #[doc = "Inclusive (element `i` combines elements `0 ..= i`)."]
        #[repr(C)]
        #[derive(Clone, Copy, Debug, DeviceCopy)]
        pub struct $inclusive_name;
        impl ScanSpec for $inclusive_name {
            type Element = $t;
            type Op = $op;
            const IDENTITY: $t = $identity;
            const INCLUSIVE: bool = true;
        }
    )*};
}

scan_specs! {
    /// Wrapping sums of `u32`.
    SumU32, SumU32Inclusive = u32, Sum, 0;
    /// Wrapping sums of `i32`.
    SumI32, SumI32Inclusive = i32, Sum, 0;
    /// Sums of `f32`.
    SumF32, SumF32Inclusive = f32, Sum, 0.0;
    /// Minima of `u32`.
    MinU32, MinU32Inclusive = u32, Min, u32::MAX;
    /// Minima of `i32`.
    MinI32, MinI32Inclusive = i32, Min, i32::MAX;
    /// Minima of `f32` (a NaN is skipped, as `f32::min` does).
    MinF32, MinF32Inclusive = f32, Min, f32::INFINITY;
    /// Maxima of `u32`.
    MaxU32, MaxU32Inclusive = u32, Max, 0;
    /// Maxima of `i32`.
    MaxI32, MaxI32Inclusive = i32, Max, i32::MIN;
    /// Maxima of `f32` (a NaN is skipped, as `f32::max` does).
    MaxF32, MaxF32Inclusive = f32, Max, f32::NEG_INFINITY;
}

/// The one pass of a scan: block `b` claims tile `t` (in order, from
/// `counter`, which is zero at the launch) and writes the exclusive (or,
/// with [`ScanSpec::INCLUSIVE`], inclusive) scan of `input`'s tile `t` to `out`, with
/// the prefix of all earlier tiles; `status` (one zeroed word per tile) is
/// how tiles pass their totals on. Launch `ceil(len / TILE)` blocks of
/// [`THREADS`]; a launch with stale status words or counter fails (see
/// `gpu_device::lookback`).
#[kernel(
    SumU32, SumI32, SumF32, MinU32, MinI32, MinF32, MaxU32, MaxI32, MaxF32,
    SumU32Inclusive, SumI32Inclusive, SumF32Inclusive, MinU32Inclusive, MinI32Inclusive,
    MinF32Inclusive, MaxU32Inclusive, MaxI32Inclusive, MaxF32Inclusive,
    block = (128),
    launch_bounds = (128, 10)
)]
pub fn scan_tiles<S: ScanSpec>(
    input: &[<S as ScanSpec>::Element],
    mut out: DisjointSlice<<S as ScanSpec>::Element, ClaimedRuns<4, 6>>,
    counter: &[DeviceAtomic<u32>],
    status: &[DeviceAtomic<TileStatus>],
    block: Block,
) {
    let op = S::Op::default();
    let identity = S::IDENTITY;
    let Some(counter) = counter.first() else {
        return;
    };
    let claim = claim_tile(block, counter, status);
    // Each run scanned in place (inclusive), and its total.
    let mut runs = [[identity; RUN]; RUNS];
    let mut totals = [identity; RUNS];
    // Every loop over the runs is unrolled (`unroll!`): with constant
    // indices the arrays stay in registers (a rolled loop indexes them, and
    // ptxas puts them in local memory: a 120-byte stack frame).
    unroll!(for k in 0..RUNS {
        let start = claim.run_start::<RUN, RUNS>(k).unwrap_or(usize::MAX);
        let run: [S::Element; RUN] = read_run_or(input, start, identity);
        let mut running = run[0];
        runs[k][0] = running;
        unroll!(for i in 0..RUN {
            if i > 0 {
                running = op.combine(running, run[i]);
                runs[k][i] = running;
            }
        });
        totals[k] = running;
    });
    // Row `k` of the warp is its lanes' `k`-th runs, in lane order: each
    // row scanned across the warp, the rows in order.
    //
    // What the stores need after the look-back is computed before it and
    // held (`TileClaim::hold`, one register a value): an exclusive scan
    // holds each run's prefix before its row (`before_row`) and its first
    // three prefixes, an inclusive one its four prefixes already combined
    // with `before_row`: 24 values either way, which with the look-back's
    // own fit 48 registers (10 blocks an SM, `benches/NOTES.md`).
    let mut before_row = [identity; RUNS];
    let mut row_start = identity;
    unroll!(for k in 0..RUNS {
        let row = gpu_device::warp::scan(totals[k], op);
        let before = op.combine(row_start, row.exclusive.unwrap_or(identity));
        if S::INCLUSIVE {
            unroll!(for i in 0..RUN {
                runs[k][i] = claim.hold(op.combine(before, runs[k][i]));
            });
        } else {
            before_row[k] = claim.hold(before);
        }
        row_start = op.combine(row_start, row.total);
    });
    // `row_start` is now the warp's total.
    let (_r, owner, scan) = claim.scan_by_warp(row_start, identity, op);
    unroll!(for k in 0..RUNS {
        let base = op.combine(scan.value, before_row[k]);
        let mut values = [identity; RUN];
        unroll!(for i in 0..RUN {
            values[i] = if S::INCLUSIVE {
                op.combine(scan.value, runs[k][i])
            } else if i == 0 {
                base
            } else {
                op.combine(base, runs[k][i - 1])
            };
        });
        out.set_run(&owner, k, values);
    });
}

/// The host side: scans of a buffer.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{scan_tiles, ScanSpec, THREADS, TILE};
    use gpu_device::collective::{Max, Min, Sum};

    use gpu_device::lookback::TileStatus;
    use gpu_runtime::{DeviceBuffer, LaunchConfig, Result, Stream};

    /// The element types and operations [`scan_into`] computes: `u32`,
    /// `i32` and `f32` with `Sum`, `Min` and `Max`.
    pub trait Scannable<O>: Sized {
        /// The kernel instance of the exclusive scan of this type and
        /// operation.
        type Exclusive: ScanSpec<Element = Self> + scan_tiles::Instance;
        /// The kernel instance of the inclusive scan.
        type Inclusive: ScanSpec<Element = Self> + scan_tiles::Instance;
    }

    macro_rules! scannable {
        ($($t:ty, $op:ty => $exclusive:ident, $inclusive:ident;)*) => {$(
            impl Scannable<$op> for $t {
                type Exclusive = super::$exclusive;
                type Inclusive = super::$inclusive;
            }
        )*};
    }
    scannable! {
        u32, Sum => SumU32, SumU32Inclusive;
        i32, Sum => SumI32, SumI32Inclusive;
        f32, Sum => SumF32, SumF32Inclusive;
        u32, Min => MinU32, MinU32Inclusive;
        i32, Min => MinI32, MinI32Inclusive;
        f32, Min => MinF32, MinF32Inclusive;
        u32, Max => MaxU32, MaxU32Inclusive;
        i32, Max => MaxI32, MaxI32Inclusive;
        f32, Max => MaxF32, MaxF32Inclusive;
    }

    /// Writes the scan of `input` with `op` into `out` (of the same length),
    /// exclusive (element `i` combines elements `0 .. i`; element 0 is the
    /// operation's identity: 0 for sums) or `inclusive` (elements `0 ..=
    /// i`), queued on `stream`. One kernel and two small zeroings (its tile
    /// counter and status words).
    pub fn scan_into<T, O>(
        input: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        _op: O,
        inclusive: bool,
        stream: &Stream,
    ) -> Result<()>
    where
        T: Scannable<O> + gpu_runtime::DeviceCopy,
    {
        if input.len() != out.len() {
            return Err(gpu_runtime::Error::LengthMismatch {
                operation: "gpu_ops::scan_into (the output must have the input's length)",
                destination: out.len(),
                source: input.len(),
            });
        }
        if input.is_empty() {
            return Ok(());
        }
        let tiles = input.len().div_ceil(TILE);
        let mut counter = DeviceBuffer::<u32>::zeroed_on(1, stream)?;
        let mut status = DeviceBuffer::<TileStatus>::zeroed_on(tiles, stream)?;
        // `launch!(scan_tiles::<T::Exclusive>[...](...))`, which takes an
        // instance of one token only.
        let launcher = scan_tiles::Launcher::new(LaunchConfig::new(tiles, THREADS).stream(stream));
        if inclusive {
            launcher.launch::<T::Inclusive>(input, out, &mut counter, &mut status)
        } else {
            launcher.launch::<T::Exclusive>(input, out, &mut counter, &mut status)
        }
    }

    /// The exclusive prefix sums of `input` (CUB's `ExclusiveSum`; element
    /// 0 is 0), wrapping for integers, on the current stream.
    pub fn exclusive_sum<T>(input: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>>
    where
        T: Scannable<Sum> + gpu_runtime::DeviceCopy,
    {
        scan(input, Sum, false)
    }

    /// The inclusive prefix sums of `input` (CuPy's `cp.cumsum`, for these
    /// types), wrapping for integers, on the current stream.
    pub fn inclusive_sum<T>(input: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>>
    where
        T: Scannable<Sum> + gpu_runtime::DeviceCopy,
    {
        scan(input, Sum, true)
    }

    /// The scan of `input` with `op` (`Sum`, `Min` or `Max`), exclusive or
    /// `inclusive`, into a new buffer, on the current stream (see
    /// [`scan_into`]).
    pub fn scan<T, O>(input: &DeviceBuffer<T>, op: O, inclusive: bool) -> Result<DeviceBuffer<T>>
    where
        T: Scannable<O> + gpu_runtime::DeviceCopy,
    {
        let stream = gpu_runtime::current_stream()?;
        let mut out = DeviceBuffer::<T>::zeroed_on(input.len(), &stream)?;
        scan_into(input, &mut out, op, inclusive, &stream)?;
        Ok(out)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{exclusive_sum, inclusive_sum, scan, scan_into, Scannable};
