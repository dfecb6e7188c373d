#!/usr/bin/env bash
# Builds and runs the CUDA C twins of issues #20 and #22 (patterns.cu, gemm_tc.cu)
# and their torch baselines (benches/python/patterns_torch.py, gemm_torch.py) on
# a GPU machine, in at most ~6 minutes, and prints every result table last.
#
#   bash benches/cuda/run_twins.sh          # --quick checks first, then the full runs
#   bash benches/cuda/run_twins.sh --quick  # the correctness checks only (~1 minute)
#
# Needs nvcc (PATH, $NVCC, or /usr/local/cuda*/bin) and nvidia-smi; torch for the
# Python baselines (skipped with a line if missing). Every step has a timeout, and
# all of them together stop at TWINS_DEADLINE seconds (default 540, under the
# 10 minutes a GPU command may take); a step that fails, times out or is skipped
# says so and the others still run. Logs and binaries go to $OUT/twins (or
# /tmp/twins). Exit status: 0 if every step passed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python_dir="$(cd "$here/../python" 2>/dev/null && pwd || echo "$here")" # or beside this script (a flat bundle)
work="${OUT:-/tmp}/twins"
mkdir -p "$work"
rm -f "$work"/*.log "$work"/ptxas-*.txt # no stale results from an earlier run
quick_only=0
[ "${1:-}" = "--quick" ] && quick_only=1
failed=""
deadline=$((SECONDS + ${TWINS_DEADLINE:-540}))
note() { printf '=== %s\n' "$*"; }
# budget SECONDS: SECONDS, or what is left before the deadline if that is less.
budget() {
    local left=$((deadline - SECONDS))
    [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}

nvcc="${NVCC:-$(command -v nvcc || true)}"
if [ -z "$nvcc" ]; then
    for candidate in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
        [ -x "$candidate" ] && nvcc="$candidate" && break
    done
fi
if [ -z "$nvcc" ]; then
    note "no nvcc found (set NVCC=...): the CUDA C twins cannot be built"
    exit 1
fi
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '. ')"
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm --format=csv,noheader
note "nvcc: $("$nvcc" --version | tail -n 1); GPU compute capability $cap"
if [ "$cap" = 90 ]; then
    gemm_arch="-gencode=arch=compute_90a,code=sm_90a"
else
    gemm_arch="-arch=sm_$cap" # the wgmma kernels need sm_90a: gemm_tc skips them here
fi

# build NAME ARCH-FLAGS EXTRA-LIBS: with cuBLAS, or without it if -lcublas does not link.
build() {
    local name="$1" arch="$2" libs="$3" log="$work/build-$1.log"
    if timeout "$(budget 180)" "$nvcc" -O3 -std=c++17 $arch -Xptxas -v -o "$work/$name" "$here/$name.cu" -lcublas \
        $libs >"$log" 2>&1; then
        return 0
    fi
    if grep -q "cublas" "$log" && timeout "$(budget 180)" "$nvcc" -O3 -std=c++17 $arch -DTWINS_NO_CUBLAS -Xptxas -v \
        -o "$work/$name" "$here/$name.cu" $libs >>"$log" 2>&1; then
        echo "$name: built WITHOUT cuBLAS (-lcublas did not link; see $log)"
        return 0
    fi
    echo "$name: build FAILED; the end of $log:"
    tail -n 30 "$log"
    return 1
}
note "building patterns.cu (sm_$cap) and gemm_tc.cu ($gemm_arch) in parallel"
build patterns "-arch=sm_$cap" "" &
patterns_build=$!
build gemm_tc "$gemm_arch" "-lcuda" &
gemm_build=$!
built=""
wait "$patterns_build" && built="$built patterns" || failed="$failed build-patterns"
wait "$gemm_build" && built="$built gemm_tc" || failed="$failed build-gemm_tc"
for name in $built; do # resource figures, one line per kernel (CUB's own kernels left out)
    awk '/Compiling entry function/ { k = $0; sub(/.*function ./, "", k); sub(/. for .*/, "", k) }
         /spill stores/ { s = $0; sub(/^ +/, "", s) }
         /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); if (k !~ /cub/) printf "  %s: %s; %s\n", k, r, s }' \
        "$work/build-$name.log" >"$work/ptxas-$name.txt"
done

# step NAME SECONDS COMMAND...: runs with a timeout, output to the screen and $work/NAME.log.
step() {
    local name="$1" seconds
    seconds="$(budget "$2")"
    shift 2
    if [ "$seconds" -lt 15 ]; then
        echo "=== $name: SKIPPED (the ${TWINS_DEADLINE:-540} s deadline is reached)" | tee "$work/$name.log"
        failed="$failed $name"
        return
    fi
    note "$name"
    timeout --kill-after=5 "$seconds" "$@" 2>&1 | tee "$work/$name.log"
    local rc="${PIPESTATUS[0]}"
    if [ "$rc" -ne 0 ]; then
        [ "$rc" -eq 124 ] && echo "--- $name: TIMED OUT after $seconds s" | tee -a "$work/$name.log"
        echo "--- $name: FAILED (exit $rc)"
        failed="$failed $name"
    fi
}

python_ok=0
python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1 && python_ok=1
[ "$python_ok" = 1 ] || note "python3 with a CUDA torch not found: the torch baselines are skipped"

for name in $built; do step "$name-quick" 90 "$work/$name" --quick; done
if [ "$quick_only" = 0 ]; then
    for name in $built; do
        flags=""
        # A cluster variant that hung or failed in --quick would end the full run early: leave them out.
        if [ "$name" = gemm_tc ] && grep -qE "^HANG|^FAILED .*cluster" "$work/gemm_tc-quick.log" 2>/dev/null; then
            echo "=== gemm_tc: the cluster variants failed in --quick; the full run leaves them out (--no-cluster)"
            flags="--no-cluster"
        fi
        step "$name-full" 150 "$work/$name" $flags
    done
    if [ "$python_ok" = 1 ]; then
        step patterns_torch 120 python3 "$python_dir/patterns_torch.py"
        step gemm_torch 90 python3 "$python_dir/gemm_torch.py"
    fi
elif [ "$python_ok" = 1 ]; then
    step patterns_torch-quick 90 python3 "$python_dir/patterns_torch.py" --quick
    step gemm_torch-quick 90 python3 "$python_dir/gemm_torch.py" --quick
fi

echo
note "ptxas resource figures (registers, spills)"
cat "$work"/ptxas-*.txt 2>/dev/null
echo
note "RESULT TABLES"
for log in "$work"/*-quick.log "$work"/*-full.log "$work"/patterns_torch.log "$work"/gemm_torch.log; do
    [ -e "$log" ] || continue
    echo
    echo "#### $(basename "$log" .log)"
    grep -E "^(device:|RATIO|FAILED|HANG)" "$log"
    # the tables: from the first '### ' line to the end (or, if it died first, its last lines)
    if grep -q '^### ' "$log"; then awk '/^### /{show=1} show' "$log"; else tail -n 5 "$log"; fi
done
echo
if [ -n "$failed" ]; then
    note "FAILED steps:$failed (logs in $work)"
    exit 1
fi
note "every step passed (logs in $work)"
