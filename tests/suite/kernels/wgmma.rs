//! Hopper's warpgroup MMA (`gpu_device::wgmma`): one warpgroup's 64 × N
//! product of random bf16 and f16 tiles from swizzled shared memory, for N
//! in 64, 128 and 256 and the 128-, 64- and 32-byte swizzles, against a CPU
//! reference, every element held by one thread; products chained into one
//! accumulator before one wait; warpgroup roles (`setmaxnreg`); and the
//! misuses refused at run time (a block of partial warpgroups, a divergent
//! warp, a tile misaligned for its swizzle or past the shared memory, warps
//! of a warpgroup passing different tiles); products carried across a
//! ring's waits, and their misuses refused.
//! And issue #22's `wgmma` GEMM (`cp.async` ring, two warpgroups of
//! m64n256k16) against a CPU reference at ragged sizes and one whole tile.
//! Runs on the simulator and on a GPU of compute capability 9.0 (the kernels
//! declare `arch = "sm_90a"`; elsewhere the launch is refused and the test
//! says so and returns).

use crate::common;

use super::tensor_core_data::{buffer, check_gemm, padded_operand, random};
use common::faults::{failure, in_own_process, in_own_simulator_process, next_device, outcome};
use gpu_device::half::{bf16, f16};
use gpu_runtime::{launch, DeviceBuffer, DeviceCopy, Stream, BACKEND_ENV};
use gpu_test_kernels::patterns::gemm_tc::gemm_tc_blocks;
use gpu_test_kernels::patterns::gemm_wgmma::{
    gemm_bf16_wgmma, GEMM_WGMMA_SHARED_BYTES, GEMM_WGMMA_THREADS,
};
use gpu_test_kernels::wgmma::{
    wgmma_bf16_128b_n128, wgmma_bf16_128b_n256, wgmma_bf16_128b_n256_mn, wgmma_bf16_128b_n64,
    wgmma_bf16_128b_n64_mn, wgmma_bf16_32b_n64, wgmma_bf16_32b_n64_mn, wgmma_bf16_64b_n128,
    wgmma_bf16_64b_n128_mn, wgmma_carried_across_waits, wgmma_f16_128b_n128,
    wgmma_f16_128b_n128_mn, wgmma_in_a_divergent_branch, wgmma_roles, wgmma_tile_of_a_stage,
    wgmma_warps_disagree, WGMMA_TRIPLES,
};

/// Whether the device runs sm_90a kernels; says so when it does not.
fn runs_sm_90a(stream: &Stream) -> bool {
    let device = stream.device();
    let cc = gpu_runtime::Device::get(device)
        .unwrap()
        .limits()
        .compute_capability;
    let runs = cc == (9, 0);
    if !runs {
        eprintln!("wgmma: device {device} is of compute capability {cc:?}, not 9.0: not run");
    }
    runs
}

/// Places each thread's `(row, col, value)` triples in a 64 × n result,
/// checking every element is held by exactly one thread.
fn assemble(threads: &[[f32; WGMMA_TRIPLES]], n: usize) -> Vec<f32> {
    let mut out = vec![f32::NAN; 64 * n];
    let mut held = vec![0; 64 * n];
    for t in threads {
        for e in 0..n / 2 {
            let (row, col) = (t[3 * e] as usize, t[3 * e + 1] as usize);
            assert!(row < 64 && col < n, "({row}, {col}) outside 64 × {n}");
            out[row * n + col] = t[3 * e + 2];
            held[row * n + col] += 1;
        }
        assert!(t[3 * (n / 2)..].iter().all(|&v| v == -1.0));
    }
    assert!(held.iter().all(|&h| h == 1), "each element held once");
    out
}

