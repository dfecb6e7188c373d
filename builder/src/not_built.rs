//! The PTX file written in place of a module that was not built: PTX
//! comments, a marker line saying why, then the message to report.
//!
//! ```text
//! // gpu-builder: not built (device-only)
//! // the dependency `rand` needs `std`, ...
//! ```
//!
//! Two readers: `gpu_device::embed_kernels!()` in the host compile of the
//! same crate, which reports the message (see [`NotBuilt`]), and the
//! runtime, which refuses to load such a module, naming the reason. Each
//! has its own copy of the marker and keywords; the workspace's tests check
//! all three agree (`tests/toolchain/kernel_crate_errors.rs`, `tests/toolchain/ptx.rs`).

/// The first line's start.
pub const NOT_BUILT_MARKER: &str = "// gpu-builder: not built";

/// Why no PTX was built, and who reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotBuilt {
    /// A documentation build (docs.rs, `--cfg docsrs`): nothing is
    /// reported; the module only refuses to load.
    Documentation,
    /// Errors in the kernel crate's own code: the host compile of the same
    /// code reports them, with their spans; `embed_kernels!()` reports the
    /// message only where the host compile has no error (code the host does
    /// not compile, such as `#[cfg(target_arch = "nvptx64")]` items).
    HostReports,
    /// A failure only the device build sees (a dependency that needs `std`,
    /// the toolchain, LLVM): `embed_kernels!()` reports the message.
    DeviceOnly,
}

impl NotBuilt {
    /// The keyword in the marker line.
    pub fn keyword(self) -> &'static str {
        match self {
            NotBuilt::Documentation => "documentation",
            NotBuilt::HostReports => "host-reports",
            NotBuilt::DeviceOnly => "device-only",
        }
    }

    fn from_keyword(keyword: &str) -> Option<NotBuilt> {
        [
            NotBuilt::Documentation,
            NotBuilt::HostReports,
            NotBuilt::DeviceOnly,
        ]
        .into_iter()
        .find(|k| k.keyword() == keyword)
    }
}

/// The text written as `kernels.ptx` for a module not built.
pub fn not_built_ptx(why: NotBuilt, message: &str) -> String {
    let mut text = format!("{NOT_BUILT_MARKER} ({})\n", why.keyword());
    for line in message.lines() {
        text.push_str("// ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// Why `ptx` was not built and its message, or `None` for a built module.
pub fn read_not_built(ptx: &str) -> Option<(NotBuilt, String)> {
    let mut lines = ptx.lines();
    let keyword = lines
        .next()?
        .strip_prefix(NOT_BUILT_MARKER)?
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let why = NotBuilt::from_keyword(keyword)?;
    let message: Vec<&str> = lines
        .map(|l| l.strip_prefix("// ").unwrap_or(l.trim_start_matches("//")))
        .collect();
    Some((why, message.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_and_message_round_trip() {
        for why in [
            NotBuilt::Documentation,
            NotBuilt::HostReports,
            NotBuilt::DeviceOnly,
        ] {
            let text = not_built_ptx(why, "first line\n  second, indented\n\nafter a blank");
            assert!(text.starts_with(NOT_BUILT_MARKER), "{text}");
            assert_eq!(
                read_not_built(&text),
                Some((
                    why,
                    "first line\n  second, indented\n\nafter a blank".to_string()
                ))
            );
        }
        assert_eq!(read_not_built(".version 6.3\n.target sm_70\n"), None);
        assert_eq!(read_not_built("// gpu-builder: not built (other)\n"), None);
    }
}
