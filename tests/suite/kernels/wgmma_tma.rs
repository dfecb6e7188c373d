//! Issue #22's warp-specialized `wgmma` GEMM (`gpu_ops::matmul::gemm_wgmma_tma`:
//! a producer warpgroup copying each k-block's tiles with the bulk tensor
//! copy engine into a `gpu_device::tma::ring::TmaRing`, two consumer
//! warpgroups of m64n256k16 reading them) against a CPU reference at ragged
//! sizes, with K longer than the ring and one whole tile, one block a tile
//! and persistent (fewer blocks than tiles, and more), B as `Bᵀ` (K-major)
//! and as B row-major (`gemm_bf16_wgmma_tma_kn`, read MN-major); and a launch with
//! too little shared memory for the ring refused. Runs on the simulator and
//! on a GPU of compute capability 9.0 (elsewhere the launch is refused and
//! the test says so and returns).

use super::tensor_core_data::{buffer, check_gemm, padded_operand};
use crate::common::faults::{failure, in_own_process};
use gpu_device::half::bf16;
use gpu_ops::matmul::gemm_tc::gemm_tc_blocks;
use gpu_ops::matmul::gemm_wgmma_tma::{
    gemm_bf16_wgmma_tma, gemm_bf16_wgmma_tma_kn, GEMM_WGMMA_TMA_SHARED_BYTES,
    GEMM_WGMMA_TMA_THREADS,
};
use gpu_runtime::{launch, DeviceBuffer, Stream, Swizzle, TensorMap};

/// Whether the device runs sm_90a kernels; says so when it does not.
fn runs_sm_90a(stream: &Stream) -> bool {
    let cc = gpu_runtime::Device::get(stream.device())
        .unwrap()
        .limits()
        .compute_capability;
    if cc != (9, 0) {
        eprintln!("wgmma_tma: the device is of compute capability {cc:?}, not 9.0: not run");
    }
    cc == (9, 0)
}

/// `C = A Bᵀ` by the TMA-fed GEMM for A `m × k` and B `n × k` (rows `ld`
/// apart, the padding NaN: the maps' extents leave it out) with `bytes` of
/// dynamic shared memory: C, A and B, or the launch's error.
type Product = (Vec<bf16>, Vec<bf16>, Vec<bf16>);

fn tma_gemm(
    (m, n, k, ld): (usize, usize, usize, usize),
    blocks: u32,
    bytes: usize,
    stream: &Stream,
) -> Result<Product, gpu_runtime::Error> {
    let (a, b) = (padded_operand(m, k, ld, 51), padded_operand(n, k, ld, 52));
    let (da, db) = (buffer(&a, stream), buffer(&b, stream));
    let map_a = TensorMap::matrix(&da, (m, k, ld), (128, 64), Swizzle::Bytes128)?;
    let map_b = TensorMap::matrix(&db, (n, k, ld), (256, 64), Swizzle::Bytes128)?;
    let mut dc = DeviceBuffer::<bf16>::zeroed_on(m * n, stream)?;
    let view = dc.view_2d_mut(m, n)?;
    launch!(gemm_bf16_wgmma_tma[blocks, GEMM_WGMMA_TMA_THREADS, stream, bytes as u32](&map_a, &map_b, k, view))?;
    Ok((dc.copy_to_host_sync(stream)?, a, b))
}

/// With one block a tile, and with `blocks` blocks (persistent: each
/// block takes the tiles of its rank, grid-stride).
fn matches_the_reference(m: usize, n: usize, k: usize, ld: usize, blocks: u32, stream: &Stream) {
    for blocks in [gemm_tc_blocks(m, n), blocks] {
        let shape = (m, n, k, ld);
        let (c, a, b) = tma_gemm(shape, blocks, GEMM_WGMMA_TMA_SHARED_BYTES, stream).unwrap();
        check_gemm(&c, &a, &b, [m, n, k, ld]);
    }
}

#[test]
fn the_tma_fed_wgmma_gemm_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    // Ragged in every dimension, with padded rows; one k-block, two tiles
    // (and one block for both).
    matches_the_reference(130, 67, 40, 48, 1, &stream);
    // K longer than the ring (9 k-blocks through 4 stages: each stage
    // refilled twice), the last k-block cut; a tile row and column cut;
    // four tiles on three blocks (block 0 takes tiles 0 and 3, its ring
    // running on from one tile into the next).
    matches_the_reference(140, 260, 520, 528, 3, &stream);
    // One whole block tile; more blocks than tiles (the others have none).
    matches_the_reference(128, 256, 64, 64, 4, &stream);
}

