"""CuPy side of benches/graphs_and_async.rs: a graph of 100 tiny kernels
captured with Stream.begin_capture/end_capture and replayed with
Graph.launch, against 100 separate launches of the same kernel (the Rust
`add_kernel` from the benchmark's PTX).

Usage: python3 graphs.py <kernels.ptx>
Prints `RESULT <name> <value> <unit>` lines.
"""
import statistics
import sys
import time

import numpy as np

KERNELS = 100
REPLAYS = 200
N = 256


def per_kernel_us(run, stream):
    for _ in range(20):
        run()
    stream.synchronize()
    rounds = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(REPLAYS):
            run()
        stream.synchronize()
        rounds.append((time.perf_counter() - t0) / (REPLAYS * KERNELS) * 1e6)
    return statistics.median(rounds)


def main(ptx_path):
    import cupy as cp

    add = cp.RawModule(path=ptx_path).get_function("add_kernel__1d")
    p = cp.zeros(N, dtype=cp.float32)
    q = cp.zeros(N, dtype=cp.float32)
    ones = cp.ones(N, dtype=cp.float32)
    n = np.uint64(N)
    stream = cp.cuda.Stream(non_blocking=True)

    def sequence():
        for k in range(KERNELS):
            # The Rust add_kernel takes (a_ptr, a_len, b_ptr, b_len, c_ptr, c_len).
            if k % 2 == 0:
                add((1,), (N,), (p, n, ones, n, q, n), stream=stream)
            else:
                add((1,), (N,), (q, n, ones, n, p, n), stream=stream)

    us = per_kernel_us(sequence, stream)
    print(f"RESULT cupy_separate_us {us:.3f} us", flush=True)

    stream.begin_capture()
    sequence()
    graph = stream.end_capture()
    p.fill(0)
    cp.cuda.runtime.deviceSynchronize()
    graph.launch(stream)
    stream.synchronize()
    if float(p[0]) != KERNELS:
        print(f"FAILED the CuPy graph computed {float(p[0])}, not {KERNELS}", flush=True)
        return
    us = per_kernel_us(lambda: graph.launch(stream), stream)
    print(f"RESULT cupy_graph_us {us:.3f} us", flush=True)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as e:  # the table shows which side failed
        print(f"FAILED {type(e).__name__}: {e}", flush=True)
