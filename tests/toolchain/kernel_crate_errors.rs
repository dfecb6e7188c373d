//! A kernel crate's errors reach the user as Rust errors, where editors show
//! them: `cargo check --message-format=json` of a small kernel crate (built
//! as a user's, outside this workspace, its dependencies pointed at this
//! checkout) carries each as a `compiler-message`, with its span where the
//! error is in the crate's code, and a message naming the fix where the
//! crate is set up wrongly (issue 24). No build script fails, and nothing of
//! gpu-device's own (its `internal_features` lint) leaks into the output.
//!
//! Each case builds in one shared target directory, in turn (the first
//! builds `core` for the GPU, a minute or two).

use cargo_metadata::diagnostic::DiagnosticLevel;
use cargo_metadata::Message;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The cases share one target directory: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const KERNEL: &str = r#"
#[kernel]
pub fn saxpy(a: f32, x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if i.get() < x.len() {
        out.set(i, a * x[i.get()]);
    }
}
"#;

const HEADER: &str = "#![cfg_attr(target_arch = \"nvptx64\", no_std, feature(abi_ptx))]\nuse gpu_device::prelude::*;\ngpu_device::embed_kernels!();\n";

const BUILD_RS: &str = "fn main() {\n    if let Err(e) = gpu_builder::PtxBuilder::this_crate().build() {\n        eprintln!(\"{e}\");\n        std::process::exit(1);\n    }\n}\n";

struct Case {
    name: &'static str,
    lib_rs: String,
    /// The `[dependencies]` lines beyond gpu-device.
    extra_dependencies: &'static str,
    build_rs: bool,
    env: Vec<(&'static str, &'static str)>,
}

impl Case {
    fn new(name: &'static str, lib_rs: String) -> Case {
        Case {
            name,
            lib_rs,
            extra_dependencies: "",
            build_rs: true,
            env: Vec::new(),
        }
    }
}

/// What `cargo check --message-format=json` of a case reported.
struct Checked {
    success: bool,
    errors: Vec<cargo_metadata::diagnostic::Diagnostic>,
    /// Every message's text and cargo's stderr, for what must not appear.
    everything: String,
}

fn checkout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check(case: &Case) -> Checked {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let root = checkout();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kernel-crate-errors")
        .join(case.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let path = |p: &str| root.join(p).display().to_string();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n\
             [dependencies]\ngpu-device = {{ path = \"{device}\" }}\n{extra}\n\
             [target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]\ngpu-runtime = {{ path = \"{runtime}\" }}\n\n\
             [build-dependencies]\ngpu-builder = {{ path = \"{builder}\" }}\n",
            name = case.name,
            device = path("device"),
            runtime = path("runtime"),
            builder = path("builder"),
            extra = case
                .extra_dependencies
                .replace("RUNTIME", &path("runtime")),
        ),
    )
    .unwrap();
    std::fs::copy(
        root.join("rust-toolchain.toml"),
        dir.join("rust-toolchain.toml"),
    )
    .unwrap();
    if case.build_rs {
        std::fs::write(dir.join("build.rs"), BUILD_RS).unwrap();
    }
    std::fs::write(dir.join("src/lib.rs"), &case.lib_rs).unwrap();
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-crate-errors-target");
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(&dir)
        .args(["check", "--lib", "--message-format=json", "--target-dir"])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    for (name, value) in &case.env {
        command.env(name, value);
    }
    let output = command.output().expect("cargo runs");
    let mut checked = Checked {
        success: output.status.success(),
        errors: Vec::new(),
        everything: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    for message in Message::parse_stream(&output.stdout[..]).flatten() {
        if let Message::CompilerMessage(m) = message {
            checked.everything.push_str(&m.message.message);
            checked.everything.push('\n');
            if let Some(r) = &m.message.rendered {
                checked.everything.push_str(r);
            }
            if m.message.level == DiagnosticLevel::Error {
                checked.errors.push(m.message);
            }
        }
    }
    checked
}

/// Nothing of the machinery: no failed build script, no nested output, no
/// gpu-device lint.
fn assert_clean(case: &str, checked: &Checked) {
    for unwanted in [
        "failed to run custom build command",
        "internal_features",
        "internal-features",
    ] {
        assert!(
            !checked.everything.contains(unwanted),
            "{case}: `{unwanted}` in the output:\n{}",
            checked.everything
        );
    }
}

fn first_error<'a>(case: &str, checked: &'a Checked) -> &'a cargo_metadata::diagnostic::Diagnostic {
    assert!(!checked.success, "{case}: cargo check passed");
    checked.errors.first().unwrap_or_else(|| {
        panic!(
            "{case}: no compiler-message error in cargo's JSON:\n{}",
            checked.everything
        )
    })
}

