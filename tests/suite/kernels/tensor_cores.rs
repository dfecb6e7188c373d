//! Warp-level MMA (`gpu_device::mma`): tile products of random bf16, f16 and
//! tf32 operands against a CPU reference, a tiled `A Bᵀ` accumulating over
//! k, every element of the result held by one lane, and the misuses refused
//! at run time (a divergent warp, a partial warp, overlapping rows), and
//! issue #22's `mma.sync` GEMM (`cp.async` ring, `ldmatrix`, 8 warps)
//! against a CPU reference at ragged sizes and multiples of its tile. Runs on
//! the simulator and on a GPU of compute capability 8.0 or later (the
//! kernels declare `arch = "sm_80"`).

use crate::common;

use super::tensor_core_data::{buffer, check_gemm, padded_operand, random};
use common::faults::{failure, in_own_simulator_process, next_device};
use gpu_device::half::{bf16, f16};
use gpu_runtime::{launch, DeviceBuffer, Stream, BACKEND_ENV};
use gpu_test_kernels::architectures::{needs_any_arch, needs_sm_90a};
use gpu_test_kernels::patterns::gemm_tc::{
    gemm_bf16_mma_sync, gemm_tc_blocks, GEMM_TC_SHARED_BYTES, GEMM_TC_THREADS,
};
use gpu_test_kernels::tensor_cores::{
    mma_in_a_divergent_branch, mma_shared_bf16, mma_shared_trans_bf16, mma_stage_steps_misuse,
    mma_tile_bf16, mma_tile_f16, mma_tile_tf32, mma_tiled_bf16, mma_with_overlapping_rows,
    STEPS_IN_A_DIVERGENT_BRANCH, STEPS_PAST_THE_ROW, STEPS_PAST_THE_STAGE,
};

/// The tf32 value `cvt.rna.tf32.f32` makes of `x`.
fn tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits().wrapping_add(1 << 12) & !0x1fff)
}

/// `A Bᵀ + C` in f64 (A: m × k, B: n × k, C: m × n), and the sum of the
/// products' magnitudes for each element (the scale of its rounding error).
fn reference(a: &[f32], b: &[f32], c: &[f32], m: usize, n: usize, k: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let (mut sum, mut scale) = (c[i * n + j] as f64, c[i * n + j].abs() as f64);
            for kk in 0..k {
                let p = a[i * k + kk] as f64 * b[j * k + kk] as f64;
                sum += p;
                scale += p.abs();
            }
            out.push((sum, scale));
        }
    }
    out
}

/// Places each lane's `(row, col, value)` triples in an `m × n` result,
/// checking every element is held by exactly one lane.
fn assemble(lanes: &[[f32; 12]], m: usize, n: usize) -> Vec<f32> {
    let mut out = vec![f32::NAN; m * n];
    let mut held = vec![0; m * n];
    for lane in lanes {
        for e in 0..4 {
            let (row, col) = (lane[3 * e] as usize, lane[3 * e + 1] as usize);
            assert!(row < m && col < n, "({row}, {col}) outside {m} × {n}");
            out[row * n + col] = lane[3 * e + 2];
            held[row * n + col] += 1;
        }
    }
    assert!(
        held.iter().all(|&h| h == 1),
        "each element held once: {held:?}"
    );
    out
}

fn check(got: &[f32], want: &[(f64, f64)], what: &str) {
    for (i, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        // f32 accumulation on a GPU: a few ulps of the products' magnitudes.
        let tolerance = 1e-5 * scale + 1e-30;
        assert!(
            (g as f64 - w).abs() <= tolerance,
            "{what}: element {i} is {g}, the reference {w} (tolerance {tolerance})"
        );
    }
}

