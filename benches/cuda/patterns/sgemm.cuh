// SGEMM, f32, with 4 x 4 and 8 x 8 register tiles.
// Part of benches/cuda/patterns.cu (the CUDA C twins of issue #20).
#pragma once
#include <cuda_runtime.h>

// ===========================================================================
// 3. SGEMM, f32: C (M x N) = A (M x K) * B (K x N), all row-major with leading
// dimensions lda, ldb, ldc that are multiples of 4 (16-byte aligned rows).
// ===========================================================================
//
// Both kernels: 256 threads; A's tile is stored transposed in shared memory
// (As[k][m]) so that a thread reads its rows' values of one k as float4s, B's
// tile as is (Bs[k][n]); two shared buffers: while the block computes from one,
// each thread holds its share of the next tiles in registers (one float4 of A,
// one of B) and stores it to the other buffer, then one barrier. Global loads
// are float4 when the 4 elements are inside the matrix, else element by element
// with zeros outside (rows past M/N, columns past K/N, so the padding columns
// of the leading dimension are never read). C stores are float4 likewise.
// Partial tiles at the edges are handled by those guards alone.

// sgemm_4x4: block tile 64 x 64, BK = 16. Thread t = 16 ty + tx owns the 4 x 4
// tile of C at rows 4 ty .. 4 ty + 3, columns 4 tx .. 4 tx + 3 of the block tile.
// Loads: A row t / 4, columns 4 (t % 4) .. + 3 of the k-tile; B row t / 16,
// columns 4 (t % 16) .. + 3. Per k: As[k][4 ty] and Bs[k][4 tx] as float4, 16 FFMA.
constexpr int S4_BM = 64, S4_BN = 64, S4_BK = 16;

__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ p, int row, int col, int rows, int cols,
                                                int ld) {
    if (row < rows && col + 3 < cols) return __ldg(reinterpret_cast<const float4*>(p + row * ld + col));
    float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
    if (row < rows) {
        const float* q = p + row * ld;
        if (col < cols) r.x = __ldg(q + col);
        if (col + 1 < cols) r.y = __ldg(q + col + 1);
        if (col + 2 < cols) r.z = __ldg(q + col + 2);
    }
    return r;
}

__device__ __forceinline__ void store4_guarded(float* __restrict__ p, int row, int col, int rows, int cols, int ld,
                                               float4 v) {
    if (row >= rows) return;
    float* q = p + row * ld + col;
    if (col + 3 < cols) {
        *reinterpret_cast<float4*>(q) = v;
    } else {
        if (col < cols) q[0] = v.x;
        if (col + 1 < cols) q[1] = v.y;
        if (col + 2 < cols) q[2] = v.z;
    }
}