#[test]
fn a_type_error_in_a_kernel_is_a_compiler_message_with_its_span() {
    let lib = format!(
        "{HEADER}{KERNEL}\n#[kernel]\npub fn wrong(mut out: DisjointSlice<f32>) {{\n    let v: f32 = \"text\";\n    out.set(thread_index(), v);\n}}\n"
    );
    let line = lib.lines().position(|l| l.contains("\"text\"")).unwrap() + 1;
    let checked = check(&Case::new("type-error", lib));
    assert_clean("type error", &checked);
    let error = first_error("type error", &checked);
    assert_eq!(
        error.code.as_ref().map(|c| c.code.as_str()),
        Some("E0308"),
        "{}",
        checked.everything
    );
    let span = error
        .spans
        .iter()
        .find(|s| s.is_primary)
        .expect("a primary span");
    assert_eq!(Path::new(&span.file_name), Path::new("src/lib.rs"));
    assert_eq!(span.line_start, line, "{}", checked.everything);
    // Reported once, by the host compile: the device build's copy is not added.
    assert_eq!(checked.errors.len(), 1, "{}", checked.everything);
}

#[test]
fn an_error_only_the_device_compiles_is_reported_with_the_device_errors() {
    let lib = format!(
        "{HEADER}{KERNEL}\n#[cfg(target_arch = \"nvptx64\")]\nfn device_only() -> u32 {{\n    \"not a number\"\n}}\n"
    );
    let checked = check(&Case::new("device-only-error", lib));
    assert_clean("device-only error", &checked);
    let error = first_error("device-only error", &checked);
    let text = checked.everything.clone();
    assert!(
        text.contains("the device (nvptx64-nvidia-cuda) build of this crate's kernels failed"),
        "{text}"
    );
    assert!(
        text.contains("E0308"),
        "the device's error is quoted: {text}"
    );
    let span = error.spans.iter().find(|s| s.is_primary).expect("a span");
    assert_eq!(Path::new(&span.file_name), Path::new("src/lib.rs"));
    assert_eq!(span.line_start, 3, "at embed_kernels!(): {text}");
}

#[test]
fn a_missing_build_rs_is_named() {
    let mut case = Case::new("no-build-rs", format!("{HEADER}{KERNEL}"));
    case.build_rs = false;
    let checked = check(&case);
    assert_clean("no build.rs", &checked);
    let error = first_error("no build.rs", &checked);
    assert!(
        error.message.contains("this package has no build.rs")
            && error
                .message
                .contains("gpu_builder::PtxBuilder::this_crate().build()"),
        "{}",
        checked.everything
    );
    assert!(
        !checked
            .everything
            .contains("environment variable `OUT_DIR` not defined"),
        "{}",
        checked.everything
    );
}

#[test]
fn a_host_only_dependency_under_dependencies_is_named_with_the_fix() {
    // gpu-runtime (the host side) where the GPU build sees it too.
    let mut case = Case::new("host-only-dependency", format!("{HEADER}{KERNEL}"));
    case.extra_dependencies = "gpu-runtime = { path = \"RUNTIME\" }";
    let checked = check(&case);
    assert_clean("host-only dependency", &checked);
    let error = first_error("host-only dependency", &checked);
    assert!(
        error.message.contains("the dependency `gpu-runtime`")
            && error
                .message
                .contains("[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]"),
        "{}",
        checked.everything
    );
    assert!(
        !checked.everything.contains("-Zbuild-std"),
        "{}",
        checked.everything
    );
}

#[test]
fn a_stable_toolchain_is_named_as_such() {
    // RUSTC_BOOTSTRAP=-1 makes the pinned nightly act as a stable toolchain.
    let mut case = Case::new("stable-toolchain", format!("{HEADER}{KERNEL}"));
    case.env.push(("RUSTC_BOOTSTRAP", "-1"));
    let checked = check(&case);
    assert!(!checked.success);
    assert!(
        checked
            .everything
            .contains("gpu-device needs a nightly Rust toolchain")
            && checked.everything.contains("rust-toolchain.toml"),
        "{}",
        checked.everything
    );
    assert!(
        !checked.everything.contains("rustup component add"),
        "{}",
        checked.everything
    );
}

/// Safe code cannot name a global into shared or constant memory: a symbol
/// chosen by an attribute written without `unsafe(...)` (edition 2021 allows
/// it on the host) does not build for the device.
#[test]
fn a_reserved_symbol_forged_without_unsafe_does_not_build_for_the_device() {
    for (name, item) in [
        (
            "forged-shared",
            "#[no_mangle]\npub static __gpu_shared_forged: [u32; 4] = [0; 4];\n",
        ),
        (
            "forged-const",
            "#[export_name = \"__gpu_const_forged_X\"]\npub static FORGED: u32 = 7;\n",
        ),
    ] {
        let lib = format!("{HEADER}{KERNEL}\n{item}");
        let checked = check(&Case::new(name, lib));
        assert_clean(name, &checked);
        let _ = first_error(name, &checked);
        let text = &checked.everything;
        assert!(
            text.contains("the device (nvptx64-nvidia-cuda) build of this crate's kernels failed"),
            "{name}: {text}"
        );
        assert!(
            text.contains("unsafe attribute used without unsafe"),
            "{name}: {text}"
        );
    }
}
