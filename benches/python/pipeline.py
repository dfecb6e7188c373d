"""CuPy and Numba sides of benches/transfers_and_pipeline.rs.

Usage: python3 pipeline.py ROUNDS
The Day 7 pipeline (256 MiB of f32, 16 chunks, 4 streams, the same busy
kernel with the same rounds), timed with events (median of 5 after a warm-up).
Prints `RESULT <name> <value> <unit>`.
"""
import statistics
import sys

import numpy as np

np.row_stack = np.vstack  # numba-cuda with numpy 2.5 needs this before import

N = 64 << 20
CHUNKS = 16
STREAMS = 4
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 100

BUSY = r"""
extern "C" __global__ void busy(const float* x, unsigned rounds, float* out, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (unsigned r = 0; r < rounds; ++r) v = __fmaf_rn(v, 0.999f, 0.001f);
        out[i] = v;
    }
}
"""


def expected(host_in, rounds):
    """Every round a fused multiply-add, as the kernels compute it: the product
    of two floats is exact in float64, so float64 arithmetic rounded once to
    float32 gives the fused result (but for double-rounding ties, which the
    comparisons below tolerate)."""
    idx = np.arange(0, N, 4099)
    v = host_in[idx].copy()
    for _ in range(rounds):
        v = (v.astype(np.float64) * np.float32(0.999) + np.float32(0.001)).astype(np.float32)
    return idx, v


def cupy_side():
    import cupy as cp

    kernel = cp.RawKernel(BUSY, "busy")
    mem_in = cp.cuda.alloc_pinned_memory(N * 4)
    mem_out = cp.cuda.alloc_pinned_memory(N * 4)
    host_in = np.frombuffer(mem_in, np.float32, N)
    host_out = np.frombuffer(mem_out, np.float32, N)
    host_in[:] = (np.arange(N) % 1000).astype(np.float32) / 1000
    chunk = N // CHUNKS
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
    din = [cp.empty(chunk, cp.float32) for _ in range(STREAMS)]
    dout = [cp.empty(chunk, cp.float32) for _ in range(STREAMS)]
    times = []
    for rep in range(6):
        cp.cuda.Device().synchronize()
        start = streams[0].record()
        for s in streams[1:]:
            s.wait_event(start)
        for c in range(CHUNKS):
            k = c % STREAMS
            s = streams[k]
            sl = slice(c * chunk, (c + 1) * chunk)
            din[k].set(host_in[sl], stream=s)
            with s:
                kernel(((chunk + 255) // 256,), (256,), (din[k], np.uint32(ROUNDS), dout[k], np.uint64(chunk)))
            dout[k].get(stream=s, out=host_out[sl])
        for s in streams[1:]:
            streams[0].wait_event(s.record())
        end = streams[0].record()
        end.synchronize()
        if rep > 0:
            times.append(cp.cuda.get_elapsed_time(start, end))
    idx, want = expected(host_in, ROUNDS)
    assert np.allclose(host_out[idx], want, rtol=1e-5), "CuPy pipeline result differs"
    print(f"RESULT cupy_pipeline_ms {statistics.median(times):.4f} ms", flush=True)


def numba_side():
    from numba import cuda

    @cuda.jit
    def busy(x, rounds, out):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            for _ in range(rounds):
                v = cuda.fma(v, np.float32(0.999), np.float32(0.001))
            out[i] = v

    host_in = cuda.pinned_array(N, dtype=np.float32)
    host_out = cuda.pinned_array(N, dtype=np.float32)
    host_in[:] = (np.arange(N) % 1000).astype(np.float32) / 1000
    chunk = N // CHUNKS
    streams = [cuda.stream() for _ in range(STREAMS)]
    din = [cuda.device_array(chunk, np.float32) for _ in range(STREAMS)]
    dout = [cuda.device_array(chunk, np.float32) for _ in range(STREAMS)]
    times = []
    for rep in range(6):
        cuda.synchronize()
        start, end = cuda.event(), cuda.event()
        start.record(streams[0])
        for s in streams[1:]:
            start.wait(s)
        for c in range(CHUNKS):
            k = c % STREAMS
            s = streams[k]
            sl = slice(c * chunk, (c + 1) * chunk)
            din[k].copy_to_device(host_in[sl], stream=s)
            busy[(chunk + 255) // 256, 256, s](din[k], ROUNDS, dout[k])
            dout[k].copy_to_host(host_out[sl], stream=s)
        for s in streams[1:]:
            e = cuda.event(timing=False)
            e.record(s)
            e.wait(streams[0])
        end.record(streams[0])
        end.synchronize()
        if rep > 0:
            times.append(cuda.event_elapsed_time(start, end))
    idx, want = expected(np.asarray(host_in), ROUNDS)
    got = np.asarray(host_out)[idx]
    assert np.allclose(got, want, rtol=1e-5), "Numba pipeline result differs"
    print(f"RESULT numba_pipeline_ms {statistics.median(times):.4f} ms", flush=True)


if __name__ == "__main__":
    for side in (cupy_side, numba_side):
        try:
            side()
        except Exception as e:
            print(f"FAILED {side.__name__}: {type(e).__name__}: {e}", flush=True)