__global__ void __launch_bounds__(256) sgemm_4x4(const float* __restrict__ a, const float* __restrict__ b,
                                                 float* __restrict__ c, int m, int n, int k, int lda, int ldb,
                                                 int ldc) {
    __shared__ __align__(16) float as[2][S4_BK][S4_BM];
    __shared__ __align__(16) float bs[2][S4_BK][S4_BN];
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int m0 = blockIdx.y * S4_BM, n0 = blockIdx.x * S4_BN;
    const int a_row = t / 4, a_col = (t % 4) * 4;   // within the 64 x 16 A tile
    const int b_row = t / 16, b_col = (t % 16) * 4;  // within the 16 x 64 B tile
    float acc[4][4] = {};

    float4 a_next = load4_guarded(a, m0 + a_row, a_col, m, k, lda);
    float4 b_next = load4_guarded(b, b_row, n0 + b_col, k, n, ldb);
    as[0][a_col][a_row] = a_next.x, as[0][a_col + 1][a_row] = a_next.y;
    as[0][a_col + 2][a_row] = a_next.z, as[0][a_col + 3][a_row] = a_next.w;
    *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = b_next;
    __syncthreads();

    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += S4_BK) {
        const bool more = k0 + S4_BK < k;
        if (more) {
            a_next = load4_guarded(a, m0 + a_row, k0 + S4_BK + a_col, m, k, lda);
            b_next = load4_guarded(b, k0 + S4_BK + b_row, n0 + b_col, k, n, ldb);
        }
#pragma unroll
        for (int kk = 0; kk < S4_BK; ++kk) {
            const float4 av = *reinterpret_cast<const float4*>(&as[buf][kk][4 * ty]);
            const float4 bv = *reinterpret_cast<const float4*>(&bs[buf][kk][4 * tx]);
            const float ar[4] = {av.x, av.y, av.z, av.w}, br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (more) {
            buf ^= 1;
            as[buf][a_col][a_row] = a_next.x, as[buf][a_col + 1][a_row] = a_next.y;
            as[buf][a_col + 2][a_row] = a_next.z, as[buf][a_col + 3][a_row] = a_next.w;
            *reinterpret_cast<float4*>(&bs[buf][b_row][b_col]) = b_next;
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
        store4_guarded(c, m0 + 4 * ty + i, n0 + 4 * tx, m, n, ldc,
                       make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
}

// sgemm_8x8: block tile 128 x 128, BK = 8. Thread t = 16 ty + tx owns an 8 x 8
// tile of C split in four 4 x 4 quarters: rows {4 ty, 64 + 4 ty} + 0..3, columns
// {4 tx, 64 + 4 tx} + 0..3 (a warp's float4 reads of Bs are then 16 distinct
// consecutive vectors, its reads of As 2 broadcast vectors, and its C stores
// 16-float runs). Loads: A row t / 2, columns 4 (t % 2) .. + 3 of the k-tile;
// B row t / 32, columns 4 (t % 32) .. + 3. Per k: 2 + 2 float4 from As/Bs, 64 FFMA.
constexpr int S8_BM = 128, S8_BN = 128, S8_BK = 8;

__global__ void __launch_bounds__(256, 2) sgemm_8x8(const float* __restrict__ a, const float* __restrict__ b,
                                                    float* __restrict__ c, int m, int n, int k, int lda, int ldb,
                                                    int ldc) {
    __shared__ __align__(16) float as[2][S8_BK][S8_BM];
    __shared__ __align__(16) float bs[2][S8_BK][S8_BN];
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int m0 = blockIdx.y * S8_BM, n0 = blockIdx.x * S8_BN;
    const int a_row = t / 2, a_col = (t % 2) * 4;    // within the 128 x 8 A tile
    const int b_row = t / 32, b_col = (t % 32) * 4;  // within the 8 x 128 B tile
    float acc[8][8] = {};

    float4 a_next = load4_guarded(a, m0 + a_row, a_col, m, k, lda);
    float4 b_next = load4_guarded(b, b_row, n0 + b_col, k, n, ldb);
    as[0][a_col][a_row] = a_next.x, as[0][a_col + 1][a_row] = a_next.y;
    as[0][a_col + 2][a_row] = a_next.z, as[0][a_col + 3][a_row] = a_next.w;
    *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = b_next;
    __syncthreads();

    int buf = 0;
    for (int k0 = 0; k0 < k; k0 += S8_BK) {
        const bool more = k0 + S8_BK < k;
        if (more) {
            a_next = load4_guarded(a, m0 + a_row, k0 + S8_BK + a_col, m, k, lda);
            b_next = load4_guarded(b, k0 + S8_BK + b_row, n0 + b_col, k, n, ldb);
        }
#pragma unroll
        for (int kk = 0; kk < S8_BK; ++kk) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&as[buf][kk][4 * ty]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&as[buf][kk][64 + 4 * ty]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&bs[buf][kk][4 * tx]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&bs[buf][kk][64 + 4 * tx]);
            const float ar[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float br[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (more) {
            buf ^= 1;
            as[buf][a_col][a_row] = a_next.x, as[buf][a_col + 1][a_row] = a_next.y;
            as[buf][a_col + 2][a_row] = a_next.z, as[buf][a_col + 3][a_row] = a_next.w;
            *reinterpret_cast<float4*>(&bs[buf][b_row][b_col]) = b_next;
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
        store4_guarded(c, row, n0 + 4 * tx, m, n, ldc, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        store4_guarded(c, row, n0 + 64 + 4 * tx, m, n, ldc, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
    }
}
