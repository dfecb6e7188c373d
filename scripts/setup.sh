#!/usr/bin/env bash
# Installs what building and testing this workspace needs on a fresh Debian machine.
# Idempotent: a second run only checks.
#
#  1. the pinned nightly toolchain of rust-toolchain.toml, with rust-src and llvm-tools
#     (kernels are built with -Zbuild-std=core and linked with llvm-link/opt/llc);
#  2. a libcuda to link against (`cust` links libcuda at build time). Machines with the
#     NVIDIA driver already have one; elsewhere Debian's libcuda1 is unpacked into
#     .tools/cuda-driver and registered with the dynamic loader, so that programs start
#     (and, finding no GPU, run on the CPU simulator);
#  3. ptxas from PyPI, used by the PTX tests: CUDA 13's (nvidia-cuda-nvcc) in
#     .tools/ptxas for sm_80 and sm_90, CUDA 12's (nvidia-cuda-nvcc-cu12) in
#     .tools/ptxas12 for sm_70, which CUDA 13 no longer targets.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/.tools"
mkdir -p "$tools"

say() { printf 'setup: %s\n' "$*" >&2; }

# 1. toolchain -------------------------------------------------------------------------
toolchain="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)"
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    say "installing Rust toolchain $toolchain"
    rustup toolchain install "$toolchain" --profile minimal \
        --component rust-src,llvm-tools,rustfmt,clippy
else
    rustup component add --toolchain "$toolchain" rust-src llvm-tools rustfmt clippy >/dev/null 2>&1 || true
fi

# 2. libcuda ---------------------------------------------------------------------------
# A real driver is one the loader knows outside any checkout's .tools/cuda-driver
# (entries of this script's own registrations, possibly of deleted checkouts, do not count).
driver_dir="$tools/cuda-driver/lib64"
# One registration per checkout, so that checkouts do not replace each other's.
registration="/etc/ld.so.conf.d/gpu-workspace-libcuda-$(printf '%s' "$driver_dir" | md5sum | cut -c1-12).conf"
real_driver="$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF}' | grep -v '/\.tools/cuda-driver/' | head -n 1 || true)"
mkdir -p "$driver_dir"
if [ -n "$real_driver" ]; then
    say "linking against the installed NVIDIA driver $real_driver"
    ln -sf "$real_driver" "$driver_dir/libcuda.so"
else
    if [ ! -e "$driver_dir/libcuda.so.1" ]; then # missing, or a dangling link
        say "no NVIDIA driver found: unpacking Debian's libcuda1 (non-free) for linking"
        src=/etc/apt/sources.list.d/debian.sources
        if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
            sed -i 's/^Components: main$/Components: main non-free/' "$src"
        fi
        apt-get update -qq
        work="$(mktemp -d)"
        (cd "$work" && apt-get download -qq libcuda1 2>/dev/null)
        dpkg -x "$work"/libcuda1_*.deb "$work/root"
        # -quit, not `| head`: under pipefail, find writing after head has
        # exited dies of SIGPIPE and ends the script (exit 141, seen in CI).
        lib="$(find "$work/root" -name 'libcuda.so.*.*' -type f -print -quit)"
        rm -f "$driver_dir"/libcuda.so*
        cp "$lib" "$driver_dir/"
        ln -sf "$(basename "$lib")" "$driver_dir/libcuda.so.1"
        rm -rf "$work"
    fi
    ln -sf libcuda.so.1 "$driver_dir/libcuda.so"
    # Programs load libcuda.so.1 when they start, from the loader's first entry
    # for it: drop registrations of deleted checkouts (their entries would come
    # first and fail) and register this checkout's copy.
    stale=0
    for conf in /etc/ld.so.conf.d/gpu-workspace-libcuda-*.conf; do
        [ -e "$conf" ] || continue
        if [ ! -e "$(cat "$conf")/libcuda.so.1" ]; then
            rm -f "$conf"
            stale=1
        fi
    done
    first="$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')"
    if [ "$stale" = 1 ] || [ "$(cat "$registration" 2>/dev/null)" != "$driver_dir" ] || [ ! -e "$first" ]; then
        say "registering $driver_dir with the dynamic loader"
        echo "$driver_dir" > "$registration"
        ldconfig
    fi
fi

# 3. ptxas -----------------------------------------------------------------------------
if [ ! -x "$tools/ptxas/nvidia/cu13/bin/ptxas" ]; then
    say "installing ptxas from PyPI (nvidia-cuda-nvcc 13.x)"
    python3 -m pip install -q --disable-pip-version-check --no-deps \
        --target "$tools/ptxas" "nvidia-cuda-nvcc>=13,<14"
fi

if [ ! -x "$tools/ptxas12/nvidia/cuda_nvcc/bin/ptxas" ]; then
    say "installing ptxas from PyPI (nvidia-cuda-nvcc-cu12 12.x, for sm_70)"
    python3 -m pip install -q --disable-pip-version-check --no-deps \
        --target "$tools/ptxas12" "nvidia-cuda-nvcc-cu12>=12.4,<13"
fi

say "ready (toolchain $toolchain)"
