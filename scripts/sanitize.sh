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
# separated by spaces) runs only those binaries, to split a run; SANITIZE_FILTER
# (libtest filters, e.g. "graphs:: streams::") runs only the test binaries'
# tests whose names hold one of them, to split the suite's run by module. Each binary's
# lines are printed as soon as its tools have finished. Full logs go to
# /tmp/sanitizer, and as one archive to $OUT/sanitizer-logs.tar.gz when $OUT
# is set.
# Tests and examples use their small sizes (GPU_TEST_SMALL=1): instrumentation
# slows kernels down by orders of magnitude.
#
# Before the binaries, CUDA C probes (scripts/sanitizer-probes/, built with
# nvcc) measure what a tool or NCCL does with none of this crate's code: which
# tools make asynchronous copies wait for their stream (held_copy.cu), and
# which make kernel launches wait, or run streams or kernels one after another
# (held_kernel.cu): the tests asserting how long a wait behind a held stream
# took, or that work behind it is still pending, are left out under those
# tools; which reports NCCL's own initialisation and first all-reduce make (nccl_init.cu: such
# reports from inside NCCL are counted apart, and printed), and under which
# tools a stream call deadlocks while another thread that used its per-thread
# default stream is ending (thread_exit_overlap.cu: test binaries then run one
# test at a time, for libtest joins each test's thread before it starts the
# next). Reports made inside NCCL's own kernels (its collectives: kernels
# named ncclDevKernel_* or ncclKernel_*, or NCCL's device functions
# ncclDevFunc_* inside them, which run on two GPUs and more) are
# counted apart too. Every test or binary left out under a tool is printed
# with its reason.
#
#   bash scripts/sanitize.sh --self-test   # checks the counting of reports on
#                                          # fabricated logs (no GPU needed)
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
# Counting a finished log's reports. These read only the log (and the NCCL
# probe's list, $probes/nccl-own.TOOL), so --self-test checks them on
# fabricated logs.

# Reports in a finished log: memcheck, synccheck and initcheck end with
# "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: N hazards
# displayed (E errors, W warnings)" (one hazard displayed per report).
reports_in() {
    local log="$1" n
    n="$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazards?' "$log" | tail -n 1 | awk '{print $3}')"
    [ -n "$n" ] || n="$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" | tail -n 1 | awk '{print $3}')"
    echo "$n"
}

# One line per report of a finished log: "nccl-kernel" for a report made
# inside one of NCCL's own kernels (its first line, or a device-side line of
# it, "at ...", "and ... at ..." or "Device Frame:", names a kernel
# ncclDevKernel_* or ncclKernel_*), "nccl-host<TAB>HEAD" for another report
# whose host backtrace runs through NCCL (HEAD: its first line), "other" for
# the rest. A report is a line "========= X..." (X a capital letter; not a
# summary or the tool's own lines; it may follow a test's name on its line)
# and the "=========  ..." lines after it.
classify_reports() {
    awk 'function nccl_kernel(line) { return line ~ /(ncclDevKernel|ncclKernel|ncclDevFunc)[_(<]/ }
         function flush() {
             if (block) {
                 if (kernel) print "nccl-kernel"
                 else if (host) print "nccl-host\t" head
                 else print "other"
             }
             block = 0; kernel = 0; host = 0
         }
         # A report may start on the line of a test name (no newline between).
         { i = index($0, "========= "); if (i > 1) $0 = substr($0, i) }
         /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER|Target application/ {
             flush(); block = 1; head = substr($0, 11); kernel = nccl_kernel($0); next
         }
         /^=========  / {
             if (!block) next
             if (/^=========  +(at |and |Device Frame)/ && nccl_kernel($0)) kernel = 1
             if (/libnccl/) host = 1
             next
         }
         { flush() }
         END { flush() }' "$1"
}

# The first lines of a log's reports from inside NCCL's host code (not its
# kernels), one per line.
nccl_report_heads() {
    classify_reports "$1" | awk -F '\t' '$1 == "nccl-host" { print $2 }'
}

# Reports in a finished log made inside NCCL's own kernels.
nccl_kernel_reports_in() {
    classify_reports "$1" | grep -c '^nccl-kernel$'
}

