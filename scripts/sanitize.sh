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
#
# Before the binaries, CUDA C probes (scripts/sanitizer-probes/, built with
# nvcc) measure what a tool or NCCL does with none of this crate's code: which
# tools make asynchronous copies wait for their stream (held_copy.cu: the
# tests asserting a held copy is pending are left out under those tools), and
# which reports NCCL's own initialisation makes (nccl_init.cu: such reports
# from inside NCCL are counted apart, and printed), and under which tools a
# stream call deadlocks while another thread that used its per-thread default
# stream is ending (thread_exit_overlap.cu: test binaries then run one test at
# a time, for libtest joins each test's thread before it starts the next).
# Every test or binary left out under a tool is printed with its reason.
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
        gpu_kernel_panic | gpu_async_fault | gpu_assert | gpu_assert_in_one_lane) echo "a kernel traps on purpose" ;;
        sanitizer_names_rust_lines) echo "reads memory nothing wrote on purpose (the demonstration of initcheck naming Rust lines)" ;;
        unit-gpu_builder) echo "runs the kernel toolchain (rustc, LLVM), no CUDA call (and crashes under the sanitizer's injection, seen on an H200)" ;;
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

# How a binary's tests run under the sanitizer when not as in run-all.sh (tests
# left out, or one at a time), with the reason (printed once per binary).
skipped_tests() {
    case "$1" in
        gpu_multi_device)
            echo "NCCL's bootstrap between processes hangs under compute-sanitizer: the multi-process tests run in run-all.sh only; the rest run one at a time (NCCL communicators made from several test threads at once crashed the sanitized process on an H200; one at a time they run clean)" >&2
            echo "--skip ranks_in_separate_processes --skip rank_process_of_multi_process_tests --test-threads=1"
            ;;
    esac
}

# The probes: CUDA C programs, built here with nvcc, that show what a tool or
# a library does with none of this crate's code (scripts/sanitizer-probes/).
probes=/tmp/sanitizer-probes
mkdir -p "$probes"
build_probe() { # name, source, libraries...
    local name="$1" source="$2"
    shift 2
    nvcc -O2 -o "$probes/$name" "sanitizer-probes/$source" "$@" >"$probes/$name.build.log" 2>&1 ||
        echo "sanitize: nvcc could not build sanitizer-probes/$source ($probes/$name.build.log): its probe is not run"
}
build_probe held-copy held_copy.cu -lcuda
build_probe nccl-init nccl_init.cu -ldl
build_probe thread-exit-overlap thread_exit_overlap.cu -lcuda

# Tools under which a copy queued behind a held stream is done when its call
# returns (the held-copy probe exits 2): the call waits for the stream. Memory
# is still ordered as the stream says, but a test that asserts a held copy is
# still pending cannot hold under such a tool.
copies_wait_under=""
for tool in $tools; do
    [ -x "$probes/held-copy" ] || break
    compute-sanitizer --tool "$tool" "$probes/held-copy" >"$logs/probe-held-copy.$tool.log" 2>&1
    if [ $? -eq 2 ]; then
        copies_wait_under="$copies_wait_under $tool"
        echo "sanitize: under $tool, asynchronous copies wait for their stream (CUDA C probe, sanitizer-probes/held_copy.cu):"
        grep '^held-copy probe:' "$logs/probe-held-copy.$tool.log" | sed 's/^/sanitize:     /'
    fi
done

# Tests left out under one tool only, as test arguments (or "the whole
# example" for an example, which is then not run under that tool), with the
# reason on stderr; each runs under the other tools and in run-all.sh.
left_out_under() { # tool, binary name
    if [[ " $copies_wait_under " == *" $1 "* ]]; then
        local held=""
        case "$2" in
            pinned) held="reading_waits_for_a_copy_into_the_buffer dropping_waits_for_pending_copies" ;;
            pinned_batches) held="copies_into_a_buffer_are_tracked_when_the_batch_ends" ;;
            pipeline) held="run_only_queues_and_reading_the_output_waits" ;;
            async_pipeline) held="the whole example" ;;
        esac
        if [ -n "$held" ]; then
            echo "$held: it asserts a copy held behind a stream is still pending, which $1 does not keep (probe above)" >&2
            [ "$held" = "the whole example" ] && echo "$held" || printf -- '--skip %s ' $held
        fi
    fi
}

