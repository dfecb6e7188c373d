//! Exclusive scan of `u32` (issue #20): the single-pass scan of `gpu_ops`
//! (`scan_tiles::<SumU32>`, decoupled look-back, 128 threads x 24 items)
//! and the Rust three-kernel form (`gpu_test_kernels::patterns::scan`:
//! tile scans, the tile sums' scan, add back) beside their twins in
//! `benches/cuda/patterns/scan.cuh` (`scan_lookback`, the same design line
//! by line; `scan_tiles_local` + `scan_tile_sums` + `add_tile_offsets`) and
//! `cub::DeviceScan::ExclusiveSum` (run by the twin binary). Same input
//! (splitmix64 seed 10, the high 32 bits) and check (every element exact,
//! against the host's wrapping scan).
//!
//! The look-back rows' timed work is what the twin's is: the counter's and
//! status words' zeroing (two small memsets here, one there) and the one
//! kernel; `gpu_ops::scan_into` adds its two small allocations (stream
//! pool) to that, as a user calls it.

use crate::common::Res;
use crate::table::{Baselines, Ctx};
use gpu_device::collective::Sum;
use gpu_device::lookback::TileStatus;
use gpu_ops::scan::{scan_into, scan_tiles, SumU32, THREADS, TILE};
use gpu_runtime::{launch, DeviceBuffer, LaunchConfig};
use gpu_test_kernels::patterns::scan::{
    add_tile_offsets, scan_tile_sums, scan_tiles_local, SCAN_TILE, SUMS_CAPACITY,
};

const FAMILY: &str = "exclusive scan, u32 (issue #20)";
const CUB: &[(&str, f64)] = &[("CUB DeviceScan::ExclusiveSum", 0.9)];

/// The sizes: 2^26 and the odd 2^26 + 12345 (the twin's), or small odd
/// ones for `--quick` (those of the twin's `--quick` on a GPU).
pub fn run(ctx: &mut Ctx) -> Res<()> {
    let sizes: &[usize] = match (ctx.quick, ctx.on_gpu) {
        (false, _) => &[1 << 26, (1 << 26) + 12345],
        (true, true) => &[1, 4095, 4096, 4097, 100_003, (1 << 20) + 7],
        (true, false) => &[1, 3071, 3073, 4097, 20_011],
    };
    for &n in sizes {
        case(ctx, n)?;
    }
    Ok(())
}

/// The buffers of one size.
struct State {
    out: DeviceBuffer<u32>,
    counter: DeviceBuffer<u32>,
    status: DeviceBuffer<TileStatus>,
    tile_sums: DeviceBuffer<u32>,
}

fn case(ctx: &mut Ctx, n: usize) -> Res<()> {
    let mut rng = crate::harness::SplitMix64::new(10);
    let input: Vec<u32> = (0..n).map(|_| (rng.next_u64() >> 32) as u32).collect();
    let mut want = vec![0u32; n];
    let mut running = 0u32;
    for (w, &x) in want.iter_mut().zip(&input) {
        *w = running;
        running = running.wrapping_add(x);
    }
    let stream = ctx.stream;
    let din = DeviceBuffer::to_device_sync(&input, stream)?;
    let (tiles, local_tiles) = (n.div_ceil(TILE), n.div_ceil(SCAN_TILE));
    if local_tiles > SUMS_CAPACITY {
        return Err(format!("scan: {n} items is more than the three-kernel form holds").into());
    }
    let mut state = State {
        out: DeviceBuffer::<u32>::device_array(n)?,
        counter: DeviceBuffer::<u32>::zeroed_on(1, stream)?,
        status: DeviceBuffer::<TileStatus>::zeroed_on(tiles, stream)?,
        tile_sums: DeviceBuffer::<u32>::zeroed_on(local_tiles, stream)?,
    };
    let size = format!("{n} u32");
    let poison = |s: &mut State| s.out.fill(u32::MAX, stream);
    let check = |kernel: &'static str| {
        let want = &want;
        move |s: &mut State, pass: &str| -> Res<(bool, f64)> {
            let got = s.out.copy_to_host_sync(stream)?;
            let mut bad = crate::harness::Mismatches::new(kernel, pass);
            for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
                if g != w {
                    bad.report(|| format!("out[{i}] = {g}, reference {w}"));
                }
            }
            let ok = bad.ok(n);
            Ok((ok, if ok { 0.0 } else { 1.0 }))
        }
    };
    let lookback = Baselines {
        family: FAMILY,
        twin: "decoupled look-back (1 kernel + status memset)",
        twin_symbol: "scan_lookback",
        libraries: CUB,
    };

    let kernel = "scan_tiles (gpu_ops look-back, 128 x 24 items, 1 kernel + 2 zeroings)";
    ctx.run(
        kernel,
        "scan_tiles_SumU32__1d",
        size.clone(),
        lookback,
        &mut state,
        poison,
        |s| {
            s.counter.zero(stream)?;
            s.status.zero(stream)?;
            scan_tiles::Launcher::new(LaunchConfig::new(tiles, THREADS).stream(stream))
                .launch::<SumU32>(&din, &mut s.out, &mut s.counter, &mut s.status)
        },
        check(kernel),
    )?;

    let kernel = "gpu_ops::scan::scan_into (as called: + 2 pool allocations)";
    ctx.run(
        kernel,
        "scan_tiles_SumU32__1d",
        size.clone(),
        lookback,
        &mut state,
        poison,
        |s| scan_into(&din, &mut s.out, Sum, false, stream),
        check(kernel),
    )?;

    let kernel = "scan_tiles_local + scan_tile_sums + add_tile_offsets (3 kernels)";
    ctx.run(
        kernel,
        "scan_tiles_local__1d",
        size,
        Baselines {
            family: FAMILY,
            twin: "scan-then-propagate: tile scans + sums scan + add back (3 kernels)",
            twin_symbol: "scan_tiles_local",
            libraries: CUB,
        },
        &mut state,
        poison,
        |s| {
            launch!(scan_tiles_local[local_tiles, 256, stream](&din, &mut s.out, &mut s.tile_sums))?;
            launch!(scan_tile_sums[1, 1024, stream](&mut s.tile_sums))?;
            launch!(add_tile_offsets[local_tiles, 256, stream](&mut s.out, &s.tile_sums))
        },
        check(kernel),
    )
}
