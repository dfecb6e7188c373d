#!/usr/bin/env bash
# Builds every test, example and benchmark binary (release) and bundles them
# into .gpu-bundle/ with run-all.sh, which runs them all on a GPU machine:
#
#   scripts/gpu-bundle.sh            # here: build and bundle (x86-64, no GPU needed)
#                                      into .gpu-bundle/, packed as .gpu-bundle.tar.xz
#   tar xJf .gpu-bundle.tar.xz       # on the GPU machine, if the packed bundle travelled
#   bash .gpu-bundle/run-all.sh      # on the GPU machine, from the repository root
#                                      (BENCH_ROUNDS=3 runs the benchmark three times;
#                                      BENCHES="kernels graphs_and_async" runs only those)
#   bash .gpu-bundle/sanitize.sh     # on the GPU machine: every test and example
#                                      under compute-sanitizer's four tools
#
# Left out, with the reason printed: the tests that need this machine's tools
# rather than a GPU (tests/toolchain/: trybuild needs cargo, the PTX checks
# .tools/ptxas). The other test binaries are the suite (tests/suite/) and the
# few that need a process of their own, each named for why
# (ARCHITECTURE.md, "Where a new test goes").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bundle="$root/.gpu-bundle"
rm -rf "$bundle" "$root/.gpu-bundle.tar.xz"
mkdir -p "$bundle/tests" "$bundle/examples" "$bundle/benches"

executables() { # reads cargo's JSON messages; prints "kind name path" per test or bench executable
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        kind = m["target"]["kind"][0]
        print(kind, m["target"]["name"], m["executable"])
'
}

cargo build --release -p gpu-examples --examples --all-features --quiet
cargo test --workspace --release --no-run --quiet --message-format=json | executables | while read -r kind name path; do
    [ "$kind" = example ] && continue # built by `cargo test` too; bundled below
    case "$name" in
        toolchain) echo "bundle: leaving out tests/toolchain/ (runs in CI: needs this machine's tools, not a GPU)" ;;
        gpu_macros) echo "bundle: leaving out the proc-macro crate's unit tests (they link the toolchain's libstd)" ;;
        *) [ "$kind" = lib ] && name="unit-$name"; cp "$path" "$bundle/tests/$name" ;;
    esac
done
# The bare cust baseline links libcuda: scripts/setup.sh puts the driver's or a
# link stub in .tools/cuda-driver/lib64 (the GPU machine has the real one).
bench_features=()
if [ -e .tools/cuda-driver/lib64/libcuda.so ]; then
    bench_features=(--features bare-cust)
else
    echo "bundle: benchmarks without their bare cust columns (no .tools/cuda-driver/lib64/libcuda.so: run scripts/setup.sh)"
fi
cargo bench -p gpu-benches ${bench_features[@]+"${bench_features[@]}"} --no-run --quiet --message-format=json | executables | while read -r kind name path; do
    cp "$path" "$bundle/benches/$name"