#[test]
fn tile_products_match_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    for seed in 0..3 {
        let (a, b, c) = (
            random(16 * 16, seed),
            random(8 * 16, seed + 10),
            random(16 * 8, seed + 20),
        );
        let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
        // bf16: the reference multiplies the values the bf16s hold.
        let (ab, bb): (Vec<bf16>, Vec<bf16>) = (
            a.iter().map(|&x| bf16::from_f32(x)).collect(),
            b.iter().map(|&x| bf16::from_f32(x)).collect(),
        );
        let (da, db, dc) = (
            buffer(&ab, &stream),
            buffer(&bb, &stream),
            buffer(&c, &stream),
        );
        launch!(mma_tile_bf16[1, 32, stream](&da, &db, &dc, &mut out)).unwrap();
        let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), 16, 8);
        let exact = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
        check(
            &got,
            &reference(&exact(&ab), &exact(&bb), &c, 16, 8, 16),
            "bf16",
        );

        let (ah, bh): (Vec<f16>, Vec<f16>) = (
            a.iter().map(|&x| f16::from_f32(x)).collect(),
            b.iter().map(|&x| f16::from_f32(x)).collect(),
        );
        let (da, db) = (buffer(&ah, &stream), buffer(&bh, &stream));
        launch!(mma_tile_f16[1, 32, stream](&da, &db, &dc, &mut out)).unwrap();
        let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), 16, 8);
        let exact = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
        check(
            &got,
            &reference(&exact(&ah), &exact(&bh), &c, 16, 8, 16),
            "f16",
        );

        // tf32: A 16 × 8, B 8 × 8, rounded to tf32 when loaded.
        let (a8, b8) = (&a[..16 * 8], &b[..8 * 8]);
        let (da, db) = (buffer(a8, &stream), buffer(b8, &stream));
        launch!(mma_tile_tf32[1, 32, stream](&da, &db, &dc, &mut out)).unwrap();
        let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), 16, 8);
        let rounded = |v: &[f32]| v.iter().map(|&x| tf32(x)).collect::<Vec<_>>();
        let want = reference(&rounded(a8), &rounded(b8), &c, 16, 8, 8);
        check(&got, &want, "tf32");
        // Rounded, not truncated: without the rounding, some element differs.
        let unrounded = reference(a8, b8, &c, 16, 8, 8);
        assert!(got
            .iter()
            .zip(&unrounded)
            .any(|(&g, &(w, _))| (g as f64 - w).abs() > 1e-7));
    }
}

#[test]
fn tiles_load_from_shared_memory_with_ldmatrix() {
    let stream = Stream::new().unwrap();
    let a: Vec<bf16> = random(16 * 16, 7).into_iter().map(bf16::from_f32).collect();
    let b: Vec<bf16> = random(8 * 16, 8).into_iter().map(bf16::from_f32).collect();
    let (da, db) = (buffer(&a, &stream), buffer(&b, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    let exact = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
    let want = reference(&exact(&a), &exact(&b), &[0.0; 128], 16, 8, 16);
    for offset in [0usize, 8, 64] {
        let bytes = ((offset + 384) * 2) as u32;
        launch!(mma_shared_bf16[1, 32, stream, bytes](&da, &db, offset, &mut out)).unwrap();
        let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), 16, 8);
        check(&got, &want, &format!("ldmatrix at slot {offset}"));
    }
}

/// The same product with A stored column-major and B row-major (`C = A
/// B`'s layouts), loaded by `ldmatrix.trans`, B's rows 8 and 24 elements
/// apart.
#[test]
fn tiles_load_transposed_from_shared_memory_with_ldmatrix_trans() {
    let stream = Stream::new().unwrap();
    let a: Vec<bf16> = random(16 * 16, 7).into_iter().map(bf16::from_f32).collect();
    let b: Vec<bf16> = random(8 * 16, 8).into_iter().map(bf16::from_f32).collect();
    // A's element (m, k) at k * 16 + m; B's (k, n) at k * 8 + n.
    let a_cols: Vec<bf16> = (0..256).map(|i| a[i % 16 * 16 + i / 16]).collect();
    let b_rows: Vec<bf16> = (0..128).map(|i| b[i % 8 * 16 + i / 8]).collect();
    let (da, db) = (buffer(&a_cols, &stream), buffer(&b_rows, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    let exact = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
    let want = reference(&exact(&a), &exact(&b), &[0.0; 128], 16, 8, 16);
    for (offset, b_stride) in [(0usize, 8usize), (8, 24), (64, 8)] {
        let bytes = ((offset + 256 + 16 * b_stride) * 2) as u32;
        launch!(mma_shared_trans_bf16[1, 32, stream, bytes](
            &da, &db, offset, b_stride, &mut out
        ))
        .unwrap();
        let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), 16, 8);
        check(
            &got,
            &want,
            &format!("ldmatrix.trans at slot {offset}, B's stride {b_stride}"),
        );
    }
}

