//! What a failed device build hands to the host compile of the same crate,
//! so that its errors reach the user (and their editor) as Rust errors.
//!
//! The kernel bodies are compiled on the host too: an error in the crate's
//! own code is also an error of its host compile, which reports it with its
//! spans in `cargo check --message-format=json`. So for those the build
//! script reports nothing of its own ([`NotBuilt::HostReports`]). What the
//! host compile cannot see (a dependency that needs `std`, a missing
//! `#![no_std]` line, the toolchain, LLVM) becomes one message naming the
//! fix ([`NotBuilt::DeviceOnly`]), which `embed_kernels!()` reports.

use crate::error::DeviceDiagnostic;
use crate::not_built::NotBuilt;
use crate::BuildError;
use std::path::{Path, PathBuf};

/// The first line every kernel crate's `src/lib.rs` needs.
pub const CRATE_ATTRIBUTES: &str =
    "#![cfg_attr(target_arch = \"nvptx64\", no_std, feature(abi_ptx))]";

/// What the host compile is handed: who reports, and the message.
#[derive(Debug, PartialEq, Eq)]
pub struct Handover {
    /// Who reports it.
    pub why: NotBuilt,
    /// The message.
    pub message: String,
}

/// What the failed device build `error` hands over, or `None` for an error
/// the build script itself must report (a file it could not read or write).
/// `dependency_path` names, for a dependency's package id, the chain of
/// dependencies from the kernel crate that pulls it in (`["gpu-runtime",
/// "libloading"]`), where it can be found.
pub(crate) fn handover(
    error: &BuildError,
    dependency_path: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<Handover> {
    let device_only = |message: String| {
        Some(Handover {
            why: NotBuilt::DeviceOnly,
            message,
        })
    };
    match error {
        BuildError::DeviceCompile {
            errors,
            cargo_stderr,
        } => {
            if errors.is_empty() {
                return device_only(format!(
                    "the device (nvptx64-nvidia-cuda) build of the kernels failed before compiling:\n{}",
                    cargo_errors(cargo_stderr)
                ));
            }
            if let Some(message) = dependency_failure(errors, dependency_path) {
                return device_only(message);
            }
            if let Some(message) = crate_setup_failure(errors) {
                return device_only(message);
            }
            Some(Handover {
                why: NotBuilt::HostReports,
                message: format!(
                    "these errors are in code only the device (nvptx64-nvidia-cuda) compiles \
                     (under `#[cfg(target_arch = \"nvptx64\")]`?):\n\n{}",
                    rendered(errors.iter())
                ),
            })
        }
        BuildError::Io { .. } | BuildError::NotInBuildScript | BuildError::NoManifest(_) => None,
        other => device_only(other.to_string()),
    }
}

/// Errors in dependencies: each says which dependency of the kernel crate
/// brought the failing crate in. `E0463` for `std` or `alloc` is a host-only
/// crate under `[dependencies]`.
fn dependency_failure(
    errors: &[DeviceDiagnostic],
    dependency_path: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<String> {
    let failing: Vec<&DeviceDiagnostic> = errors.iter().filter(|e| !e.in_kernel_crate).collect();
    let first = failing.first()?;
    let chain = dependency_path(&first.package_id)
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| vec![first.crate_name.clone()]);
    let direct = &chain[0];
    let through = if chain.len() > 1 {
        format!(" (through {})", chain[1..].join(" -> "))
    } else {
        String::new()
    };
    if let Some(needed) = failing.iter().find_map(|e| missing_std_crate(e)) {
        return Some(format!(
            "the dependency `{direct}`{through} needs `{needed}`, which the GPU target (nvptx64-nvidia-cuda) \
             does not have: kernels are built with the crate's [dependencies] for the GPU. If `{direct}` \
             is for the host only, move it to\n    [target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]\n\
             in Cargo.toml (as gpu-runtime is); otherwise use a `no_std` crate"
        ));
    }
    Some(format!(
        "the dependency `{direct}`{through} does not compile for the GPU target (nvptx64-nvidia-cuda), \
         for which kernels are built with the crate's [dependencies]; if it is for the host only, move it to \
         [target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies] in Cargo.toml:\n\n{}",
        rendered(failing.into_iter())
    ))
}

/// Errors in the kernel crate that only a crate set up wrongly for the
/// device has: no `#![no_std]` on the device, or no `abi_ptx` feature.
fn crate_setup_failure(errors: &[DeviceDiagnostic]) -> Option<String> {
    let own = || errors.iter().filter(|e| e.in_kernel_crate);
    if let Some(needed) = own().find_map(missing_std_crate) {
        return Some(format!(
            "the kernel crate's src/lib.rs needs `{needed}` on the GPU target, which has neither `std` \
             nor `alloc`: start src/lib.rs with\n    {CRATE_ATTRIBUTES}"
        ));
    }
    if own().any(|e| e.code.as_deref() == Some("E0658") && e.message.contains("ptx")) {
        return Some(format!(
            "the kernel entry points need the nightly `abi_ptx` feature on the GPU target: start \
             src/lib.rs with\n    {CRATE_ATTRIBUTES}"
        ));
    }
    None
}

/// `std` or `alloc` when `error` is rustc's "can't find crate for `std`".
fn missing_std_crate(error: &DeviceDiagnostic) -> Option<&'static str> {
    if error.code.as_deref() != Some("E0463") {
        return None;
    }
    ["std", "alloc"]
        .into_iter()
        .find(|name| error.message.contains(&format!("`{name}`")))
}

