"""Numba's CUDA simulator side of benches/simulator.rs (run with NUMBA_ENABLE_CUDASIM=1).

Usage: python3 numba_simulator.py [ELEMENTS [SCAN_ELEMENTS [MATMUL_SIDE]]]
       (defaults 2^16, 2^14, 64)

Prints `RESULT <name> <value> <unit>`: the same kernels as the Rust side, one
timed run each after a small warm-up. (At 2^20 elements Numba's simulator did
not finish within 18 minutes on a 2-core machine; hence the smaller default.)
"""
import os
import sys
import time

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"

import numpy as np

np.row_stack = np.vstack  # numba with numpy 2.5 needs this before import
import numba
from numba import cuda

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 16
SCAN_N = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 14
SIDE = int(sys.argv[3]) if len(sys.argv) > 3 else 64
TILE = 16


@cuda.jit
def add_kernel(a, b, c):
    pos = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if pos < a.size:
        c[pos] = a[pos] + b[pos]


@cuda.jit
def block_sum_static(inp, sums):
    tile = cuda.shared.array(256, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = inp[i] if i < inp.size else 0.0
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        sums[cuda.blockIdx.x] = tile[0]


@cuda.jit
def block_scan(inp, out):
    # Hillis and Steele, as the Rust kernel: a read step and a write step
    # (two barriers) per stride.
    tile = cuda.shared.array(256, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = inp[i] if i < inp.size else 0.0
    cuda.syncthreads()
    stride = 1
    while stride < 256:
        s = tile[t] + tile[t - stride] if t >= stride else tile[t]
        cuda.syncthreads()
        tile[t] = s
        cuda.syncthreads()
        stride *= 2
    if i < out.size:
        out[i] = tile[t]


@cuda.jit
def matmul_tiled(a, b, c):
    a_tile = cuda.shared.array((TILE, TILE), numba.float32)
    b_tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = 0.0
    for k0 in range(0, k, TILE):
        a_tile[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k else 0.0
        b_tile[ty, tx] = b[k0 + ty, col] if k0 + ty < k and col < n else 0.0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def empty():
    pass


def timed(f):
    t0 = time.perf_counter()
    f()
    cuda.synchronize()
    return time.perf_counter() - t0


def main():
    a = np.arange(N, dtype=np.float32)
    c = np.zeros_like(a)
    add_kernel[4, 256](a[:1024], a[:1024], c[:1024])
    s = timed(lambda: add_kernel[N // 256, 256](a, a, c))
    assert np.array_equal(c, 2 * a)
    print(f"RESULT numba_add_s {s:.6f} s", flush=True)

    ones = np.ones(N, dtype=np.float32)
    sums = np.zeros(N // 256, dtype=np.float32)
    s = timed(lambda: block_sum_static[N // 256, 256](ones, sums))
    assert np.all(sums == 256)
    print(f"RESULT numba_reduce_s {s:.6f} s", flush=True)

    values = (np.arange(SCAN_N) % 7).astype(np.float32)
    scanned = np.zeros_like(values)
    s = timed(lambda: block_scan[SCAN_N // 256, 256](values, scanned))
    assert np.array_equal(scanned, np.cumsum(values.reshape(-1, 256), axis=1).ravel())
    print(f"RESULT numba_scan_s {s:.6f} s", flush=True)

    ma = (np.arange(SIDE * SIDE) % 5).astype(np.float32).reshape(SIDE, SIDE)
    mb = (np.arange(SIDE * SIDE) % 3).astype(np.float32).reshape(SIDE, SIDE)
    mc = np.zeros((SIDE, SIDE), dtype=np.float32)
    tiles = (SIDE + TILE - 1) // TILE
    s = timed(lambda: matmul_tiled[(tiles, tiles), (TILE, TILE)](ma, mb, mc))
    assert np.array_equal(mc, ma @ mb)
    print(f"RESULT numba_matmul_s {s:.6f} s", flush=True)

    empty[1, 1]()
    launches = 1000
    s = timed(lambda: [empty[1, 1]() for _ in range(launches)])
    print(f"RESULT numba_empty_us {s / launches * 1e6:.3f} us", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        print(f"FAILED {type(e).__name__}: {e}", flush=True)