#[test]
fn a_tiled_product_accumulates_over_k() {
    let stream = Stream::new().unwrap();
    let (m, n, k) = (32, 24, 48);
    let a: Vec<bf16> = random(m * k, 1).into_iter().map(bf16::from_f32).collect();
    let b: Vec<bf16> = random(n * k, 2).into_iter().map(bf16::from_f32).collect();
    let (da, db) = (buffer(&a, &stream), buffer(&b, &stream));
    let tiles = (m / 16) * (n / 8);
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32 * tiles, &stream).unwrap();
    launch!(mma_tiled_bf16[tiles as u32, 32, stream](&da, &db, n, k, &mut out)).unwrap();
    let got = assemble(&out.copy_to_host_sync(&stream).unwrap(), m, n);
    let exact = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
    let zero = vec![0.0; m * n];
    check(
        &got,
        &reference(&exact(&a), &exact(&b), &zero, m, n, k),
        "tiled bf16",
    );
}

/// A divergent warp, a partial warp (a block of 48 threads: its second
/// warp has 16) and a tile whose rows overlap: each refused with a report
/// naming the kernel and the misuse, never a hang. On the simulator, each on
/// a device of its own (a failed kernel ends its device).
#[test]
fn misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let ab = vec![bf16::from_f32(1.0); 256];

    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(64, &stream).unwrap();
    launch!(mma_in_a_divergent_branch[1, 32, stream](&da, &db, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.starts_with("mma_in_a_divergent_branch")
            && message.contains("the warp's active lanes are 0x0000ffff: every lane of the warp must call mma and the shared loads together"),
        "{message}"
    );

    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let c = buffer(&[0.0f32; 128], &stream);
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(64, &stream).unwrap();
    launch!(mma_tile_bf16[1, 48, stream](&da, &db, &c, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.contains("the warp's active lanes are 0x0000ffff"),
        "{message}"
    );

    // ldmatrix's rows are 16 bytes, 16-byte aligned: slot 4 is not.
    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    launch!(mma_shared_bf16[1, 32, stream, 1024](&da, &db, 4usize, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.contains("FragmentA::load_shared: the tile at slot 4 with a stride of 16 elements has rows that are not 16-byte aligned"),
        "{message}"
    );
    // A tile past the end of the shared array.
    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    launch!(mma_shared_bf16[1, 32, stream, 512](&da, &db, 0usize, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.contains(
            "FragmentB::load_shared: the tile ends at slot 384, past the shared array's 256"
        ),
        "{message}"
    );

    // `.trans`: B's stored rows of 8 elements, 4 apart, would overlap.
    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    launch!(mma_shared_trans_bf16[1, 32, stream, 1024](&da, &db, 0usize, 4usize, &mut out))
        .unwrap();
    let message = failure(&stream);
    assert!(
        message.contains(
            "FragmentB::load_shared_rows: a stride of 4 elements is shorter than the tile's 8"
        ),
        "{message}"
    );

    let stream = next_device();
    let (da, db) = (buffer(&ab, &stream), buffer(&ab, &stream));
    let mut out = DeviceBuffer::<[f32; 12]>::zeroed_on(32, &stream).unwrap();
    launch!(mma_with_overlapping_rows[1, 32, stream](&da, &db, &mut out)).unwrap();
    let message = failure(&stream);
    assert!(
        message.contains("FragmentA::load: a stride of 8 elements is shorter than the tile's 16"),
        "{message}"
    );
}

/// `mma_stage_steps` (K steps of `ldmatrix` and `mma.sync` with one
/// check): a divergent warp, a step past the stage's row and a B tile past
/// its last row, each refused before any lane reads, naming the misuse.
#[test]
fn stage_steps_misuses_are_refused() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    for (which, expected) in [
        (
            STEPS_IN_A_DIVERGENT_BRANCH,
            "the warp's active lanes are 0x0000ffff: every lane of the warp must call mma",
        ),
        (
            STEPS_PAST_THE_ROW,
            "mma_stage_steps: the 16 rows from 0, chunks 8 and the next, are not inside the stage's 32 rows of 8 chunks",
        ),
        (
            STEPS_PAST_THE_STAGE,
            "mma_stage_steps: the 16 rows from 32, chunks 0 and the next, are not inside the stage's 32 rows",
        ),
    ] {
        let stream = next_device();
        let mut out = DeviceBuffer::<f32>::zeroed_on(32, &stream).unwrap();
        launch!(mma_stage_steps_misuse[1, 32, stream, 2 * 32 * 128](which, &mut out)).unwrap();
        let message = failure(&stream);
        assert!(
            message.starts_with("mma_stage_steps_misuse") && message.contains(expected),
            "{which}: {message}"
        );
    }
}

/// The module a device loads is the newest one it can run: on the GPU, the
/// kernel reports the architecture its code was built for (gpu-test-kernels
/// is built for sm_70, sm_80 and sm_90a), so compute capability 9.0 runs the
/// sm_90a module, 8.x to 10.x the sm_80 one. The simulator runs the host
/// build (0).
#[test]
fn each_device_runs_the_newest_module_it_can() {
    let stream = Stream::new().unwrap();
    let (major, minor) = gpu_runtime::Device::get(0)
        .unwrap()
        .limits()
        .compute_capability;
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(needs_any_arch[1, 64, stream](&mut out)).unwrap();
    let expected = match gpu_runtime::backend() {
        gpu_runtime::Backend::Simulator => 0,
        _ if (major, minor) == (9, 0) => 901,
        _ if major >= 8 => 80,
        _ => 70,
    };
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![expected; 64],
        "compute capability {major}.{minor}"
    );
    if (major, minor) == (9, 0) {
        let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
        launch!(needs_sm_90a[1, 64, stream](&mut out)).unwrap();
        assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![expected; 64]);
    }
}
/// `C = A Bᵀ` by the `mma.sync` GEMM for A `m × k` (rows `ld` apart), B
/// `n × k` (rows `ld` apart), their padding columns NaN (never read as
/// data), against an f64 reference rounded once to bf16.
fn gemm_matches_the_reference(m: usize, n: usize, k: usize, ld: usize, stream: &Stream) {
    let (a, b) = (padded_operand(m, k, ld, 31), padded_operand(n, k, ld, 32));
    let (da, db) = (buffer(&a, stream), buffer(&b, stream));
    let mut dc = DeviceBuffer::<bf16>::zeroed_on(m * n, stream).unwrap();
    let view = dc.view_2d_mut(m, n).unwrap();
    let (blocks, bytes) = (gemm_tc_blocks(m, n), GEMM_TC_SHARED_BYTES as u32);
    launch!(gemm_bf16_mma_sync[blocks, GEMM_TC_THREADS, stream, bytes](&da, &db, k, ld, ld, view))
        .unwrap();
    check_gemm(
        &dc.copy_to_host_sync(stream).unwrap(),
        &a,
        &b,
        [m, n, k, ld],
    );
}