done
mkdir -p "$bundle/interop"
for example in examples/*.rs; do
    name="$(basename "$example" .rs)"
    if [ -e "target/release/examples/lib$name.so" ]; then
        # A C ABI library (dlpack_capi): loaded by the Python round trips.
        cp "target/release/examples/lib$name.so" "$bundle/interop/"
    else
        cp "target/release/examples/$name" "$bundle/examples/$name"
    fi
done
cp tests/python/*.py "$bundle/interop/"
# The CUDA C twins' sources in benches/cuda/ (beside a bench binary a family's
# header folder would take its name: patterns.cu includes patterns/*.cuh);
# run-all.sh builds them into benches/, where the benchmarks look for them.
mkdir -p "$bundle/benches/cuda"
cp benches/cuda/*.cu benches/cuda/*.h "$bundle/benches/cuda/"
cp -r benches/cuda/patterns benches/cuda/gemm_tc "$bundle/benches/cuda/"
cp benches/python/*.py "$bundle/benches/"
cp scripts/sanitize.sh "$bundle/sanitize.sh"
cp -r scripts/sanitizer-probes "$bundle/sanitizer-probes"
# Symbol tables are not needed to run: the bundle must fit the 64 MiB that
# travel to the GPU machine.
find "$bundle/tests" "$bundle/examples" "$bundle/benches" -type f -perm -u+x ! -name '*.py' -exec strip {} +
strip --strip-unneeded "$bundle/interop/"*.so # keeps the exported C functions

cat > "$bundle/run-all.sh" <<'RUNNER'
#!/usr/bin/env bash
# Runs every bundled binary on this GPU machine; one line per binary, then a total.
cd "$(dirname "${BASH_SOURCE[0]}")"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
passed=0; failed=0; failures=""
run() {
    local name="$1"; shift
    echo "=== $name"
    # A hang must not eat the machine's time: each binary gets 5 minutes, the
    # suites of many tests (tests/suite, tests/held_streams) 15.
    local limit=300
    case "$name" in suite | held_streams) limit=900 ;; esac
    if timeout "$limit" "$@"; then
        passed=$((passed + 1)); echo "--- $name: ok"
    else
        failed=$((failed + 1)); failures="$failures $name"; echo "--- $name: FAILED"
    fi
}
for t in tests/*; do
    name="$(basename "$t")"
    if [ "$name" = forced_cuda_backend ]; then
        run "$name (with CUDA_VISIBLE_DEVICES= hiding the GPU)" env CUDA_VISIBLE_DEVICES= "$t"
    elif [ "$name" = forced_simulator_short_watchdog ]; then
        # Its ignored tests are run by its other tests, in child processes.
        run "$name" "$t"
    else
        run "$name" "$t" --include-ignored
    fi
done
export GPU_TIMELINE_DIR="${OUT:-/tmp}" # where day7_pipeline writes its timeline
for e in examples/*; do run "example $(basename "$e")" "$e"; done
# DLPack with PyTorch, through the C ABI library (issue 24).
run "python dlpack_torch" python3 interop/dlpack_torch.py interop/libdlpack_capi.so
# NVTX ranges and profiler start/stop seen by Nsight Compute: only the 3
# saxpy launches inside the "measured" range, and only the 2 add_kernel
# launches between profiler::start and stop, are profiled.
if command -v ncu > /dev/null; then
    profiled() { # how many kernels named $1 `ncu ${@:2} examples/nvtx_ranges` profiled
        ncu "${@:2}" examples/nvtx_ranges 2>&1 | tee "/tmp/ncu-$1.log" | grep -c "$1.*Context" || true
    }
    export -f profiled
    run "ncu --nvtx-include measured/ (3 saxpy)" bash -c 'n=$(profiled saxpy --nvtx --nvtx-include measured/); echo "$n saxpy profiled"; [ "$n" -eq 3 ]'
    run "ncu --profile-from-start off (2 add_kernel)" bash -c 'n=$(profiled add_kernel --profile-from-start off); echo "$n add_kernel profiled"; [ "$n" -eq 2 ]'
else
    echo "=== ncu not found: the NVTX and profiler checks are not run"
fi
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '.')"
# A twin already built from its source on this machine (an earlier run in
# the other default-stream mode) is kept.
built() { [ -x "$1" ] && [ -z "$(find benches/cuda -newer "$1" -print -quit)" ]; }
for helper in add_kernel pipeline event_record kernels memory graphs peer_copy copy_bound multi_gpu_pipeline; do
    built "benches/${helper}_cuda" && continue
    nvcc -O3 -arch="sm_${cap}" -o "benches/${helper}_cuda" "benches/cuda/${helper}.cu" -lcuda \
        || echo "nvcc failed for ${helper}.cu: its CUDA C column stays empty"
done
# The kernel patterns' twins (issue #20): C++17, CUB and cuBLAS; without
# cuBLAS if it does not link (no cublasSgemm row then).
built benches/patterns_cuda || nvcc -O3 -std=c++17 -arch="sm_${cap}" -o benches/patterns_cuda benches/cuda/patterns.cu -lcublas \
    || nvcc -O3 -std=c++17 -arch="sm_${cap}" -DTWINS_NO_CUBLAS -o benches/patterns_cuda benches/cuda/patterns.cu \
    || echo "nvcc failed for patterns.cu: its CUDA C column stays empty"
# The tensor-core GEMMs' twins (issue #22; benches/gemm.rs runs them as the
# helper gemm_tc): sm_90a on Hopper (the wgmma kernels), else the device's own.
gemm_arch="-arch=sm_${cap}"
[ "$cap" = 90 ] && gemm_arch="-gencode=arch=compute_90a,code=sm_90a"
built benches/gemm_tc || nvcc -O3 -std=c++17 $gemm_arch -o benches/gemm_tc benches/cuda/gemm_tc.cu -lcublas -lcuda \
    || nvcc -O3 -std=c++17 $gemm_arch -DTWINS_NO_CUBLAS -o benches/gemm_tc benches/cuda/gemm_tc.cu -lcuda \
    || echo "nvcc failed for gemm_tc.cu: its CUDA C column stays empty"
# The same kernels as a cubin (benches/cuda/gemm_tc_cubin.cu), which benches/gemm.rs
# loads into its own process to time them interleaved with the Rust kernels
# (sm_90a: Hopper only; elsewhere, or if nvcc fails, its table says why).
if [ "$cap" = 90 ] && ! { [ -f benches/gemm_tc.cubin ] && [ -z "$(find benches/cuda -newer benches/gemm_tc.cubin -print -quit)" ]; }; then
    nvcc -cubin -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o benches/gemm_tc.cubin benches/cuda/gemm_tc_cubin.cu \
        || echo "nvcc failed for gemm_tc_cubin.cu: the GEMM table of the twin in this process stays empty"
fi
for b in benches/*; do
    [ -f "$b" ] && [ -x "$b" ] && [ "${b%.*}" = "$b" ] && [ "${b%_cuda}" = "$b" ] && [ "$(basename "$b")" != gemm_tc ] || continue
    if [ -n "${BENCHES:-}" ] && ! [[ " $BENCHES " == *" $(basename "$b") "* ]]; then
        continue
    fi
    if [ "$(basename "$b")" = simulator ]; then
        echo "=== bench simulator: not run here (a CPU benchmark: cargo bench -p gpu-benches --bench simulator -- --helpers python)"
        continue
    fi
    for round in $(seq "${BENCH_ROUNDS:-1}"); do
        run "bench $(basename "$b") (round $round)" "$b" --helpers benches
    done
done
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
RUNNER
chmod +x "$bundle/run-all.sh"
du -sh "$bundle"
# Packed, for a transfer limited in size (the binaries shrink about fourfold).
# -9: a 64 MiB dictionary, so the PTX modules the test binaries embed (three
# architectures of gpu-test-kernels) compress across binaries.
tar -C "$root" -cf - .gpu-bundle | xz -T0 -9 > "$root/.gpu-bundle.tar.xz"
du -sh "$root/.gpu-bundle.tar.xz"
echo "bundle: $(ls "$bundle/tests" | wc -l) test binaries, $(ls "$bundle/examples" | wc -l) examples, benches: $(ls "$bundle/benches" | tr '\n' ' ')"