/// Checks `got` (64 × n) against `repeats` times `A Bᵀ` in f64, to a few
/// f32 ulps of the sum of the products' magnitudes.
fn check(got: &[f32], a: &[f32], b: &[f32], n: usize, k: usize, repeats: usize, what: &str) {
    for i in 0..64 {
        for j in 0..n {
            let (mut sum, mut scale) = (0f64, 0f64);
            for kk in 0..k {
                let p = a[i * k + kk] as f64 * b[j * k + kk] as f64;
                sum += p;
                scale += p.abs();
            }
            let (want, scale) = (sum * repeats as f64, scale * repeats as f64);
            let g = got[i * n + j] as f64;
            let tolerance = 1e-5 * scale + 1e-30;
            assert!(
                (g - want).abs() <= tolerance,
                "{what}: element ({i}, {j}) is {g}, the reference {want}"
            );
        }
    }
}

type ProductLaunch<E> = fn(
    &DeviceBuffer<E>,
    &DeviceBuffer<E>,
    usize,
    usize,
    &mut DeviceBuffer<[f32; WGMMA_TRIPLES]>,
    &Stream,
    usize,
) -> gpu_runtime::Result<()>;

/// Runs one product kernel (n columns, k of the swizzle) on random
/// operands made by `convert`, and checks it.
#[allow(clippy::too_many_arguments)]
fn run<E: DeviceCopy>(
    stream: &Stream,
    go: ProductLaunch<E>,
    convert: fn(f32) -> E,
    back: fn(&E) -> f32,
    n: usize,
    k: usize,
    repeats: usize,
    what: &str,
) {
    let (a, b) = (random(64 * k, n as u64), random(n * k, 7 + k as u64));
    let (ah, bh): (Vec<E>, Vec<E>) = (
        a.iter().map(|&x| convert(x)).collect(),
        b.iter().map(|&x| convert(x)).collect(),
    );
    let (da, db) = (buffer(&ah, stream), buffer(&bh, stream));
    let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, stream).unwrap();
    let shared = (64 + n) * k * 2;
    go(&da, &db, 0, repeats, &mut out, stream, shared).unwrap();
    let got = assemble(&out.copy_to_host_sync(stream).unwrap(), n);
    let exact = |v: &[E]| v.iter().map(back).collect::<Vec<_>>();
    check(&got, &exact(&ah), &exact(&bh), n, k, repeats, what);
}

macro_rules! launcher {
    ($kernel:ident, $elem:ty) => {
        (|a: &DeviceBuffer<$elem>,
          b: &DeviceBuffer<$elem>,
          offset: usize,
          repeats: usize,
          out: &mut DeviceBuffer<[f32; WGMMA_TRIPLES]>,
          stream: &Stream,
          shared: usize| {
            launch!($kernel[1, 128, stream, shared](a, b, offset, repeats, out))
        }) as ProductLaunch<$elem>
    };
}

#[test]
fn every_shape_and_swizzle_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let to_bf16: fn(f32) -> bf16 = bf16::from_f32;
    let from_bf16: fn(&bf16) -> f32 = |x| x.to_f32();
    run(
        &stream,
        launcher!(wgmma_bf16_128b_n64, bf16),
        to_bf16,
        from_bf16,
        64,
        64,
        1,
        "bf16 m64n64, 128B swizzle",
    );
    run(
        &stream,
        launcher!(wgmma_bf16_128b_n128, bf16),
        to_bf16,
        from_bf16,
        128,
        64,
        1,
        "bf16 m64n128, 128B swizzle",
    );
    run(
        &stream,
        launcher!(wgmma_bf16_128b_n256, bf16),
        to_bf16,
        from_bf16,
        256,
        64,
        1,
        "bf16 m64n256, 128B swizzle",
    );
    run(
        &stream,
        launcher!(wgmma_bf16_64b_n128, bf16),
        to_bf16,
        from_bf16,
        128,
        32,
        1,
        "bf16 m64n128, 64B swizzle",
    );
    run(
        &stream,
        launcher!(wgmma_bf16_32b_n64, bf16),
        to_bf16,
        from_bf16,
        64,
        16,
        1,
        "bf16 m64n64, 32B swizzle",
    );
    run(
        &stream,
        launcher!(wgmma_f16_128b_n128, f16),
        f16::from_f32,
        |x| x.to_f32(),
        128,
        64,
        1,
        "f16 m64n128, 128B swizzle",
    );
}