fn rendered<'a>(errors: impl Iterator<Item = &'a DeviceDiagnostic>) -> String {
    errors
        .map(|e| e.rendered.trim_end())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Cargo's own error lines (and what follows each), without its progress
/// lines.
fn cargo_errors(stderr: &str) -> String {
    let start = stderr.find("error").unwrap_or(0);
    stderr[start..].trim_end().to_string()
}

/// The chain of dependencies from the root package of `metadata` (the
/// kernel crate) to the package `id`, by their names in the manifests
/// (`["gpu-runtime", "libloading"]`); `None` where `id` is not reached.
pub(crate) fn dependency_path(
    metadata: &cargo_metadata::Metadata,
    id: &str,
) -> Option<Vec<String>> {
    let resolve = metadata.resolve.as_ref()?;
    let root = resolve.root.as_ref()?;
    let name = |id: &cargo_metadata::PackageId| {
        metadata
            .packages
            .iter()
            .find(|p| &p.id == id)
            .map(|p| p.name.to_string())
            .unwrap_or_else(|| id.repr.clone())
    };
    // Breadth first: the shortest chain.
    let mut paths = vec![(root.clone(), Vec::new())];
    let mut seen = vec![root.clone()];
    while !paths.is_empty() {
        let mut next = Vec::new();
        for (node_id, path) in paths {
            if node_id.repr == id {
                return Some(path);
            }
            let Some(node) = resolve.nodes.iter().find(|n| n.id == node_id) else {
                continue;
            };
            for dep in &node.deps {
                // Build dependencies run on the host: not part of the device build.
                let normal = dep
                    .dep_kinds
                    .iter()
                    .any(|k| k.kind == cargo_metadata::DependencyKind::Normal);
                if normal && !seen.contains(&dep.pkg) {
                    seen.push(dep.pkg.clone());
                    let mut longer = path.clone();
                    longer.push(name(&dep.pkg));
                    next.push((dep.pkg.clone(), longer));
                }
            }
        }
        paths = next;
    }
    None
}

/// The directories of the local (path) packages among `metadata`'s.
pub(crate) fn local_package_dirs(metadata: &cargo_metadata::Metadata) -> Vec<PathBuf> {
    metadata
        .packages
        .iter()
        .filter(|p| p.source.is_none())
        .filter_map(|p| {
            p.manifest_path
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
        })
        .collect()
}

/// The sources whose change may fix a failed build: the kernel crate's, and
/// those of the local (path) packages among its dependencies.
pub(crate) fn sources_to_watch(crate_dir: &Path, local_packages: &[PathBuf]) -> Vec<PathBuf> {
    let mut watch = Vec::new();
    for dir in std::iter::once(crate_dir).chain(local_packages.iter().map(PathBuf::as_path)) {
        for entry in ["src", "build.rs", "Cargo.toml"] {
            let path = dir.join(entry);
            if path.exists() && !watch.contains(&path) {
                watch.push(path);
            }
        }
    }
    watch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(in_kernel_crate: bool, code: &str, message: &str) -> DeviceDiagnostic {
        DeviceDiagnostic {
            package_id: if in_kernel_crate {
                "path+file:///w/k#0.1.0".into()
            } else {
                "registry+https://github.com/rust-lang/crates.io-index#libloading@0.9.0".into()
            },
            crate_name: if in_kernel_crate { "k" } else { "libloading" }.into(),
            in_kernel_crate,
            code: (!code.is_empty()).then(|| code.to_string()),
            message: message.into(),
            rendered: format!("error[{code}]: {message}\n --> src/lib.rs:1:1\n"),
        }
    }

    fn compile_error(errors: Vec<DeviceDiagnostic>) -> BuildError {
        BuildError::DeviceCompile {
            errors,
            cargo_stderr: "   Compiling k v0.1.0\nerror: could not compile `k`\n".into(),
        }
    }

    fn no_path(_: &str) -> Option<Vec<String>> {
        None
    }

    #[test]
    fn errors_in_the_crates_own_code_are_left_to_the_host_compile() {
        let handed = handover(
            &compile_error(vec![diagnostic(true, "E0308", "mismatched types")]),
            &no_path,
        )
        .unwrap();
        assert_eq!(handed.why, NotBuilt::HostReports);
        assert!(
            handed.message.contains("error[E0308]: mismatched types"),
            "{}",
            handed.message
        );
    }

    #[test]
    fn a_host_only_dependency_is_named_with_the_fix() {
        let path = |id: &str| {
            assert!(id.contains("libloading"), "{id}");
            Some(vec!["gpu-runtime".to_string(), "libloading".to_string()])
        };
        let handed = handover(
            &compile_error(vec![diagnostic(
                false,
                "E0463",
                "can't find crate for `std`",
            )]),
            &path,
        )
        .unwrap();
        assert_eq!(handed.why, NotBuilt::DeviceOnly);
        assert!(
            handed.message.starts_with(
                "the dependency `gpu-runtime` (through libloading) needs `std`, which the GPU target"
            ),
            "{}",
            handed.message
        );
        assert!(
            handed
                .message
                .contains("[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]"),
            "{}",
            handed.message
        );
        assert!(!handed.message.contains("build-std"), "{}", handed.message);
    }

    #[test]
    fn a_crate_without_its_attributes_is_told_the_line() {
        for (code, message) in [
            ("E0463", "can't find crate for `std`"),
            (
                "E0658",
                "the extern \"ptx-kernel\" ABI is experimental and subject to change",
            ),
        ] {
            let handed = handover(
                &compile_error(vec![diagnostic(true, code, message)]),
                &no_path,
            )
            .unwrap();
            assert_eq!(handed.why, NotBuilt::DeviceOnly, "{message}");
            assert!(
                handed.message.contains(CRATE_ATTRIBUTES),
                "{}",
                handed.message
            );
        }
    }

    #[test]
    fn failures_before_rustc_and_of_the_tools_are_device_only() {
        let handed = handover(&compile_error(Vec::new()), &no_path).unwrap();
        assert_eq!(handed.why, NotBuilt::DeviceOnly);
        assert!(
            handed.message.ends_with("error: could not compile `k`"),
            "{}",
            handed.message
        );
        let handed = handover(
            &BuildError::NotNightly {
                version: "rustc 1.95.0".into(),
            },
            &no_path,
        )
        .unwrap();
        assert_eq!(handed.why, NotBuilt::DeviceOnly);
        assert!(handed.message.contains("nightly"), "{}", handed.message);
        assert!(handover(&BuildError::NotInBuildScript, &no_path).is_none());
    }
}