/// `C = A B` by the `_kn` kernel for A `m × k` (rows `ld` apart) and B
/// `k × n` row-major (rows `ld_b` apart, the padding NaN), checked against
/// the reference of `A Bᵀ` with B transposed here; one block a tile and
/// `blocks` blocks.
fn kn_matches_the_reference(
    (m, n, k): (usize, usize, usize),
    (ld, ld_b): (usize, usize),
    blocks: u32,
    stream: &Stream,
) {
    let (a, b) = (padded_operand(m, k, ld, 61), padded_operand(k, n, ld_b, 62));
    // Bᵀ, `n × ld` (its padding never read by the reference).
    let mut b_t = vec![bf16::from_f32(f32::NAN); n * ld];
    for (kk, row) in b.chunks(ld_b).enumerate() {
        for (j, &v) in row[..n].iter().enumerate() {
            b_t[j * ld + kk] = v;
        }
    }
    let (da, db) = (buffer(&a, stream), buffer(&b, stream));
    let map_a = TensorMap::matrix(&da, (m, k, ld), (128, 64), Swizzle::Bytes128).unwrap();
    let map_b = TensorMap::matrix(&db, (k, n, ld_b), (64, 64), Swizzle::Bytes128).unwrap();
    for blocks in [gemm_tc_blocks(m, n), blocks] {
        let mut dc = DeviceBuffer::<bf16>::zeroed_on(m * n, stream).unwrap();
        let view = dc.view_2d_mut(m, n).unwrap();
        let bytes = GEMM_WGMMA_TMA_SHARED_BYTES as u32;
        launch!(gemm_bf16_wgmma_tma_kn[blocks, GEMM_WGMMA_TMA_THREADS, stream, bytes](&map_a, &map_b, k, view))
            .unwrap();
        let c = dc.copy_to_host_sync(stream).unwrap();
        check_gemm(&c, &a, &b_t, [m, n, k, ld]);
    }
}

#[test]
fn the_tma_fed_wgmma_gemm_of_a_row_major_b_matches_a_cpu_reference() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    // Ragged in every dimension, rows padded: B's last tile column is
    // 67 of 256 (three of its four boxes past N, zero-filled).
    kn_matches_the_reference((130, 67, 40), (48, 72), 1, &stream);
    // K longer than the ring, the last k-block cut; four tiles on three
    // blocks.
    kn_matches_the_reference((140, 260, 520), (528, 264), 3, &stream);
    // One whole block tile, dense rows.
    kn_matches_the_reference((128, 256, 64), (64, 256), 4, &stream);
}

/// A launch that gives the ring less shared memory than its stages need
/// fails, naming the ring and both sizes (in a process of its own: a
/// failed launch ends the device on a GPU).
#[test]
fn a_ring_given_too_little_shared_memory_is_refused() {
    if !in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let short = GEMM_WGMMA_TMA_SHARED_BYTES - 1024;
    let a = DeviceBuffer::<bf16>::zeroed_on(128 * 64, &stream).unwrap();
    let b = DeviceBuffer::<bf16>::zeroed_on(256 * 64, &stream).unwrap();
    let map_a = TensorMap::matrix(&a, (128, 64, 64), (128, 64), Swizzle::Bytes128).unwrap();
    let map_b = TensorMap::matrix(&b, (256, 64, 64), (256, 64), Swizzle::Bytes128).unwrap();
    let mut c = DeviceBuffer::<bf16>::zeroed_on(128 * 256, &stream).unwrap();
    let view = c.view_2d_mut(128, 256).unwrap();
    launch!(gemm_bf16_wgmma_tma[1, GEMM_WGMMA_TMA_THREADS, stream, short as u32](&map_a, &map_b, 64, view))
        .unwrap();
    let report = failure(&stream);
    assert!(report.starts_with("gemm_bf16_wgmma_tma"), "{report}");
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(
            report.contains(&format!(
                "TmaRing::new: the launch gave {short} bytes of dynamic shared memory; the ring needs {GEMM_WGMMA_TMA_SHARED_BYTES}"
            )),
            "{report}"
        );
    }
}
