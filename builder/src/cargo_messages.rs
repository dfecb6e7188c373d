//! The nested cargo's JSON messages (`--message-format=json`), read with
//! `cargo_metadata`'s message stream: the artifacts the device build made,
//! and the errors rustc reported when it failed.

use crate::error::DeviceDiagnostic;
use cargo_metadata::diagnostic::DiagnosticLevel;
use cargo_metadata::{Artifact, Message};
use std::path::Path;

/// What one run of the nested cargo reported.
#[derive(Default)]
pub(crate) struct NestedMessages {
    /// The artifacts built (or found fresh), in order.
    pub artifacts: Vec<Artifact>,
    /// The errors rustc reported (its warnings are left out: they are the
    /// dependencies' business, and the host compile shows the crate's own).
    pub errors: Vec<DeviceDiagnostic>,
}

/// Reads cargo's messages from its standard output. `kernel_dir` is the
/// kernel crate's directory (canonical), which tells its errors from its
/// dependencies'. Lines that are not messages (a build script's output
/// passed through) are skipped, as cargo_metadata does.
pub(crate) fn read(stdout: &[u8], kernel_dir: &Path) -> NestedMessages {
    let mut read = NestedMessages::default();
    for message in Message::parse_stream(stdout).flatten() {
        match message {
            Message::CompilerArtifact(artifact) => read.artifacts.push(artifact),
            Message::CompilerMessage(m)
                if matches!(
                    m.message.level,
                    DiagnosticLevel::Error | DiagnosticLevel::Ice
                ) =>
            {
                let in_kernel_crate = std::fs::canonicalize(&m.target.src_path)
                    .map(|src| src.starts_with(kernel_dir))
                    .unwrap_or(false);
                read.errors.push(DeviceDiagnostic {
                    package_id: m.package_id.repr.clone(),
                    crate_name: m.target.name.replace('-', "_"),
                    in_kernel_crate,
                    code: m.message.code.as_ref().map(|c| c.code.clone()),
                    message: m.message.message.clone(),
                    rendered: m
                        .message
                        .rendered
                        .clone()
                        .unwrap_or_else(|| m.message.message.clone()),
                });
            }
            _ => {}
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use super::read;
    use std::path::Path;

    #[test]
    fn artifacts_and_errors_are_read_from_cargo_json() {
        // One artifact, a warning (left out), an error in the kernel crate
        // with escapes a substring scanner misreads (`\r`, a surrogate pair,
        // an escaped quote), and a line that is not JSON.
        let stdout = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/k#0.1.0","manifest_path":"/w/k/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"k","src_path":"/w/k/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":false},"features":[],"filenames":["/t/libk.rlib","/t/libk.rmeta"],"executable":null,"fresh":false}"#,
            "\n",
            "a line a build script printed\n",
            r#"{"reason":"compiler-message","package_id":"path+file:///w/k#0.1.0","manifest_path":"/w/k/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"k","src_path":"/nonexistent/k/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"message":{"rendered":"warning: unused\n","$message_type":"diagnostic","children":[],"code":null,"level":"warning","message":"unused","spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","package_id":"path+file:///w/k#0.1.0","manifest_path":"/w/k/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"my-k","src_path":"/nonexistent/k/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"message":{"rendered":"error[E0308]: a \"quoted\" \ud83d\ude00 line\r\n","$message_type":"diagnostic","children":[],"code":{"code":"E0308","explanation":null},"level":"error","message":"mismatched types","spans":[]}}"#,
            "\n",
        );
        let read = read(stdout.as_bytes(), Path::new("/nonexistent/k"));
        assert_eq!(read.artifacts.len(), 1);
        assert_eq!(read.artifacts[0].filenames[0].as_str(), "/t/libk.rlib");
        assert_eq!(read.artifacts[0].manifest_path.as_str(), "/w/k/Cargo.toml");
        assert_eq!(read.errors.len(), 1, "the warning is left out");
        let error = &read.errors[0];
        assert_eq!(
            error.rendered,
            "error[E0308]: a \"quoted\" \u{1F600} line\r\n"
        );
        assert_eq!(error.code.as_deref(), Some("E0308"));
        assert_eq!(error.crate_name, "my_k");
        // The source path does not exist here, so it is not the kernel crate's.
        assert!(!error.in_kernel_crate);
    }
}
