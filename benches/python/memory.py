"""CuPy and Numba side of benches/memory_and_tracking.rs: allocate and free
pairs, printed as `RESULT <name> <value> <unit>`."""
import statistics
import time

import numpy as np

np.row_stack = np.vstack  # numba-cuda still refers to it
import cupy as cp  # noqa: E402
from numba import cuda  # noqa: E402

PAIRS = 5000


def per_pair_us(step, sync):
    for _ in range(PAIRS // 10):
        step()
    sync()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(PAIRS):
            step()
        sync()
        rounds.append((time.perf_counter() - t0) / PAIRS * 1e6)
    return statistics.median(rounds)


def main():
    stream = cp.cuda.Stream(non_blocking=True)
    for nbytes, name in [(1 << 20, "1mib"), (64 << 20, "64mib")]:
        def cupy_pair():
            with stream:
                a = cp.empty(nbytes, dtype=cp.uint8)
            del a

        us = per_pair_us(cupy_pair, stream.synchronize)
        print(f"RESULT cupy_{name}_us {us:.3f} us", flush=True)

        def numba_pair():
            a = cuda.device_array(nbytes, dtype=np.uint8)
            del a

        us = per_pair_us(numba_pair, cuda.synchronize)
        print(f"RESULT numba_{name}_us {us:.3f} us", flush=True)


if __name__ == "__main__":
    main()