# What identifies a report's first line among NCCL's own: the API error's
# code, "(error N)", where it names one (the tool prints the error's other
# strings garbled at times: "Program hit /lib/.../libnccl.so.2 (error 209) due
# to "/lib/.../libc.so.6"", seen on two H100s), else the whole line.
report_keys() {
    awk '{ k = $0; if (match($0, /\(error [0-9]+\)/)) k = substr($0, RSTART, RLENGTH); print k }'
}

# Reports in a finished log that NCCL's own initialisation and first all-reduce make: from inside
# NCCL, with a key (above) the nccl-init probe's reports have under the same
# tool.
nccl_own_reports_in() { # log, tool
    if [ -s "$probes/nccl-own.$2" ]; then
        nccl_report_heads "$1" | report_keys | grep -cxF -f "$probes/nccl-own.$2"
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

# A finished log's reports: "COUNTED OWN KERNELS", where OWN are NCCL's own
# initialisation's (see above), KERNELS those made inside NCCL's own kernels,
# and COUNTED all the others ("?" when the log has no summary: the run did
# not finish). Reports past the tool's print limit are not printed, so not
# classified: they stay counted.
report_counts() { # log, tool
    local all own kernels
    all="$(reports_in "$1")"
    own="$(nccl_own_reports_in "$1" "$2")"
    kernels="$(nccl_kernel_reports_in "$1")"
    if [ -n "$all" ]; then
        local counted=$((all - own - kernels))
        [ "$counted" -ge 0 ] || counted=0
        echo "$counted $own $kernels"
    else
        echo "? $own $kernels"
    fi
}

# Checks the functions above on fabricated logs in the tools' style.
self_test() {
    local dir failures=0
    dir="$(mktemp -d)"
    probes="$dir"
    expect() { # what, expected, got
        if [ "$2" = "$3" ]; then
            echo "sanitize self-test: ok: $1"
        else
            echo "sanitize self-test: FAILED: $1: expected '$2', got '$3'"
            failures=$((failures + 1))
        fi
    }
    # racecheck on two GPUs: a race inside NCCL's ring kernel, one inside a
    # kernel of ours, one inside NCCL's broadcast kernel, with test output
    # between them.
    cat >"$dir/racecheck.log" <<'LOG'
========= COMPUTE-SANITIZER
running 3 tests
========= Error: Race reported between Write access at void ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)+0x1a70
=========     and Read access at void ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096UL>)+0x1b30 [512 hazards]
=========
========= Warning: Race reported between Write access at block_sum_static+0x2b0
=========     and Read access at block_sum_static+0x300 [32 hazards]
=========
test all_reduce_sums_and_maxes_across_every_device ... ok
========= Error: Race reported between Read access at ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm *, unsigned long, ncclWork *)+0x920
=========     and Write access at ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm *, unsigned long, ncclWork *)+0x980 [64 hazards]
=========
========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)
LOG
    expect "racecheck: all reports" 3 "$(reports_in "$dir/racecheck.log")"
    expect "racecheck: made inside NCCL's kernels" 2 "$(nccl_kernel_reports_in "$dir/racecheck.log")"
    expect "racecheck: counted" "1 0 2" "$(report_counts "$dir/racecheck.log" racecheck)"
    # initcheck: one report inside NCCL's initialisation (as the probe makes
    # it), one inside NCCL's broadcast kernel (launched by NCCL, so also
    # through libnccl: counted once, as a kernel's), one of ours.
    cat >"$dir/initcheck.log" <<'LOG'
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 8 bytes
=========     at 0x3f0 in ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096UL>)
=========     by thread (12,0,0) in block (0,0,0)
=========     Address 0x7f3a00000040
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2dd2fe] in libcuda.so.1
=========         Host Frame: ncclLaunchKernel(ncclComm*, ncclKernelPlan*) [0x9a1c0] in libnccl.so.2
=========
========= Host API memory access error at host access to 0x7f3a00001000 of size 4 bytes
=========     Uninitialized access at 0x7f3a00001000 on access by cudaMemcpy source.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: ncclCommInitRank [0x5a2b1] in libnccl.so.2
=========
========= Uninitialized __global__ memory read of size 4 bytes
=========     at fill+0x80
=========     by thread (0,0,0) in block (0,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2dd2fe] in libcuda.so.1
=========
========= ERROR SUMMARY: 3 errors
LOG
    echo "Host API memory access error at host access to 0x7f3a00001000 of size 4 bytes" >"$dir/nccl-own.initcheck"
    expect "initcheck: NCCL's host-side heads" \
        "Host API memory access error at host access to 0x7f3a00001000 of size 4 bytes" \
        "$(nccl_report_heads "$dir/initcheck.log")"
    expect "initcheck: counted" "1 1 1" "$(report_counts "$dir/initcheck.log" initcheck)"
    # memcheck: NCCL's API errors are keyed by their code, whatever strings
    # the tool prints around it; one of ours with the same code is counted.
    cat >"$dir/memcheck.log" <<'LOG'