# Tools under which a stream call on one thread deadlocks while another thread
# that used CUDA is ending (the thread-exit-overlap probe, in each of its
# modes, with a watchdog that ends it after 20 s; on an H200 every tool
# deadlocks when the ending thread used its per-thread default stream, none
# when it used another stream): the driver tears a thread's per-thread stream
# down after the thread's code has returned, and a program that learns the
# thread is done before joining it (libtest with several test threads, Rust's
# thread::scope) goes on meanwhile. Under such a tool the test binaries run
# one test at a time: libtest then joins each test's thread before it starts
# the next.
joins_needed_under=""
for tool in $tools; do
    [ -x "$probes/thread-exit-overlap" ] || break
    for mode in per-thread other-stream join-first; do
        timeout 60 compute-sanitizer --tool "$tool" "$probes/thread-exit-overlap" "$mode" 20 \
            >"$logs/probe-thread-exit-overlap.$tool.$mode.log" 2>&1 &
    done
done
wait
for tool in $tools; do
    [ -x "$probes/thread-exit-overlap" ] || break
    if ! grep -q 'rounds done' "$logs/probe-thread-exit-overlap.$tool.per-thread.log" ||
        ! grep -q 'rounds done' "$logs/probe-thread-exit-overlap.$tool.other-stream.log"; then
        joins_needed_under="$joins_needed_under $tool"
        echo "sanitize: under $tool, a stream call deadlocks while another thread that used CUDA is ending, so test binaries run one test at a time (CUDA C probe, sanitizer-probes/thread_exit_overlap.cu):"
        for mode in per-thread other-stream join-first; do
            grep -h '^thread-exit-overlap probe' "$logs/probe-thread-exit-overlap.$tool.$mode.log" | sed 's/^/sanitize:     /'
        done
    fi
done

# What NCCL's own initialisation reports under each tool, with no other code
# (the nccl-init probe): the first line of each report from inside NCCL, one
# per line, in $probes/nccl-own.TOOL. Reports in other logs with the same text,
# from inside NCCL, are NCCL's own and are counted apart.
nccl_python_library() {
    python3 -c 'import importlib.util, os; s = importlib.util.find_spec("nvidia.nccl"); print(os.path.join(list(s.submodule_search_locations)[0], "lib", "libnccl.so.2"))' 2>/dev/null
}
nccl_report_heads() { # the first lines of a log's reports from inside NCCL
    awk '/^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER|Target application/ { if (block && nccl) print head; block = 1; nccl = 0; head = substr($0, 11); next }
         /^=========  / { if (/libnccl/) nccl = 1; next }
         { if (block && nccl) print head; block = 0; nccl = 0 }
         END { if (block && nccl) print head }' "$1"
}
for tool in $tools; do
    : >"$probes/nccl-own.$tool"
    [ -x "$probes/nccl-init" ] || continue
    compute-sanitizer --tool "$tool" "$probes/nccl-init" "$(nccl_python_library)" >"$logs/probe-nccl-init.$tool.log" 2>&1
    nccl_report_heads "$logs/probe-nccl-init.$tool.log" >"$probes/nccl-init.$tool.heads"
    sort -u "$probes/nccl-init.$tool.heads" >"$probes/nccl-own.$tool"
    count="$(wc -l <"$probes/nccl-init.$tool.heads")"
    if [ "$count" -gt 0 ]; then
        echo "sanitize: under $tool, NCCL's own initialisation makes $count reports with no other code (CUDA C probe, sanitizer-probes/nccl_init.cu; $(grep -h '^nccl-init probe:' "$logs/probe-nccl-init.$tool.log")):"
        sed 's/^/sanitize:     /' "$probes/nccl-own.$tool"
    fi
done

# Reports in a finished log that NCCL's own initialisation makes: from inside
# NCCL, with a text the nccl-init probe's reports have under the same tool.
nccl_own_reports_in() { # log, tool
    if [ -s "$probes/nccl-own.$2" ]; then
        nccl_report_heads "$1" | grep -cxF -f "$probes/nccl-own.$2"
    else
        echo 0
    fi
}

# A binary that made no CUDA call (a test of the simulator, a unit test of a
# crate without driver calls): the sanitizer has nothing to check, and says
# so; its tests must still have passed.
no_cuda_call() {
    grep -q 'Target application terminated before first instrumented API call' "$1" &&
        grep -q '^test result: ok' "$1" && ! grep -q '^test result: FAILED' "$1"
}