/// B MN-major (`MnMajorTile`: B row-major, read with `imm-trans-b`), the
/// same products as the K-major B's: every swizzle, N of one chunk and of
/// four, both types, and chained products.
#[test]
fn an_mn_major_b_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let to_bf16: fn(f32) -> bf16 = bf16::from_f32;
    let from_bf16: fn(&bf16) -> f32 = |x| x.to_f32();
    let bf16_cases: [(ProductLaunch<bf16>, usize, usize, usize, &str); 5] = [
        (
            launcher!(wgmma_bf16_128b_n64_mn, bf16),
            64,
            64,
            1,
            "MN-major bf16 m64n64, 128B swizzle",
        ),
        (
            launcher!(wgmma_bf16_128b_n256_mn, bf16),
            256,
            64,
            1,
            "MN-major bf16 m64n256, 128B swizzle",
        ),
        (
            launcher!(wgmma_bf16_64b_n128_mn, bf16),
            128,
            32,
            1,
            "MN-major bf16 m64n128, 64B swizzle",
        ),
        (
            launcher!(wgmma_bf16_32b_n64_mn, bf16),
            64,
            16,
            1,
            "MN-major bf16 m64n64, 32B swizzle",
        ),
        (
            launcher!(wgmma_bf16_128b_n256_mn, bf16),
            256,
            64,
            3,
            "three chained MN-major products",
        ),
    ];
    for (go, n, k, repeats, what) in bf16_cases {
        run(&stream, go, to_bf16, from_bf16, n, k, repeats, what);
    }
    run(
        &stream,
        launcher!(wgmma_f16_128b_n128_mn, f16),
        f16::from_f32,
        |x| x.to_f32(),
        128,
        64,
        1,
        "MN-major f16 m64n128, 128B swizzle",
    );
}

#[test]
fn chained_products_accumulate_before_one_wait() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    run(
        &stream,
        launcher!(wgmma_bf16_128b_n128, bf16),
        bf16::from_f32,
        |x| x.to_f32(),
        128,
        64,
        3,
        "three chained products",
    );
}