========= COMPUTE-SANITIZER
========= Program hit /lib/x86_64-linux-gnu/libnccl.so.2 (error 209) due to "/lib/x86_64-linux-gnu/libc.so.6" on CUDA API call to /usr/local/nvidia/lib64/libcuda.so.1.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame:  [0x1b25fd] in libnccl.so.2
=========
========= Program hit cudaErrorNoKernelImageForDevice (error 209) due to "no kernel image is available for execution on the device" on CUDA API call to cuLaunchKernel.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame:  [0x4cb045] in libcuda.so.1
=========
========= ERROR SUMMARY: 2 errors
LOG
    echo 'Program hit cudaErrorNoKernelImageForDevice (error 209) due to "no kernel image is available for execution on the device" on CUDA API call to cudaFuncGetAttributes.' |
        report_keys >"$dir/nccl-own.memcheck"
    expect "memcheck: the key of an API error" "(error 209)" "$(cat "$dir/nccl-own.memcheck")"
    expect "memcheck: counted" "1 1 0" "$(report_counts "$dir/memcheck.log" memcheck)"
    # synccheck on two GPUs: a barrier report inside one of NCCL's device
    # functions (called by its kernel), one inside a kernel of ours.
    cat >"$dir/synccheck.log" <<'LOG'
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block.
=========     at ncclDevFunc_Broadcast_RING_SIMPLE()+0x21670
=========     by thread (416,0,0) in block (0,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========
test a_test_of_ours ... ========= Barrier error detected. Divergent thread(s) in block.
=========     at ncclDevFunc_AllReduce_MinMax_u32_RING_LL()+0x2b0
=========     by thread (416,0,0) in block (0,0,0)
=========
========= Barrier error detected. Divergent thread(s) in block.
=========     at block_sum_static+0x2b0
=========     by thread (3,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 3 errors
LOG
    expect "synccheck: reports inside NCCL's device functions, one after a test's name" "1 0 2" \
        "$(report_counts "$dir/synccheck.log" synccheck)"
    # A host function whose name holds "ncclKernel" but is no kernel: its
    # report counts.
    cat >"$dir/memcheck.log" <<'LOG'
========= COMPUTE-SANITIZER
========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuLaunchKernel.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: ncclKernelPlanner::launch() [0x1234] in libnccl.so.2
=========
========= ERROR SUMMARY: 1 error
LOG
    expect "memcheck: a host frame named like a kernel is not a kernel" "1 0 0" \
        "$(report_counts "$dir/memcheck.log" memcheck)"
    # A run that did not finish: no summary.
    printf '========= COMPUTE-SANITIZER\nrunning 2 tests\n' >"$dir/unfinished.log"
    expect "a run without a summary" "? 0 0" "$(report_counts "$dir/unfinished.log" synccheck)"
    # A binary that made no CUDA call.
    printf '========= COMPUTE-SANITIZER\ntest result: ok. 4 passed\n========= Target application terminated before first instrumented API call\n' >"$dir/none.log"
    no_cuda_call "$dir/none.log" && got=yes || got=no
    expect "no CUDA call, tests passed" yes "$got"
    rm -rf "$dir"
    [ "$failures" -eq 0 ]
}

probes=/tmp/sanitizer-probes
if [ "${1:-}" = --self-test ]; then
    self_test
    exit
fi

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
        forced_cuda_backend) echo "hides the GPU on purpose (its driver calls fail by design)" ;;
        kernel_faults) echo "its kernels trap on purpose" ;;
        sanitizer_names_rust_lines) echo "reads memory nothing wrote on purpose (the demonstration of initcheck naming Rust lines)" ;;
        unit-gpu_builder) echo "runs the kernel toolchain (rustc, LLVM), no CUDA call (and crashes under the sanitizer's injection, seen on an H200)" ;;
        forced_simulator | forced_simulator_short_watchdog | forced_simulator_crate_paths | \
            forced_two_simulated_devices | forced_four_simulated_devices | forced_simulated_architectures)
            echo "runs on the CPU simulator only (no CUDA call to check)"
            ;;
        *) return 1 ;;
    esac
}

