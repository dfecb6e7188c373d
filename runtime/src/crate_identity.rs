//! Which crate of a build a kernel's launcher and a PTX module belong to:
//! a launcher may load only the module its own crate embedded.
//!
//! `embed_kernels!()` vouches for its crate's PTX to that crate's launchers
//! alone (each entry point takes the parameters its launcher passes). Another
//! crate can name the module (`pub use gpu_ops::KERNEL_MODULE;` at its
//! root, or `#[kernel(module = "gpu_ops::KERNEL_MODULE")]`) and declare a
//! kernel of the same name with other parameters of the same sizes (`u64` for
//! a pointer): its launcher would run the other crate's entry point with
//! arguments that entry point reads as a pointer. So a module records its
//! crate, every launcher its own, and `KernelFunction::new` refuses a
//! mismatch while the launcher's static is evaluated: a compile error,
//! whatever the backend.

/// A crate of the build, as cargo describes it to the compiler: the
/// package's directory (unique per package in a build), the crate's name,
/// and which of the package's targets it is (the library, a binary, an
/// integration test or benchmark: these may share the library's name).
/// Made by [`crate_identity!()`](crate::crate_identity) in the crate being
/// compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrateIdentity {
    manifest_dir: Option<&'static str>,
    crate_name: Option<&'static str>,
    bin_name: Option<&'static str>,
    test_or_bench: bool,
}

/// The crate being compiled where this is expanded, as a [`CrateIdentity`].
/// (Outside cargo, the variables it reads are unset, and every such crate
/// has the same identity.)
#[macro_export]
macro_rules! crate_identity {
    () => {
        $crate::CrateIdentity::__from_cargo_env(
            ::core::option_env!("CARGO_MANIFEST_DIR"),
            ::core::option_env!("CARGO_CRATE_NAME"),
            ::core::option_env!("CARGO_BIN_NAME"),
            ::core::option_env!("CARGO_TARGET_TMPDIR").is_some(),
        )
    };
}

impl CrateIdentity {
    /// The identity from cargo's variables, as [`crate_identity!`] reads
    /// them: `CARGO_MANIFEST_DIR`, `CARGO_CRATE_NAME`, `CARGO_BIN_NAME`
    /// (binaries and examples only), and whether `CARGO_TARGET_TMPDIR` is
    /// set (integration tests and benchmarks only).
    ///
    /// Safe, though any identity can be made with it: an identity is only
    /// compared by `EmbeddedModule::of_crate` and `KernelFunction::new`,
    /// both `unsafe`, and the macros that call them pass
    /// `crate_identity!()`, which no code of the user's can change.
    #[doc(hidden)]
    pub const fn __from_cargo_env(
        manifest_dir: Option<&'static str>,
        crate_name: Option<&'static str>,
        bin_name: Option<&'static str>,
        test_or_bench: bool,
    ) -> Self {
        CrateIdentity {
            manifest_dir,
            crate_name,
            bin_name,
            test_or_bench,
        }
    }

    /// The crate's name (`CARGO_CRATE_NAME`), where cargo set it.
    pub const fn crate_name(&self) -> Option<&'static str> {
        self.crate_name
    }

    /// The directory of the crate's package (`CARGO_MANIFEST_DIR`), where
    /// cargo set it.
    pub const fn manifest_dir(&self) -> Option<&'static str> {
        self.manifest_dir
    }

    /// Whether `self` and `other` are the same crate (usable in constants).
    pub const fn same_as(&self, other: &CrateIdentity) -> bool {
        same_str(self.manifest_dir, other.manifest_dir)
            && same_str(self.crate_name, other.crate_name)
            && same_str(self.bin_name, other.bin_name)
            && self.test_or_bench == other.test_or_bench
    }

    /// Appends a description of the crate to `message`: "`name` (the
    /// library of the package at `dir`)".
    const fn describe(&self, message: Message) -> Message {
        let message = message
            .push("`")
            .push(unwrap_or(self.crate_name, "?"))
            .push("` (");
        let message = match (self.bin_name, self.test_or_bench) {
            (Some(bin), _) => message.push("the binary `").push(bin).push("`"),
            (None, true) => message.push("an integration test or benchmark"),
            (None, false) => message.push("the library"),
        };
        message
            .push(" of the package at ")
            .push(unwrap_or(self.manifest_dir, "?"))
            .push(")")
    }
}