#[test]
fn warpgroups_take_their_roles() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let mut out = DeviceBuffer::<[u32; 2]>::zeroed_on(384, &stream).unwrap();
    launch!(wgmma_roles[1, 384, stream](&mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (t, &[index, rank]) in got.iter().enumerate() {
        assert_eq!((index as usize, rank as usize), (t / 128, t % 128));
    }
}

/// A block of 96 threads (no whole warpgroup), a divergent warp, tiles
/// misaligned for their swizzle and a tile past the shared memory (K-major
/// and MN-major): each
/// refused with a report naming the kernel and the misuse, never a hang or
/// a wrong product. On the simulator, each on a device of its own (a failed
/// kernel ends its device).
#[test]
fn misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let ab = vec![bf16::from_f32(1.0); 256 * 64];
    let shared = (64 + 64) * 64 * 2;
    let refused = |threads: u32, offset: usize, shared: usize, expected: &str| {
        let stream = next_device();
        let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
        let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, &stream).unwrap();
        launch!(wgmma_bf16_128b_n64[1, threads, stream, shared](&da, &db, offset, 1usize, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("wgmma_bf16_128b_n64") && message.contains(expected),
            "{message}"
        );
    };
    refused(
        96,
        0,
        shared,
        "wgmma::Warpgroup: the block has 96 threads, not a multiple of 128",
    );
    // 1024-byte alignment for the 128-byte swizzle: slot 256 is 512 bytes.
    refused(
        128,
        256,
        shared + 512,
        "KMajorTile::new: the tile at slot 256 does not start at a multiple of 1024 bytes",
    );
    refused(
        128,
        0,
        shared - 2,
        "KMajorTile::new: the tile ends at slot 8192, past the dynamic shared memory's 8191 slots",
    );

    // The same checks for an MN-major B tile (made before A in that
    // kernel): misaligned (at slot 256 + 4096, 512 bytes past a multiple
    // of 1024), and past the end.
    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, &stream).unwrap();
    launch!(wgmma_bf16_128b_n64_mn[1, 128, stream, shared + 512](&da, &db, 256usize, 1usize, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.starts_with("wgmma_bf16_128b_n64_mn")
            && message.contains("MnMajorTile::new: the tile at slot 4352 does not start at a multiple of 1024 bytes"),
        "{message}"
    );
    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, &stream).unwrap();
    launch!(wgmma_bf16_128b_n64_mn[1, 128, stream, shared - 2](&da, &db, 0usize, 1usize, &mut out))
        .unwrap();
    let message = failure(&stream);
    assert!(
        message.starts_with("wgmma_bf16_128b_n64_mn")
            && message.contains("MnMajorTile::new: the tile ends at slot 8192, past the dynamic shared memory's 8191 slots"),
        "{message}"
    );

    let stream = next_device();
    let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, &stream).unwrap();
    launch!(wgmma_in_a_divergent_branch[1, 128, stream, shared](&mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.starts_with("wgmma_in_a_divergent_branch")
            && message.contains("the warp's active lanes are 0x0000ffff: every thread of the warpgroup must call wgmma together"),
        "{message}"
    );

    // Warp 1 passes another B tile than warps 0, 2 and 3 (the simulator's
    // check; on a GPU the product would be undefined, not a fault).
    let stream = next_device();
    let mut out = DeviceBuffer::<[f32; WGMMA_TRIPLES]>::zeroed_on(128, &stream).unwrap();
    let shared = (8192 + 4096) * 2;
    launch!(wgmma_warps_disagree[1, 128, stream, shared](&mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.starts_with("wgmma_warps_disagree")
            && message.contains("wgmma: the warps of warpgroup 0 disagree on their wgmma #0: warp 0 issued m64n64k16.bf16")
            && message.contains("but warp 1 issued m64n64k16.bf16")
            && message.contains("the four warps of a warpgroup must issue the same wgmma"),
        "{message}"
    );
}

/// Dynamic shared memory of `wgmma_carried_across_waits`: 4 stages of 128
/// rows of 128 bytes.
const CARRIED_SHARED: usize = 4 * 128 * 128;

/// Products carried past a ring's wait (`InFlight::carry`,
/// `Carried::then`): the correct loop runs on every backend (each thread
/// gets its 32 elements back).
#[test]
fn products_carried_across_waits_come_back() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let mut out = DeviceBuffer::<f32>::zeroed_on(128, &stream).unwrap();
    launch!(wgmma_carried_across_waits[1, 128, stream, CARRIED_SHARED](4u32, &mut out)).unwrap();
    assert!(out
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&n| n == 32.0));
}

/// The misuses of products carried across waits, each refused with a
/// report naming the kernel and the misuse before any copy could overwrite
/// a stage a product still reads: a carry on a ring made by
/// `CpAsyncRing::new`, a carried product never retired before the second
/// wait after its stage, a fill too far ahead on a ring read
/// asynchronously, two stages carried at once. On the simulator, each on a
/// device of its own.
#[test]
fn carried_product_misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    for (case, expected) in [
        (0u32, "wgmma::InFlight::carry: the ring was made by CpAsyncRing::new"),
        (1, "CpAsyncRing: wait 2 while wgmma products reading stage 0 may still be in flight"),
        (2, "CpAsyncRing::fill: fill 2 would overwrite a stage of the 4 that may still be read (0 waited for): wait first (at most 2 fills ahead)"),
        (3, "wgmma::InFlight::carry: products of stage 0 are still carried; wait for them (Carried::then or Carried::wait) before carrying stage 1"),
    ] {
        let stream = next_device();
        let mut out = DeviceBuffer::<f32>::zeroed_on(128, &stream).unwrap();
        launch!(wgmma_carried_across_waits[1, 128, stream, CARRIED_SHARED](case, &mut out))
            .unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("wgmma_carried_across_waits") && message.contains(expected),
            "case {case}: {message}"
        );
    }
}