# How a binary's tests run under the sanitizer when not as in run-all.sh (tests
# left out, or one at a time), with the reason (printed once per binary).
skipped_tests() {
    case "$1" in
        forced_several_devices)
            echo "NCCL's bootstrap between processes hangs under compute-sanitizer: the multi-process tests run in run-all.sh only; the rest run one at a time (NCCL communicators made from several test threads at once crashed the sanitized process on an H200; one at a time they run clean)" >&2
            echo "--skip ranks_in_separate_processes --skip rank_process_of_multi_process_tests --test-threads=1"
            ;;
    esac
}

# The probes: CUDA C programs, built here with nvcc, that show what a tool or
# a library does with none of this crate's code (scripts/sanitizer-probes/).
mkdir -p "$probes"
build_probe() { # name, source, libraries...
    local name="$1" source="$2"
    shift 2
    nvcc -O2 -o "$probes/$name" "sanitizer-probes/$source" "$@" >"$probes/$name.build.log" 2>&1 ||
        echo "sanitize: nvcc could not build sanitizer-probes/$source ($probes/$name.build.log): its probe is not run"
}
build_probe held-copy held_copy.cu -lcuda
build_probe held-kernel held_kernel.cu -lcuda
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

# Tools under which a kernel launched on a held stream is done when its call
# returns, a stream waits for another one's hold, or kernels on two streams
# run one after the other (the held-kernel probe exits 2).
kernels_wait_under=""
for tool in $tools; do
    [ -x "$probes/held-kernel" ] || break
    compute-sanitizer --tool "$tool" "$probes/held-kernel" >"$logs/probe-held-kernel.$tool.log" 2>&1
    if [ $? -eq 2 ]; then
        kernels_wait_under="$kernels_wait_under $tool"
        echo "sanitize: under $tool, kernel launches wait, or streams or kernels run one after another (CUDA C probe, sanitizer-probes/held_kernel.cu):"
        grep '^held-kernel probe:' "$logs/probe-held-kernel.$tool.log" | sed 's/^/sanitize:     /'
    fi
done

# The tests of a binary that assert how long a wait behind a held stream took,
# or that work behind one is still pending, or that one stream ran while
# another was held ("the whole example" for an example that times its
# overlap): they hold only where queueing returns at once and streams run
# side by side, so they are left out under the tools the probes above name.
timed_tests() {
    case "$1" in
        held_streams)
            # By module: tracking, events, futures, stream_semantics, pinned,
            # pinned::batches, pipeline.
            echo "a_copy_on_another_stream_returns_what_the_kernel_wrote to_device_sync_has_completed_on_the_device_when_it_returns" \
                "elapsed_time_waits_for_an_unfinished_end_event" \
                "a_future_waits_for_the_work_queued_before_it_and_not_after an_event_future_completes_at_the_event_not_at_the_streams_end two_event_futures_do_not_wait_for_each_other" \
                "legacy_stream_work_waits_for_blocking_streams blocking_streams_wait_for_the_legacy_stream the_per_thread_stream_and_the_legacy_stream_wait_for_each_other non_blocking_streams_do_not_wait_for_the_legacy_stream" \
                "reading_waits_for_a_copy_into_the_buffer dropping_waits_for_pending_copies the_host_waits_for_a_kernel_using_mapped_memory" \
                "copies_out_of_a_buffer_are_tracked_when_the_batch_ends copies_into_a_buffer_are_tracked_when_the_batch_ends a_failing_batch_returns_its_error_and_still_tracks_its_copies a_panicking_batch_still_tracks_its_copies" \
                "run_only_queues_and_reading_the_output_waits a_failing_or_panicking_run_still_tracks_its_copies"
            ;;
        alone_stream_overlap) echo "a_held_stream_does_not_hold_back_another" ;;
        forced_several_devices) echo "a_default_stream_waits_for_an_event_of_another_device a_peer_copy_waits_for_the_kernel_writing_its_source a_copy_between_devices_is_queued_not_waited_for" ;;
        async_pipeline) echo "the whole example" ;;
    esac
}