/// Refuses, by panicking (a compile error where it is evaluated in a
/// constant or static), a launcher of `kernel` in crate `launcher` that
/// names a module embedded by crate `module`.
pub(crate) const fn check_module_owner(
    kernel: &str,
    launcher: &CrateIdentity,
    module: &CrateIdentity,
) {
    if launcher.same_as(module) {
        return;
    }
    let message = Message::new()
        .push("the launcher of kernel `")
        .push(kernel)
        .push("`, in crate ");
    let message = launcher
        .describe(message)
        .push(", names the PTX module embedded by another crate, ");
    let message = module.describe(message).push(
        ": a crate's module is vouched for to that crate's own launchers alone (its entry point of this name is another kernel, whose parameters may differ). Launch that crate's kernels through its own launchers, and give this crate's kernels this crate's module (`embed_kernels!()` at its root, or `#[kernel(module = \"...\")]` naming one)",
    );
    panic!("{}", message.as_str())
}

/// A message built in a constant: its first `CAPACITY` bytes.
struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    const CAPACITY: usize = 2048;

    const fn new() -> Self {
        Message {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    const fn push(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// The text, up to the last whole character (a long message is cut).
    const fn as_str(&self) -> &str {
        let (text, _) = self.bytes.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => text,
            Err(e) => {
                let (whole, _) = text.split_at(e.valid_up_to());
                match core::str::from_utf8(whole) {
                    Ok(text) => text,
                    Err(_) => "",
                }
            }
        }
    }
}

const fn unwrap_or(value: Option<&'static str>, default: &'static str) -> &'static str {
    match value {
        Some(v) => v,
        None => default,
    }
}

const fn same_str(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            if a.len() != b.len() {
                return false;
            }
            let mut i = 0;
            while i < a.len() {
                if a[i] != b[i] {
                    return false;
                }
                i += 1;
            }
            true
        }
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{check_module_owner, CrateIdentity};

    const LIB: CrateIdentity =
        CrateIdentity::__from_cargo_env(Some("/w/kernels"), Some("kernels"), None, false);

    #[test]
    fn crates_are_told_apart_by_package_name_and_target() {
        assert!(LIB.same_as(&LIB));
        for other in [
            // Another package's crate of the same name.
            CrateIdentity::__from_cargo_env(Some("/w/other"), Some("kernels"), None, false),
            // Another crate of the package.
            CrateIdentity::__from_cargo_env(Some("/w/kernels"), Some("kernel"), None, false),
            // The package's binary named after it, as `src/main.rs` is.
            CrateIdentity::__from_cargo_env(
                Some("/w/kernels"),
                Some("kernels"),
                Some("kernels"),
                false,
            ),
            // Its integration test `tests/kernels.rs`.
            CrateIdentity::__from_cargo_env(Some("/w/kernels"), Some("kernels"), None, true),
            // A crate built outside cargo.
            CrateIdentity::__from_cargo_env(None, None, None, false),
        ] {
            assert!(!LIB.same_as(&other), "{other:?}");
            assert!(!other.same_as(&LIB), "{other:?}");
        }
        assert_eq!(crate_identity!().crate_name(), Some("gpu_runtime"));
        assert!(crate_identity!().same_as(&crate_identity!()));
    }

    #[test]
    fn a_foreign_module_is_refused_naming_kernel_and_both_crates() {
        check_module_owner("k", &LIB, &LIB);
        let bin = CrateIdentity::__from_cargo_env(Some("/w/app"), Some("app"), Some("app"), false);
        let refused = std::panic::catch_unwind(|| check_module_owner("scale", &bin, &LIB))
            .expect_err("a module of another crate");
        let message = refused.downcast_ref::<String>().expect("a formatted panic");
        assert!(
            message.starts_with("the launcher of kernel `scale`, in crate `app` (the binary `app` of the package at /w/app), names the PTX module embedded by another crate, `kernels` (the library of the package at /w/kernels): "),
            "{message}"
        );
        // A message past the capacity is cut at a whole character.
        let long = "é".repeat(super::Message::CAPACITY);
        let refused = std::panic::catch_unwind(|| check_module_owner(&long, &bin, &LIB))
            .expect_err("a module of another crate");
        let message = refused.downcast_ref::<String>().expect("a formatted panic");
        assert!(
            message.len() <= super::Message::CAPACITY,
            "{}",
            message.len()
        );
        assert!(message.ends_with('é'), "{message}");
    }
}
