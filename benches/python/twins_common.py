"""What the torch baselines of the CUDA C twins share (patterns_torch.py, gemm_torch.py):
timing with CUDA events and the result table, in the format of benches/cuda/twins.h."""
import statistics
import sys

import torch

WARMUP = 5
TIMED = 30  # median of 30 per-launch times, as the CUDA C twins

_rows = []
failures = 0


def median_ms(work):
    """Median of TIMED per-call times of `work` (CUDA events around each call), after WARMUP calls."""
    for _ in range(WARMUP):
        work()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(TIMED):
        start.record()
        work()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    print(f"  per-call ms: min {times[0]:.4f}, median {times[len(times) // 2]:.4f}, max {times[-1]:.4f}", flush=True)
    return times[len(times) // 2]


def add_row(table, kernel, size, ms, rate, unit, max_error, ok):
    """Records one table row and prints its RESULT (or FAILED) line."""
    global failures
    if ok and ms is not None:
        print(f"RESULT {kernel} | {size} | {ms:.4f} ms | {rate:.1f} {unit}", flush=True)
    if not ok:
        failures += 1
        print(f"FAILED {kernel} {size} ({table})", flush=True)
    _rows.append((table, kernel, size, ms, rate, unit, max_error, ok))


def run(table, kernel, size, work, check, amount, unit, quick):
    """Runs `work` once and checks it, times it (unless quick), checks again, adds the row.
    `amount` is bytes (unit GB/s) or flops (unit TFLOP/s); `check()` returns (ok, max_error)."""
    try:
        work()
        torch.cuda.synchronize()
        ok, err = check()
        ms = None
        if ok and not quick:
            ms = median_ms(work)
            ok2, err2 = check()
            ok, err = ok and ok2, max(err, err2)
        scale = 1e9 if unit == "GB/s" else 1e12
        rate = amount / (ms * 1e-3) / scale if ms else 0.0
        add_row(table, kernel, size, ms, rate, unit, err, ok)
    except Exception as e:  # the table shows which row failed, and the others still run
        print(f"  {kernel} {size}: {type(e).__name__}: {e}", flush=True)
        add_row(table, kernel, size, None, 0.0, unit, float("nan"), False)


def print_tables():
    order = []
    for r in _rows:
        if r[0] not in order:
            order.append(r[0])
    for t in order:
        print(f"\n### {t}\n\n| kernel | size | median ms | rate | max error | check |\n|---|---|---|---|---|---|")
        for table, kernel, size, ms, rate, unit, err, ok in _rows:
            if table != t:
                continue
            ms_s = f"{ms:.4f}" if ms else "-"
            rate_s = f"{rate:.1f} {unit}" if ms else "-"
            print(f"| {kernel} | {size} | {ms_s} | {rate_s} | {err:.3g} | {'ok' if ok else 'WRONG'} |")
    sys.stdout.flush()


def header():
    quick = "--quick" in sys.argv
    if not torch.cuda.is_available():
        print("FAILED: torch sees no CUDA device", flush=True)
        sys.exit(1)
    p = torch.cuda.get_device_properties(0)
    print(f"device: {p.name}, sm_{p.major}{p.minor}, {p.multi_processor_count} SMs; torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}", flush=True)
    return quick


def finish():
    print_tables()
    if failures:
        print(f"{failures} check(s) failed", flush=True)
        sys.exit(1)