/// `wgmma_tile_of_a_stage` with stages of `stage_rows` rows and the tile
/// from `first_row`: each thread's 1, or the launch's failure report.
fn tile_of_a_stage(stage_rows: usize, first_row: usize, stream: &Stream) -> Result<(), String> {
    let mut out = DeviceBuffer::<f32>::zeroed_on(128, stream).unwrap();
    let shared = 2 * stage_rows * 128;
    launch!(wgmma_tile_of_a_stage[1, 128, stream, shared](stage_rows, first_row, &mut out))
        .unwrap();
    outcome(stream)?;
    assert!(out
        .copy_to_host_sync(stream)
        .unwrap()
        .iter()
        .all(|&v| v == 1.0));
    Ok(())
}

/// A tile of a ring's stage at a row that is a multiple of 8, in a stage of
/// a multiple of 8 rows, is made on every backend.
#[test]
fn a_tile_of_an_aligned_stage_is_made() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    assert_eq!(tile_of_a_stage(80, 8, &stream), Ok(()));
}

/// The 128-byte swizzle needs the ring's swizzle phase (a row's index in
/// its stage, modulo 8) to be the GPU's (the address's bits 7 to 9): the
/// second stage of a ring of 76-row stages starts 512 bytes past a multiple
/// of 1024, so its row 4 lies at an aligned address with the phases 4
/// apart. A check of the tile's address alone let it through on the GPU (a
/// wrong product, silently); the stage's place and the row are checked, on
/// every backend. Each case in a process of its own (a failed launch ends
/// the device).
#[test]
fn a_tile_whose_swizzle_phase_is_not_the_gpus_is_refused() {
    if !in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let report = tile_of_a_stage(76, 4, &stream).unwrap_err();
    assert!(report.starts_with("wgmma_tile_of_a_stage: "), "{report}");
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(
            report.contains("KMajorTile::from_stage: row 4 of a stage of 76 rows does not start at a multiple of 1024 bytes"),
            "{report}"
        );
    }
}

/// `C = A Bᵀ` by the `wgmma` GEMM for A `m × k` (rows `ld` apart), B
/// `n × k` (rows `ld` apart), their padding columns NaN (never read as
/// data), against an f64 reference rounded once to bf16.
fn gemm_matches_the_reference(m: usize, n: usize, k: usize, ld: usize, stream: &Stream) {
    let (a, b) = (padded_operand(m, k, ld, 41), padded_operand(n, k, ld, 42));
    let (da, db) = (buffer(&a, stream), buffer(&b, stream));
    let mut dc = DeviceBuffer::<bf16>::zeroed_on(m * n, stream).unwrap();
    let view = dc.view_2d_mut(m, n).unwrap();
    let (blocks, bytes) = (gemm_tc_blocks(m, n), GEMM_WGMMA_SHARED_BYTES as u32);
    launch!(gemm_bf16_wgmma[blocks, GEMM_WGMMA_THREADS, stream, bytes](&da, &db, k, ld, ld, view))
        .unwrap();
    check_gemm(
        &dc.copy_to_host_sync(stream).unwrap(),
        &a,
        &b,
        [m, n, k, ld],
    );
}

#[test]
fn the_wgmma_gemm_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    // Ragged in every dimension, with padded rows; one k-block, two blocks.
    gemm_matches_the_reference(130, 67, 40, 48, &stream);
    // K longer than the ring (5 k-blocks through 4 stages), the last cut.
    gemm_matches_the_reference(17, 9, 300, 304, &stream);
    // One whole block tile.
    gemm_matches_the_reference(128, 256, 64, 64, &stream);
}
