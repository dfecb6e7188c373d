"""The Numba original of examples/numba_toolbox.rs: a kernel that uses print,
cuda.fp16, cuda.syncthreads_count and a constant array.

Usage, on the GPU machine:   python3 numba_toolbox.py
       or on Numba's simulator: NUMBA_ENABLE_CUDASIM=1 python3 numba_toolbox.py
                               (its print is Python's: 0.5 where a GPU prints 0.500000)

Prints the kernel's lines (one per block, in any order on a GPU), then
`counts ...` and `out ...`: the Rust example prints the same lines. Compare
them sorted: `sort` both outputs and `diff`.
"""
import numpy as np

np.row_stack = np.vstack  # numba with numpy 2.5 needs this before import
from numba import cuda

WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)
N = 300
BLOCK = 128


@cuda.jit
def smooth_and_count(x, threshold, out, counts):
    w = cuda.const.array_like(WEIGHTS)
    i = cuda.grid(1)
    v = np.float16(0.0)
    if 1 <= i and i < x.size - 1:
        acc = np.float16(0.0)
        for k in range(3):
            acc = cuda.fp16.hfma(np.float16(w[k]), x[i - 1 + k], acc)
        out[i] = acc
        v = acc
    # Numba's syncthreads_count takes an int predicate.
    above = cuda.syncthreads_count(1 if np.float32(v) > threshold else 0)
    if cuda.threadIdx.x == 0:
        counts[cuda.blockIdx.x] = above
        print("block", cuda.blockIdx.x, "counts", above, "of", cuda.blockDim.x, "above", threshold)


def main():
    x = (np.arange(N) % 7).astype(np.float16) * np.float16(0.25)
    out = np.zeros(N, dtype=np.float16)
    blocks = (N + BLOCK - 1) // BLOCK
    counts = np.zeros(blocks, dtype=np.int32)
    smooth_and_count[blocks, BLOCK](x, np.float32(0.5), out, counts)
    cuda.synchronize()
    print("counts", " ".join(str(c) for c in counts))
    print("out", " ".join(f"{float(v):.4f}" for v in out[:12]))
    print("sum", f"{float(out.astype(np.float32).sum()):.4f}")


if __name__ == "__main__":
    main()