# Tests left out under one tool only, as test arguments (or "the whole
# example" for an example, which is then not run under that tool), with the
# reason on stderr; each runs under the other tools and in run-all.sh.
left_out_under() { # tool, binary name
    local why=""
    # The block votes in divergent branches: PTX defines the non-.aligned
    # barrier.red there (sm_70+), synccheck reports CUDA C's rule for
    # __syncthreads_count (the same condition across the block) and ends the
    # launch; the vote is checked by run-all.sh and the other tools.
    if [ "$1" = synccheck ] && [ "$2" = suite ]; then
        echo "block_votes_count_and_or_every_thread_of_the_block: it votes from two branches of an if (defined in PTX for the non-.aligned barrier.red), which synccheck reports and ends under CUDA C's rule" >&2
        printf -- '--skip %s ' block_votes_count_and_or_every_thread_of_the_block
        return 0
    fi
    # Under memcheck: a launch the driver refuses on purpose (memcheck
    # reports the API error the test checks for), and the device's free
    # memory after the pool gives memory back (on an H100 under memcheck the
    # pool's reserved bytes went down, the device's free memory did not go
    # up). Both run under the other tools and in run-all.sh.
    # NCCL's broadcast kernel under synccheck on two H100s: 992 barrier
    # reports, all inside NCCL's ncclDevFunc_Broadcast_RING_SIMPLE, then
    # synccheck ends that kernel ("failed to handle a hardware exception")
    # and the example stops with the launch failure. On one GPU NCCL runs no
    # such kernel. The collective tests (forced_several_devices) run clean under it.
    if [ "$1" = synccheck ] && [ "$2" = allreduce ] && [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -gt 1 ]; then
        echo "the whole example: on several GPUs NCCL's own broadcast kernel diverges at its barriers, which synccheck reports and ends (seen on two H100s: 992 reports inside ncclDevFunc_Broadcast_RING_SIMPLE, then a launch failure)" >&2
        echo "the whole example"
        return 0
    fi
    if [ "$1" = memcheck ] && [ "$2" = suite ]; then
        echo "a_kernel_whose_local_memory_the_device_cannot_set_aside_is_refused_naming_it: the driver refuses its launch on purpose (CUDA_ERROR_OUT_OF_MEMORY from cuLaunchKernel), which memcheck reports as an API error" >&2
        printf -- '--skip %s ' a_kernel_whose_local_memory_the_device_cannot_set_aside_is_refused_naming_it
        return 0
    fi
    if [ "$2" = alone_memory_pool ]; then
        echo "trimming_and_free_all_blocks_give_cached_memory_back: it measures the whole device's free memory, which the tool's own allocations and the binaries sanitized beside it change: it did not grow when the pool gave memory back under memcheck (an H100), racecheck and synccheck (two H200s), while the pool's own statistics did shrink" >&2
        printf -- '--skip %s ' trimming_and_free_all_blocks_give_cached_memory_back
        return 0
    fi
    [[ " $copies_wait_under " == *" $1 "* ]] && why="asynchronous copies wait for their stream"
    [[ " $kernels_wait_under " == *" $1 "* ]] && why="${why:+$why, and }kernel launches wait or streams run one after another"
    [ -n "$why" ] || return 0
    local timed
    timed="$(timed_tests "$2")"
    [ -n "$timed" ] || return 0
    echo "$timed: it asserts how long a wait behind a held stream took, or that work behind one is pending, and under $1 $why (probes above)" >&2
    if [ "$timed" = "the whole example" ]; then
        echo "$timed"
    else
        # shellcheck disable=SC2086
        printf -- '--skip %s ' $timed
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

# What NCCL's own initialisation and first all-reduce report under each tool,
# with no other code (the nccl-init probe): the key (report_keys) of each
# report from inside NCCL, one per line, in $probes/nccl-own.TOOL. Reports in
# other logs with the same key, from inside NCCL, are NCCL's own and are
# counted apart.
nccl_python_library() {
    python3 -c 'import importlib.util, os; s = importlib.util.find_spec("nvidia.nccl"); print(os.path.join(list(s.submodule_search_locations)[0], "lib", "libnccl.so.2"))' 2>/dev/null
}
for tool in $tools; do
    : >"$probes/nccl-own.$tool"
    [ -x "$probes/nccl-init" ] || continue
    compute-sanitizer --tool "$tool" "$probes/nccl-init" "$(nccl_python_library)" >"$logs/probe-nccl-init.$tool.log" 2>&1
    nccl_report_heads "$logs/probe-nccl-init.$tool.log" >"$probes/nccl-init.$tool.heads"
    report_keys <"$probes/nccl-init.$tool.heads" | sort -u >"$probes/nccl-own.$tool"
    count="$(wc -l <"$probes/nccl-init.$tool.heads")"
    if [ "$count" -gt 0 ]; then
        echo "sanitize: under $tool, NCCL's own initialisation and first all-reduce make $count reports with no other code (CUDA C probe, sanitizer-probes/nccl_init.cu; $(grep -h '^nccl-init probe:' "$logs/probe-nccl-init.$tool.log")):"
        sort -u "$probes/nccl-init.$tool.heads" | sed 's/^/sanitize:     /'
    fi
done

run_binary() { # runs every tool on one binary, then prints its lines
    local bin="$1" name tool args=() tool_args left_out reports status skip own ran="" limit
    name="$(basename "$bin")"
    # The binaries of many tests (the suite, held_streams) get four times a
    # binary's time.
    limit="${SANITIZE_TIMEOUT:-240}"
    case "$name" in suite | held_streams) limit=$((limit * 4)) ;; esac
    # shellcheck disable=SC2206
    [ "${bin%%/*}" = tests ] && args=(--include-ignored ${SANITIZE_FILTER:-})
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
            timeout "$limit" compute-sanitizer --tool "$tool" --print-limit 100000 \
                "$bin" "${tool_args[@]}" >"$logs/$name.$tool.log" 2>&1
            echo $? >"$logs/$name.$tool.status"
        ) &
    done
    wait
    for tool in $ran; do
        read -r reports own kernels < <(report_counts "$logs/$name.$tool.log" "$tool")
        status="$(cat "$logs/$name.$tool.status")"
        if no_cuda_call "$logs/$name.$tool.log"; then
            printf 'sanitize: %-10s %-28s no CUDA call, nothing to check (its tests passed)\n' "$tool" "$name"
        else
            apart=""
            [ "$own" -gt 0 ] && apart="$own of NCCL's own set-up, as its probe makes them"
            [ "$kernels" -gt 0 ] && apart="${apart:+$apart; }$kernels made inside NCCL's own kernels"
            printf 'sanitize: %-10s %-28s %s reports%s, exit %s\n' "$tool" "$name" "$reports" "${apart:+ (and $apart)}" "$status"
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
nccl_kernels=0
failed_runs=""
for bin in "${binaries[@]}"; do
    name="$(basename "$bin")"
    for tool in $tools; do
        [ -f "$logs/$name.$tool.log" ] || continue # left out under this tool (printed above)
        no_cuda_call "$logs/$name.$tool.log" && continue
        read -r reports own kernels < <(report_counts "$logs/$name.$tool.log" "$tool")
        nccl_own=$((nccl_own + own))
        nccl_kernels=$((nccl_kernels + kernels))
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
apart=""
[ "$nccl_own" -gt 0 ] && apart="$nccl_own made inside NCCL's own initialisation and first all-reduce, which make them with no other code (nccl-init probe)"
[ "$nccl_kernels" -gt 0 ] && apart="${apart:+$apart; }$nccl_kernels made inside NCCL's own kernels (its collectives, ncclDevKernel_*/ncclKernel_*)"
echo "sanitize: $total reports in all (${#binaries[@]} binaries)${apart:+; counted apart: $apart}"
[ "$total" -eq 0 ] && [ -z "$failed_runs" ]
