#!/usr/bin/env bash
# Builds templates/kernel-crate as a user would: copied out of this workspace
# (so none of its .cargo/config.toml applies), its path dependencies pointed at
# this checkout, with no CUDA variable in the environment, then runs its
# kernel on the CPU simulator. The three errors of issue #12 ("Could not find
# a cuda installation", "#![feature] may not be used on the stable release
# channel", "cannot find `gpu_runtime`") would each fail this script.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
template="$root/templates/kernel-crate"
if ! cmp -s "$root/rust-toolchain.toml" "$template/rust-toolchain.toml"; then
    echo "template-crate: templates/kernel-crate/rust-toolchain.toml differs from the workspace's" >&2
    exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-template-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$template" "$work/my-kernels"
sed -i "s|path = \"\.\./\.\./|path = \"$root/|" "$work/my-kernels/Cargo.toml"
cd "$work/my-kernels"
# The build runs outside the workspace, with the CUDA variables of any setup removed.
env -u CUDA_LIBRARY_PATH -u CUDA_PATH -u CUDA_ROOT -u CUDA_TOOLKIT_ROOT_DIR \
    -u RUSTUP_TOOLCHAIN -u CARGO_TARGET_DIR \
    GPU_BACKEND=simulator \
    cargo run --quiet --target-dir "$root/target/template-crate"
