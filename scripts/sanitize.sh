#!/usr/bin/env bash
# Runs every test and example binary of the GPU bundle under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck, and prints one summary line per
# binary and tool, then the total number of reports.
#
#   scripts/gpu-bundle.sh              # here: copies this script into .gpu-bundle/
#   bash .gpu-bundle/sanitize.sh       # on the GPU machine
#
# SANITIZER_TOOLS picks tools (default: all four); the four tools of one binary
# run at the same time. Full logs go to $OUT/sanitizer (or /tmp/sanitizer).
# Tests use their small sizes (GPU_TEST_SMALL=1): instrumentation slows kernels
# down by orders of magnitude.
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
export GPU_TEST_SMALL=1
tools="${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}"
logs="${OUT:-/tmp}/sanitizer"
mkdir -p "$logs"
if ! command -v compute-sanitizer >/dev/null; then
    echo "sanitize: compute-sanitizer is not on the PATH"
    exit 1
fi

# Binaries left out, each with its reason: they fail on purpose, or make no
# CUDA call at all.
skip_reason() {
    case "$1" in
        no_gpu) echo "hides the GPU on purpose (its driver calls fail by design)" ;;
        gpu_kernel_panic) echo "a kernel traps on purpose" ;;
        simulator | simulated_devices | simulated_four_devices) echo "runs on the CPU simulator only (no CUDA call to check)" ;;
        *) return 1 ;;
    esac
}

total=0
failed_runs=""
for bin in tests/* examples/*; do
    name="$(basename "$bin")"
    if reason="$(skip_reason "$name")"; then
        printf 'sanitize: %-28s not run: %s\n' "$name" "$reason"
        continue
    fi
    args=()
    [ "${bin%%/*}" = tests ] && args=(--include-ignored)
    for tool in $tools; do
        (
            timeout 300 compute-sanitizer --tool "$tool" --print-limit 50 \
                "$bin" "${args[@]}" >"$logs/$name.$tool.log" 2>&1
            echo $? >"$logs/$name.$tool.status"
        ) &
    done
    wait
    for tool in $tools; do
        log="$logs/$name.$tool.log"
        reports="$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | tail -n 1 | awk '{print $3}')"
        status="$(cat "$logs/$name.$tool.status")"
        if [ -z "$reports" ]; then
            reports="?"
            failed_runs="$failed_runs $name/$tool"
        else
            total=$((total + reports))
        fi
        [ "$status" = 0 ] || failed_runs="$failed_runs $name/$tool(exit $status)"
        printf 'sanitize: %-10s %-28s %s reports, exit %s\n' "$tool" "$name" "$reports" "$status"
    done
done
[ -n "$failed_runs" ] && echo "sanitize: runs that did not finish cleanly:$failed_runs"
echo "sanitize: $total reports in all"
[ "$total" -eq 0 ] && [ -z "$failed_runs" ]
