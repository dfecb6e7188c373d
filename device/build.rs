//! Names the fix when the toolchain cannot build this crate: it uses
//! `const_type_name` on every target (the kernels' interface descriptions
//! name their types in constants), and kernels need `-Zbuild-std` and the
//! `abi_ptx` feature, all nightly only. On a stable toolchain (or a nightly
//! told to act as one, `RUSTC_BOOTSTRAP=-1`) the build stops here with one
//! message, rather than with a feature-gate error inside this crate.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC_BOOTSTRAP");
    // The GPU build (-Zbuild-std, nightly by necessity) has no `core` in
    // its sysroot to probe with; the host build of the same crate checks.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("nvptx64") {
        return;
    }
    let Ok(probe) = autocfg::AutoCfg::new() else {
        return; // Not run by cargo as a build script: nothing to say.
    };
    if probe.probe_raw("#![feature(const_type_name)]").is_err() {
        println!(
            "cargo::error=gpu-device needs a nightly Rust toolchain, and this build uses {}: \
             pin one in a rust-toolchain.toml beside your Cargo.toml, with the components \
             rust-src and llvm-tools (the gpu-* repository's templates/kernel-crate/rust-toolchain.toml \
             is one that works)",
            rustc_version()
        );
    }
}

/// What `$RUSTC --version` says, for the message.
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "a toolchain that refuses #![feature]".into())
}
