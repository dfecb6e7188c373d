#!/usr/bin/env bash
# Runs every test and example binary of the GPU bundle under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck, and prints one summary line per
# binary and tool, then the total number of reports.
#
#   scripts/gpu-bundle.sh              # here: copies this script into .gpu-bundle/
#   bash .gpu-bundle/sanitize.sh       # on the GPU machine
#
# SANITIZER_TOOLS picks tools (default: all four); the tools of
# SANITIZE_JOBS binaries (default 2) run at the same time; SANITIZE_ONLY (names
# separated by spaces) runs only those binaries, to split a run. Each binary's
# lines are printed as soon as its tools have finished. Full logs go to
# /tmp/sanitizer, and as one archive to $OUT/sanitizer-logs.tar.gz when $OUT
# is set.
# Tests and examples use their small sizes (GPU_TEST_SMALL=1): instrumentation
# slows kernels down by orders of magnitude.
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
export GPU_TEST_SMALL=1
tools="${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}"
logs=/tmp/sanitizer
jobs="${SANITIZE_JOBS:-2}"
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
        simulator | simulated_devices | simulated_four_devices | device_attacks) echo "runs on the CPU simulator only (no CUDA call to check)" ;;
        *) return 1 ;;
    esac
}

# Reports in a finished log: memcheck, synccheck and initcheck end with
# "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: N hazards
# displayed (E errors, W warnings)".
reports_in() {
    local log="$1" n
    n="$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazards' "$log" | tail -n 1 | awk '{print $3}')"
    [ -n "$n" ] || n="$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" | tail -n 1 | awk '{print $3}')"
    echo "$n"
}

run_binary() { # runs every tool on one binary, then prints its lines
    local bin="$1" name tool args=() reports status
    name="$(basename "$bin")"
    [ "${bin%%/*}" = tests ] && args=(--include-ignored)
    for tool in $tools; do
        (
            timeout "${SANITIZE_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --print-limit 50 \
                "$bin" "${args[@]}" >"$logs/$name.$tool.log" 2>&1
            echo $? >"$logs/$name.$tool.status"
        ) &
    done
    wait
    for tool in $tools; do
        reports="$(reports_in "$logs/$name.$tool.log")"
        status="$(cat "$logs/$name.$tool.status")"
        printf 'sanitize: %-10s %-28s %s reports, exit %s\n' "$tool" "$name" "${reports:-?}" "$status"
    done
}

binaries=()
for bin in tests/* examples/*; do
    name="$(basename "$bin")"
    if [ -n "${SANITIZE_ONLY:-}" ] && [[ " $SANITIZE_ONLY " != *" $name "* ]]; then
        continue
    fi
    if reason="$(skip_reason "$name")"; then
        printf 'sanitize: %-28s not run: %s\n' "$name" "$reason"
    else
        binaries+=("$bin")
    fi
done
for ((i = 0; i < ${#binaries[@]}; i += jobs)); do
    for bin in "${binaries[@]:i:jobs}"; do run_binary "$bin" & done
    wait
done

total=0
failed_runs=""
for bin in "${binaries[@]}"; do
    name="$(basename "$bin")"
    for tool in $tools; do
        reports="$(reports_in "$logs/$name.$tool.log")"
        status="$(cat "$logs/$name.$tool.status" 2>/dev/null || echo '?')"
        if [ -z "$reports" ]; then
            failed_runs="$failed_runs $name/$tool"
        else
            total=$((total + reports))
        fi
        [ "$status" = 0 ] || failed_runs="$failed_runs $name/$tool(exit $status)"
    done
done
[ -n "${OUT:-}" ] && tar czf "$OUT/sanitizer-logs.tar.gz" -C /tmp sanitizer
[ -n "$failed_runs" ] && echo "sanitize: runs that did not finish cleanly:$failed_runs"
echo "sanitize: $total reports in all (${#binaries[@]} binaries)"
[ "$total" -eq 0 ] && [ -z "$failed_runs" ]
