"""CuPy side of benches/streams_and_ops.rs: prints `RESULT <name> <value> <unit>`."""
import statistics
import time

import cupy as cp

N = 1 << 28
REPEATS = 30


def gpu_ms(work):
    for _ in range(3):
        work()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(REPEATS):
        start.record()
        work()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def host_ns(op):
    rounds = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(100_000):
            op()
        rounds.append((time.perf_counter() - t0) / 100_000 * 1e9)
    return statistics.median(rounds)


def main():
    a = (cp.arange(N, dtype=cp.float32) * 7919 % 1000) / 1000
    nbytes = N * 4
    ms = gpu_ms(lambda: cp.sum(a))
    print(f"RESULT cupy_sum_gbps {nbytes / (ms * 1e-3) / 1e9:.1f} GB/s", flush=True)
    b = cp.asarray(0.5, dtype=cp.float32)
    ms = gpu_ms(lambda: b * a + 8)
    print(f"RESULT cupy_axpb_gbps {2 * nbytes / (ms * 1e-3) / 1e9:.1f} GB/s", flush=True)

    s = cp.cuda.Stream(non_blocking=True)

    def scope():
        with s:
            pass

    print(f"RESULT cupy_scope_ns {host_ns(scope):.1f} ns", flush=True)
    e = cp.cuda.Event()
    print(f"RESULT cupy_record_ns {host_ns(lambda: e.record(s)):.1f} ns", flush=True)
    s.synchronize()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the table shows which side failed
        print(f"FAILED {type(e).__name__}: {e}", flush=True)