/// As [`gemm_matches_the_reference`], C starting one element into its
/// buffer: no pair of a row is 4-byte aligned, so every tile, whole ones
/// too, takes the element-by-element stores (a whole tile's one-store
/// pairs need the matrix aligned); the element before C stays untouched.
fn gemm_into_an_unaligned_c_matches_the_reference(m: usize, n: usize, k: usize, stream: &Stream) {
    let (a, b) = (padded_operand(m, k, k, 33), padded_operand(n, k, k, 34));
    let (da, db) = (buffer(&a, stream), buffer(&b, stream));
    let sentinel = bf16::from_f32(-7.0);
    let mut dc = buffer(&vec![sentinel; m * n + 1], stream);
    let view = dc
        .view_mut()
        .into_slice(1..m * n + 1)
        .unwrap()
        .into_2d(m, n)
        .unwrap();
    let (blocks, bytes) = (gemm_tc_blocks(m, n), GEMM_TC_SHARED_BYTES as u32);
    launch!(gemm_bf16_mma_sync[blocks, GEMM_TC_THREADS, stream, bytes](&da, &db, k, k, k, view))
        .unwrap();
    let got = dc.copy_to_host_sync(stream).unwrap();
    assert_eq!(got[0], sentinel, "the element before C");
    check_gemm(&got[1..], &a, &b, [m, n, k, k]);
}

#[test]
fn the_mma_sync_gemm_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    // Ragged in every dimension, with padded rows; one k-block, two blocks.
    gemm_matches_the_reference(130, 67, 40, 48, &stream);
    // K longer than the ring (5 k-blocks through 4 stages), the last cut.
    gemm_matches_the_reference(17, 9, 300, 304, &stream);
    // One whole block tile.
    gemm_matches_the_reference(128, 256, 64, 64, &stream);
    // Whole tiles into a C whose pairs are not aligned.
    gemm_into_an_unaligned_c_matches_the_reference(128, 256, 64, &stream);
}
