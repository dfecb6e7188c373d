#!/usr/bin/env bash
# Installs what building and testing this workspace needs, as an ordinary user:
# everything goes into the user's rustup and this checkout's .tools/; nothing
# needs root, nothing outside the checkout is changed, so one checkout's
# deletion cannot break another's. Idempotent: a second run only checks.
#
#  1. the pinned nightly toolchain of rust-toolchain.toml, with rust-src and
#     llvm-tools (kernels are built with -Zbuild-std=core and linked with
#     llvm-link/opt/llc). Required: without it nothing builds.
#  2. ptxas from PyPI, used by the PTX tests (tests/toolchain/ptx.rs): CUDA 13's
#     (nvidia-cuda-nvcc) in .tools/ptxas for sm_80 and sm_90, CUDA 12's
#     (nvidia-cuda-nvcc-cu12) in .tools/ptxas12 for sm_70, which CUDA 13 no
#     longer targets. The examples do not need it.
#  3. for the benchmarks' bare cust baseline only (`--features bare-cust` of
#     gpu-benches; cust links libcuda when built): a libcuda to link against in
#     .tools/cuda-driver/lib64, the installed NVIDIA driver's where there is
#     one, else a link stub made here with the C compiler. The examples and
#     tests link nothing of CUDA: the runtime opens the driver when a program
#     starts.
#
# What it cannot do, it says, with the reason; only a missing toolchain is fatal.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/.tools"
mkdir -p "$tools"

say() { printf 'setup: %s\n' "$*" >&2; }
skipped=()

# 1. toolchain -------------------------------------------------------------------------
toolchain="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)"
if ! command -v rustup >/dev/null 2>&1; then
    say "error: rustup is not installed; install it (https://rustup.rs, as this user), then rerun"
    exit 1
fi
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    say "installing Rust toolchain $toolchain"
    rustup toolchain install "$toolchain" --profile minimal \
        --component rust-src,llvm-tools,rustfmt,clippy
else
    rustup component add --toolchain "$toolchain" rust-src llvm-tools rustfmt clippy >/dev/null 2>&1 || true
fi

# 2. ptxas -----------------------------------------------------------------------------
pip_install() { # target package-spec
    local log
    if ! python3 -m pip --version >/dev/null 2>&1; then
        skipped+=("ptxas ($2): python3 has no pip (install python3-pip); tests/toolchain/ptx.rs fails without it")
        return
    fi
    say "installing ptxas from PyPI ($2) into ${1#"$root"/}"
    if ! log="$(python3 -m pip install -q --disable-pip-version-check --no-deps --target "$1" "$2" 2>&1)"; then
        skipped+=("ptxas ($2): pip failed: $(printf '%s' "$log" | tail -n 1); tests/toolchain/ptx.rs fails without it")
    fi
}
if [ ! -x "$tools/ptxas/nvidia/cu13/bin/ptxas" ]; then
    pip_install "$tools/ptxas" "nvidia-cuda-nvcc>=13,<14"
fi
if [ ! -x "$tools/ptxas12/nvidia/cuda_nvcc/bin/ptxas" ]; then
    pip_install "$tools/ptxas12" "nvidia-cuda-nvcc-cu12>=12.4,<13"
fi

# 3. libcuda for the bare cust baseline --------------------------------------------------
# .cargo/config.toml points cust's build (CUDA_LIBRARY_PATH) at .tools/cuda-driver;
# it links lib64/libcuda.so. A real driver is one the loader knows outside any
# checkout's .tools/ (older versions of this script registered those).
lib64="$tools/cuda-driver/lib64"
mkdir -p "$lib64"
real_driver="$(/sbin/ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF}' | grep -v '/\.tools/' | head -n 1 || true)"
if [ -n "$real_driver" ] && [ -e "$real_driver" ]; then
    if [ "$(readlink "$lib64/libcuda.so" 2>/dev/null)" != "$real_driver" ]; then
        say "bare cust baseline: linking against the installed NVIDIA driver $real_driver"
        rm -f "$lib64"/libcuda.so*
        ln -s "$real_driver" "$lib64/libcuda.so"
    fi
elif [ ! -e "$lib64/libcuda.so" ] || [ -L "$lib64/libcuda.so" ]; then
    # No driver here: a stub with the driver's function names (each returns
    # CUDA_ERROR_STUB_LIBRARY, 34), as the CUDA toolkit's lib64/stubs/libcuda.so,
    # only to link the benchmarks, which run where the real driver is. Named
    # libcuda.so.1 inside, as the driver, which is what they load there.
    rm -f "$lib64"/libcuda.so*
    stub_failed() { skipped+=("bare cust baseline: $1; the benchmarks build without it (their bare cust columns say so)"); }
    if ! command -v cc >/dev/null 2>&1; then
        stub_failed "no C compiler (cc) to make the libcuda link stub"
    elif ! cust_raw="$(cargo metadata --format-version 1 --features bare-cust \
        --manifest-path benches/Cargo.toml 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "cust_raw":
        print(p["manifest_path"].rsplit("/", 1)[0])
')" || [ -z "$cust_raw" ]; then
        stub_failed "cargo metadata could not fetch cust's sources (offline?)"
    else
        work="$(mktemp -d)"
        grep -ohE 'pub fn cu[A-Za-z0-9_]+' "$cust_raw"/src/*.rs | sort -u |
            sed 's/^pub fn \(.*\)/int \1(void) { return 34; }/' > "$work/libcuda_stub.c"
        if cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$lib64/libcuda.so" "$work/libcuda_stub.c" 2>"$work/log"; then
            say "bare cust baseline: no NVIDIA driver here; made a libcuda link stub ($(wc -l < "$work/libcuda_stub.c") functions) in ${lib64#"$root"/}"
        else
            stub_failed "cc failed making the libcuda link stub: $(tail -n 1 "$work/log")"
        fi
        rm -rf "$work"
    fi
fi
# Earlier versions of this script registered a copy of libcuda with the
# dynamic loader, per checkout; nothing needs that any more.
# (find, not ls: with none there, ls fails, and pipefail would end the script)
old_registrations="$(find /etc/ld.so.conf.d -maxdepth 1 -name 'gpu-workspace-libcuda-*.conf' 2>/dev/null | wc -l || true)"
if [ "$old_registrations" -gt 0 ]; then
    say "note: $old_registrations registration(s) of libcuda copies by an earlier setup.sh (/etc/ld.so.conf.d/gpu-workspace-libcuda-*.conf) are no longer needed once every checkout has this version; as root: rm /etc/ld.so.conf.d/gpu-workspace-libcuda-*.conf && ldconfig"
fi

for s in ${skipped[@]+"${skipped[@]}"}; do
    say "not done: $s"
done
say "ready (toolchain $toolchain)"