# A finished log's reports: "COUNTED OWN", where OWN are NCCL's own (see
# above) and COUNTED all the others ("?" when the log has no summary: the run
# did not finish).
report_counts() { # log, tool
    local all own
    all="$(reports_in "$1")"
    own="$(nccl_own_reports_in "$1" "$2")"
    if [ -n "$all" ]; then echo "$((all - own)) $own"; else echo "? $own"; fi
}

run_binary() { # runs every tool on one binary, then prints its lines
    local bin="$1" name tool args=() tool_args left_out reports status skip own ran=""
    name="$(basename "$bin")"
    [ "${bin%%/*}" = tests ] && args=(--include-ignored)
    skip="$(skipped_tests "$name" 2>/dev/null)"
    if [ -n "$skip" ]; then
        printf 'sanitize: %-28s test arguments: %s\n' "$name" "$(skipped_tests "$name" 2>&1 >/dev/null)"
        # shellcheck disable=SC2206
        args+=($skip)
    fi
    for tool in $tools; do
        tool_args=("${args[@]}")
        if [ "${bin%%/*}" = tests ] && [[ " $joins_needed_under " == *" $tool "* ]] &&
            [[ " ${tool_args[*]} " != *" --test-threads=1 "* ]]; then
            tool_args+=(--test-threads=1) # one test at a time: the probe above
        fi
        left_out="$(left_out_under "$tool" "$name" 2>/dev/null)"
        if [ -n "$left_out" ]; then
            left_out_under "$tool" "$name" 2>&1 >/dev/null | while read -r reason; do
                printf 'sanitize: %-10s %-28s leaves out %s\n' "$tool" "$name" "$reason"
            done
            [ "$left_out" = "the whole example" ] && { rm -f "$logs/$name.$tool.log"; continue; }
            # shellcheck disable=SC2206
            tool_args+=($left_out)
        fi
        ran="$ran $tool"
        (
            timeout "${SANITIZE_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --print-limit 50 \
                "$bin" "${tool_args[@]}" >"$logs/$name.$tool.log" 2>&1
            echo $? >"$logs/$name.$tool.status"
        ) &
    done
    wait
    for tool in $ran; do
        read -r reports own < <(report_counts "$logs/$name.$tool.log" "$tool")
        status="$(cat "$logs/$name.$tool.status")"
        if no_cuda_call "$logs/$name.$tool.log"; then
            printf 'sanitize: %-10s %-28s no CUDA call, nothing to check (its tests passed)\n' "$tool" "$name"
        elif [ "$own" -gt 0 ]; then
            printf "sanitize: %-10s %-28s %s reports (and %s of NCCL's own initialisation, as its probe makes them), exit %s\n" "$tool" "$name" "$reports" "$own" "$status"
        else
            printf 'sanitize: %-10s %-28s %s reports, exit %s\n' "$tool" "$name" "$reports" "$status"
        fi
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
nccl_own=0
failed_runs=""
for bin in "${binaries[@]}"; do
    name="$(basename "$bin")"
    for tool in $tools; do
        [ -f "$logs/$name.$tool.log" ] || continue # left out under this tool (printed above)
        no_cuda_call "$logs/$name.$tool.log" && continue
        read -r reports own < <(report_counts "$logs/$name.$tool.log" "$tool")
        nccl_own=$((nccl_own + own))
        status="$(cat "$logs/$name.$tool.status" 2>/dev/null || echo '?')"
        if [ "$reports" = "?" ]; then
            failed_runs="$failed_runs $name/$tool"
        else
            total=$((total + reports))
        fi
        [ "$status" = 0 ] || failed_runs="$failed_runs $name/$tool(exit $status)"
    done
done
[ -n "${OUT:-}" ] && tar czf "$OUT/sanitizer-logs.tar.gz" -C /tmp sanitizer sanitizer-probes
[ -n "$failed_runs" ] && echo "sanitize: runs that did not finish cleanly:$failed_runs"
if [ "$nccl_own" -gt 0 ]; then
    echo "sanitize: $total reports in all (${#binaries[@]} binaries); counted apart: $nccl_own made inside NCCL's own initialisation, which makes them with no other code (nccl-init probe)"
else
    echo "sanitize: $total reports in all (${#binaries[@]} binaries)"
fi
[ "$total" -eq 0 ] && [ -z "$failed_runs" ]
