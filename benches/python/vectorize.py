"""Numba side of benches/vectorize.rs: prints `RESULT <name> <value> <unit>`.

`@vectorize(['float32(float32, float32)'], target='cuda')` of `a + b` into a
preallocated output on a stream, and `@cuda.reduce` of a float64 sum into a
one-element device array on a stream, timed with CUDA events (median of 30,
after 3 warm-up calls), at the sizes the Rust side uses.
"""
import statistics
import sys

import numpy as np

np.row_stack = np.vstack  # numba-cuda with numpy 2.5 needs this before import
from numba import cuda, vectorize

REPEATS = 30
SIZES = [1 << 20, 1 << 24]


@vectorize(["float32(float32, float32)"], target="cuda")
def vector_add(a, b):
    return a + b


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def gpu_us(stream, work):
    for _ in range(3):
        work()
    start, end = cuda.event(), cuda.event()
    times = []
    for _ in range(REPEATS):
        start.record(stream)
        work()
        end.record(stream)
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end) * 1e3)
    return statistics.median(times)


def main():
    stream = cuda.stream()
    for n in SIZES:
        a = cuda.to_device((np.arange(n) % 97).astype(np.float32), stream=stream)
        b = cuda.to_device((np.arange(n) % 89).astype(np.float32), stream=stream)
        out = cuda.device_array(n, np.float32, stream=stream)
        us = gpu_us(stream, lambda: vector_add(a, b, out=out, stream=stream))
        print(f"RESULT numba_vectorize_{n} {us:.2f} us", flush=True)
        x = cuda.to_device((np.arange(n) % 13).astype(np.float64), stream=stream)
        res = cuda.device_array(1, np.float64, stream=stream)
        us = gpu_us(stream, lambda: sum_reduce(x, res=res, stream=stream))
        print(f"RESULT numba_reduce_{n} {us:.2f} us", flush=True)
    stream.synchronize()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the table shows which side failed
        print(f"FAILED {type(e).__name__}: {e}", flush=True)
        sys.exit(0)
