"""CuPy and Numba sides of benches/launch_and_bandwidth.rs.

Usage: python3 launch_and_bandwidth.py <kernels.ptx>
Prints `RESULT <name> <value> <unit>` lines. Each framework launches the same
work as the Rust benchmark: `add_kernel` on one block of 256 threads, timed
per launch over many launches with a final synchronize; and on 16M floats,
timed with events (median of 50).
"""
import statistics
import sys
import time

import numpy as np

np.row_stack = np.vstack  # numba-cuda with numpy 2.5 needs this before import

LAUNCHES = 20000
N = 16 << 20


def per_launch_us(launch, sync):
    results = []
    for _ in range(5):
        sync()
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            launch()
        sync()
        results.append((time.perf_counter() - t0) / LAUNCHES * 1e6)
    return statistics.median(results)


def cupy_side(ptx_path):
    import cupy as cp

    module = cp.RawModule(path=ptx_path)
    add = module.get_function("add_kernel__1d")
    a = cp.arange(256, dtype=cp.float32)
    b = cp.arange(256, dtype=cp.float32) * 2
    c = cp.zeros(256, dtype=cp.float32)
    n = np.uint64(256)
    # The Rust add_kernel takes (a_ptr, a_len, b_ptr, b_len, c_ptr, c_len).
    args = (a, n, b, n, c, n)
    for _ in range(100):
        add((1,), (256,), args)
    sync = cp.cuda.runtime.deviceSynchronize
    us = per_launch_us(lambda: add((1,), (256,), args), sync)
    assert cp.allclose(c, a + b)
    print(f"RESULT cupy_rawkernel_launch_us {us:.3f} us", flush=True)

    x = cp.random.random(N, dtype=cp.float32)
    y = cp.random.random(N, dtype=cp.float32)
    z = cp.empty_like(x)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(60):
        start.record()
        cp.add(x, y, out=z)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    ms = statistics.median(times[10:])
    print(f"RESULT cupy_add_16M_gbps {3 * N * 4 / (ms * 1e-3) / 1e9:.1f} GB/s", flush=True)


def numba_side():
    from numba import cuda

    @cuda.jit
    def add_kernel(a, b, c):
        tx = cuda.threadIdx.x
        ty = cuda.blockIdx.x
        bw = cuda.blockDim.x
        pos = tx + ty * bw
        if pos < a.size:
            c[pos] = a[pos] + b[pos]

    a = cuda.to_device(np.arange(256, dtype=np.float32))
    b = cuda.to_device(np.arange(256, dtype=np.float32) * 2)
    c = cuda.device_array(256, dtype=np.float32)
    for _ in range(100):
        add_kernel[1, 256](a, b, c)
    us = per_launch_us(lambda: add_kernel[1, 256](a, b, c), cuda.synchronize)
    assert np.allclose(c.copy_to_host(), np.arange(256) * 3)
    print(f"RESULT numba_jit_launch_us {us:.3f} us", flush=True)


if __name__ == "__main__":
    for side in (lambda: cupy_side(sys.argv[1]), numba_side):
        try:
            side()
        except Exception as e:  # report and go on: the table says which side failed
            print(f"FAILED {type(e).__name__}: {e}", flush=True)
