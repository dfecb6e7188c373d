//! The builder's error type.

use std::fmt;
use std::path::PathBuf;

/// Why a PTX build failed; each message says what to do about it.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// A rustup component the build needs is not installed.
    MissingComponent {
        /// The component (`rust-src`, `llvm-tools`).
        component: &'static str,
        /// The exact command that installs it.
        install: String,
    },
    /// The toolchain building the kernels is not a nightly one: kernels need
    /// `-Zbuild-std` and the `abi_ptx` feature.
    NotNightly {
        /// What `rustc -vV` reported.
        version: String,
    },
    /// The architecture setting is not of the form `sm_NN`.
    BadArch(String),
    /// `GPU_PTX_DEBUG` names no debug information setting.
    BadDebugInfo(String),
    /// `build()` ran outside a build script and no output directory was set.
    NotInBuildScript,
    /// The crate directory has no `Cargo.toml`.
    NoManifest(PathBuf),
    /// A tool could not be started.
    Spawn {
        /// The tool.
        tool: String,
        /// The operating system's error.
        error: String,
    },
    /// A tool ran and failed: for `cargo`, the kernel crate did not compile.
    ToolFailed {
        /// The tool.
        tool: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The kernel crate, or one of its dependencies, did not compile for
    /// the device (`nvptx64-nvidia-cuda`).
    DeviceCompile {
        /// The errors rustc reported, in order.
        errors: Vec<DeviceDiagnostic>,
        /// What cargo printed on stderr: its own errors (a manifest, the
        /// dependency resolution) when rustc reported none.
        cargo_stderr: String,
    },
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

/// An error rustc reported in the device build.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceDiagnostic {
    /// The package the error is in, as cargo identifies it.
    pub package_id: String,
    /// The crate (target) name, as rustc knows it (`my_kernels`).
    pub crate_name: String,
    /// Whether the error is in the kernel crate itself (else in a dependency).
    pub in_kernel_crate: bool,
    /// The error code (`E0463`), if any.
    pub code: Option<String>,
    /// The error's one-line message.
    pub message: String,
    /// The error as rustc renders it, with its source lines.
    pub rendered: String,
}

impl BuildError {
    pub(crate) fn io(path: &std::path::Path, error: std::io::Error) -> BuildError {
        BuildError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::MissingComponent { component, install } => write!(
                f,
                "building kernels to PTX needs the rustup component `{component}`, which is not installed; install it with:\n    {install}"
            ),
            BuildError::NotNightly { version } => write!(
                f,
                "building kernels to PTX needs a nightly Rust toolchain (-Zbuild-std, abi_ptx), but this is {version}; pin one in rust-toolchain.toml, e.g. channel = \"nightly-2026-05-20\", with the components rust-src and llvm-tools"
            ),
            BuildError::BadArch(arch) => write!(
                f,
                "`{arch}` is not a PTX architecture: use sm_70, sm_80, sm_90, sm_90a or similar (set with PtxBuilder::arch, PtxBuilder::archs or GPU_PTX_ARCH)"
            ),
            BuildError::BadDebugInfo(name) => write!(
                f,
                "GPU_PTX_DEBUG=`{name}` is not a debug information setting: use none, line-tables or full"
            ),
            BuildError::NotInBuildScript => write!(
                f,
                "PtxBuilder::build ran outside a build script: OUT_DIR is not set; call .out_dir(..)"
            ),
            BuildError::NoManifest(path) => write!(f, "no kernel crate at {}: the file does not exist", path.display()),
            BuildError::Spawn { tool, error } => write!(f, "could not run `{tool}`: {error}"),
            BuildError::ToolFailed { tool, status, stderr } => {
                write!(f, "`{tool}` failed ({status}) while building kernels to PTX:\n{stderr}")
            }
            BuildError::DeviceCompile { errors, cargo_stderr } => {
                writeln!(f, "the device (nvptx64-nvidia-cuda) build of the kernels failed:")?;
                if errors.is_empty() {
                    write!(f, "{}", cargo_stderr.trim_end())
                } else {
                    let rendered: Vec<&str> = errors.iter().map(|e| e.rendered.trim_end()).collect();
                    write!(f, "{}", rendered.join("\n\n"))
                }
            }
            BuildError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for BuildError {}
