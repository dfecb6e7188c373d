//! The tools of the build: the nested `cargo`, `llvm-ar`, `llvm-link`, `opt`, `llc`.

use crate::{run, BuildError, TARGET};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Toolchain {
    cargo: PathBuf,
    sysroot: PathBuf,
    llvm_bin: PathBuf,
}

/// The bitcode objects of a nested build, by how they are linked.
pub struct Artifacts {
    /// The kernel crate's own objects.
    pub crate_objects: Vec<PathBuf>,
    /// Objects of every dependency, `core` and `compiler_builtins` included.
    pub dependency_objects: Vec<PathBuf>,
    /// Source directories and build scripts of the local crates, for `rerun-if-changed`.
    pub local_sources: Vec<PathBuf>,
}

/// Environment variables cargo sets for build scripts that must not leak into
/// the nested cargo (they describe the outer build).
fn is_outer_build_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOCFLAGS",
        "TARGET",
        "HOST",
        "OUT_DIR",
        "OPT_LEVEL",
        "PROFILE",
        "DEBUG",
        "NUM_JOBS",
        "RUSTC_LINKER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ];
    EXACT.contains(&name)
        || name.starts_with("CARGO_CFG_")
        || name.starts_with("CARGO_FEATURE_")
        || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || name.starts_with("DEP_")
        || name == "CARGO_PRIMARY_PACKAGE"
        || name == "CARGO_CRATE_NAME"
}

impl Toolchain {
    /// The toolchain of the running build (`RUSTC` and `CARGO`, as cargo sets them).
    pub fn find() -> Result<Toolchain, BuildError> {
        let rustc = env::var_os("RUSTC")
            .map(PathBuf::from)
            .unwrap_or_else(|| "rustc".into());
        let cargo = env::var_os("CARGO")
            .map(PathBuf::from)
            .unwrap_or_else(|| "cargo".into());
        Toolchain::with(&rustc, cargo)
    }

    /// The toolchain whose compiler is `rustc`, checked for the components the build needs.
    fn with(rustc: &Path, cargo: PathBuf) -> Result<Toolchain, BuildError> {
        let sysroot = run("rustc", Command::new(rustc).args(["--print", "sysroot"]))?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let version = run("rustc", Command::new(rustc).arg("-vV"))?;
        let version = String::from_utf8_lossy(&version.stdout).into_owned();
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap_or("x86_64-unknown-linux-gnu")
            .trim()
            .to_string();
        let toolchain = env::var("RUSTUP_TOOLCHAIN").unwrap_or_else(|_| {
            sysroot
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        // First: on a stable toolchain the components are beside the point
        // (and rustup's command to add them would install them for stable).
        if !is_nightly(&version, env::var("RUSTC_BOOTSTRAP").ok().as_deref()) {
            return Err(BuildError::NotNightly {
                version: version
                    .lines()
                    .next()
                    .unwrap_or("an unknown rustc")
                    .trim()
                    .to_string(),
            });
        }
        let install =
            |component: &str| format!("rustup component add {component} --toolchain {toolchain}");
        if !sysroot
            .join("lib/rustlib/src/rust/library/core/Cargo.toml")
            .is_file()
        {
            return Err(BuildError::MissingComponent {
                component: "rust-src",
                install: install("rust-src"),
            });
        }
        let llvm_bin = sysroot.join("lib/rustlib").join(&host).join("bin");
        if ["llvm-link", "opt", "llc", "llvm-ar", "llvm-dis", "llvm-as"]
            .iter()
            .any(|t| !llvm_bin.join(t).is_file())
        {
            return Err(BuildError::MissingComponent {
                component: "llvm-tools",
                install: install("llvm-tools"),
            });
        }
        Ok(Toolchain {
            cargo,
            sysroot,
            llvm_bin,
        })
    }

    /// A command running this toolchain's cargo for the device, without the
    /// outer build's variables.
    pub fn nested_cargo(&self) -> Command {
        let mut cmd = Command::new(&self.cargo);
        for (name, _) in env::vars_os() {
            if let Some(name) = name.to_str() {
                if is_outer_build_variable(name) {
                    cmd.env_remove(name);
                }
            }
        }
        cmd
    }

    /// The kernel crate's packages and dependencies as resolved for the
    /// device (`cargo metadata --filter-platform nvptx64-nvidia-cuda`), for
    /// the messages of a failed build; `None` if cargo cannot say.
    pub fn device_dependencies(&self, manifest: &Path) -> Option<cargo_metadata::Metadata> {
        let mut command = cargo_metadata::MetadataCommand::new();
        command
            .cargo_path(&self.cargo)
            .manifest_path(manifest)
            .other_options(vec!["--filter-platform".to_string(), TARGET.to_string()]);
        for (name, _) in env::vars_os() {
            if let Some(name) = name.to_str() {
                if is_outer_build_variable(name) {
                    command.env_remove(name);
                }
            }
        }
        command.exec().ok()
    }

    fn tool(&self, name: &str) -> Command {
        Command::new(self.llvm_bin.join(name))
    }

    /// Builds the crate for the device target with bitcode rlibs, and unpacks
    /// their objects under `objects_dir` (a directory of this crate's own).
    pub fn cargo_build_bitcode(
        &self,
        manifest: &Path,
        target_dir: &Path,
        objects_dir: &Path,
        arch: &str,
        debuginfo: &str,
    ) -> Result<Artifacts, BuildError> {
        let mut cmd = self.nested_cargo();
        cmd.args([
            "build",
            "--lib",
            "--release",
            "--target",
            TARGET,
            "-Zbuild-std=core",
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--message-format=json")
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            [
                "-Clinker-plugin-lto",
                &format!("-Ctarget-cpu={arch}"),
                debuginfo,
                // The builder gives globals of reserved names (`__gpu_shared_*`,
                // `__gpu_const_*`) another state space, and kernels' symbols
                // meaning: a name chosen with `no_mangle`, `export_name` or
                // `link_section` written without `unsafe(...)` (edition 2021
                // allows it) would let safe code forge one. Only registry
                // dependencies, whose lints cargo caps, are exempt.
                "-Dunsafe_attr_outside_unsafe",
            ]
            .join("\x1f"),
        );
        let output = cmd.output().map_err(|e| BuildError::Spawn {
            tool: "cargo (nvptx64-nvidia-cuda build of the kernel crate)".into(),
            error: e.to_string(),
        })?;
        let kernel_dir = manifest
            .parent()
            .and_then(|d| fs::canonicalize(d).ok())
            .unwrap_or_default();
        let messages = crate::cargo_messages::read(&output.stdout, &kernel_dir);
        if !output.status.success() {
            return Err(BuildError::DeviceCompile {
                errors: messages.errors,
                cargo_stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        let canonical_manifest =
            fs::canonicalize(manifest).map_err(|e| BuildError::io(manifest, e))?;

        let mut artifacts = Artifacts {
            crate_objects: Vec::new(),
            dependency_objects: Vec::new(),
            local_sources: Vec::new(),
        };
        for artifact in &messages.artifacts {
            let manifest_path = artifact.manifest_path.as_std_path();
            let local = artifact.package_id.repr.starts_with("path+file://")
                && !manifest_path.starts_with(&self.sysroot);
            if local
                && !artifacts.local_sources.iter().any(|s| {
                    Some(s.as_path()) == manifest_path.parent().map(|d| d.join("src")).as_deref()
                })
            {
                if let Some(dir) = manifest_path.parent() {
                    artifacts.local_sources.push(dir.join("src"));
                    let build_rs = dir.join("build.rs");
                    if build_rs.is_file() {
                        artifacts.local_sources.push(build_rs);
                    }
                }
            }
            // Host artifacts (build scripts' dependencies, proc macros) are not linked.
            let device_dir = target_dir.join(TARGET);
            let Some(rlib) = artifact
                .filenames
                .iter()
                .find(|f| f.as_str().ends_with(".rlib") && f.starts_with(&device_dir))
            else {
                continue;
            };
            let objects = self.extract_objects(rlib.as_std_path(), objects_dir)?;
            let is_kernel_crate = fs::canonicalize(manifest_path)
                .map(|m| m == canonical_manifest)
                .unwrap_or(false);
            if is_kernel_crate {
                artifacts.crate_objects.extend(objects);
            } else {
                artifacts.dependency_objects.extend(objects);
            }
        }
        if artifacts.crate_objects.is_empty() {
            return Err(BuildError::ToolFailed {
                tool: "cargo".into(),
                status: "no library artifact".into(),
                stderr: format!(
                    "the nested build of {} produced no rlib",
                    manifest.display()
                ),
            });
        }
        Ok(artifacts)
    }

    /// Unpacks the bitcode objects of an rlib into their own directory.
    fn extract_objects(&self, rlib: &Path, root: &Path) -> Result<Vec<PathBuf>, BuildError> {
        let stem = rlib
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = root.join(stem);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| BuildError::io(&dir, e))?;
        run(
            "llvm-ar",
            self.tool("llvm-ar")
                .arg("x")
                .arg("--output")
                .arg(&dir)
                .arg(rlib),
        )?;
        let mut objects: Vec<PathBuf> = fs::read_dir(&dir)
            .map_err(|e| BuildError::io(&dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "o"))
            .collect();
        objects.sort();
        Ok(objects)
    }

    /// Links bitcode objects into one module. (Not `--only-needed`: llvm-link
    /// applies it to every file after the first, which drops definitions that
    /// later files need, such as the panic handler; `opt` removes the unused
    /// code instead.)
    pub fn link(&self, objects: &[PathBuf], out: &Path) -> Result<(), BuildError> {
        run(
            "llvm-link",
            self.tool("llvm-link").args(objects).arg("-o").arg(out),
        )?;
        Ok(())
    }

    /// The `ptx_kernel` functions defined in a bitcode module, and the
    /// kernels' interface descriptions (see [`crate::interface_globals`]).
    pub fn kernel_entry_points(
        &self,
        bitcode: &Path,
    ) -> Result<(Vec<String>, Vec<String>), BuildError> {
        let output = run(
            "llvm-dis",
            self.tool("llvm-dis").arg(bitcode).arg("-o").arg("-"),
        )?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut names: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("define ") && l.contains(" ptx_kernel "))
            .filter_map(|l| {
                let at = l.find('@')?;
                let rest = &l[at + 1..];
                let end = rest.find('(')?;
                Some(rest[..end].trim_matches('"').to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        Ok((names, crate::interface_globals(&text)))
    }

    /// Internalizes everything but the kernels, the globals in `kept` and the
    /// globals the runtime sets ([`crate::HOST_SET_GLOBALS`]), removes dead
    /// code, optimises.
    pub fn internalize_and_optimize(
        &self,
        input: &Path,
        kept: &[String],
        out: &Path,
    ) -> Result<(), BuildError> {
        let public: Vec<&str> = kept
            .iter()
            .map(String::as_str)
            .chain(crate::HOST_SET_GLOBALS.iter().copied())
            .collect();
        run(
            "opt",
            self.tool("opt")
                .arg(format!(
                    "--internalize-public-api-list={}",
                    public.join(",")
                ))
                .arg("-passes=internalize,globaldce,default<O3>,globaldce")
                .arg(input)
                .arg("-o")
                .arg(out),
        )?;
        Ok(())
    }

    /// Rewrites the IR of `input` for the device: the shared-memory statics
    /// move into address space 3 (see [`crate::shared_memory`]), the
    /// constant arrays into address space 4 ([`crate::constant_memory`]), and the
    /// kernels' inputs become `noalias readonly` (see
    /// [`crate::kernel_inputs`]), writing `out`. Returns whether it wrote
    /// `out` (`false` when neither pass changed anything) and the warnings
    /// of the inputs pass.
    pub fn rewrite_ir(&self, input: &Path, out: &Path) -> Result<(bool, Vec<String>), BuildError> {
        let text = run(
            "llvm-dis",
            self.tool("llvm-dis").arg(input).arg("-o").arg("-"),
        )?;
        let text = String::from_utf8_lossy(&text.stdout);
        let moved = crate::shared_memory::move_to_shared_space(&text).map_err(|e| {
            BuildError::ToolFailed {
                tool: "gpu-builder (shared memory)".into(),
                status: "unreadable IR".into(),
                stderr: e,
            }
        })?;
        let text = moved.map(std::borrow::Cow::Owned).unwrap_or(text);
        let constants = crate::constant_memory::move_to_constant_space(&text).map_err(|e| {
            BuildError::ToolFailed {
                tool: "gpu-builder (constant memory)".into(),
                status: "unreadable IR".into(),
                stderr: e,
            }
        })?;
        let text = match constants {
            Some(moved) => std::borrow::Cow::Owned(moved),
            None => text,
        };
        let text = match crate::launch_bounds::annotate(&text) {
            Some(annotated) => std::borrow::Cow::Owned(annotated),
            None => text,
        };
        let marked = crate::kernel_inputs::mark_inputs(&text);
        let rewritten = match (marked.ir, text) {
            (Some(ir), _) => ir,
            (None, std::borrow::Cow::Owned(moved)) => moved,
            (None, std::borrow::Cow::Borrowed(_)) => return Ok((false, marked.warnings)),
        };
        let ll = out.with_extension("ll");
        fs::write(&ll, rewritten).map_err(|e| BuildError::io(&ll, e))?;
        run("llvm-as", self.tool("llvm-as").arg(&ll).arg("-o").arg(out))?;
        Ok((true, marked.warnings))
    }

    /// Generates PTX for `arch`, fusing multiplies and adds when `contract`.
    pub fn codegen(
        &self,
        input: &Path,
        arch: &str,
        contract: bool,
        out: &Path,
    ) -> Result<(), BuildError> {
        let fp_contract = if contract { "fast" } else { "off" };
        let mut llc = self.tool("llc");
        if let Some(version) = minimum_ptx_version(arch) {
            llc.arg(format!("-mattr=+{version}"));
        }
        run(
            "llc",
            llc.arg(format!("-mcpu={arch}"))
                .arg("-O3")
                .arg(format!("-fp-contract={fp_contract}"))
                .arg(input)
                .arg("-o")
                .arg(out),
        )?;
        Ok(())
    }
}

/// Whether a rustc reporting `version` (`rustc -vV`) accepts `#![feature]`
/// and `-Z` flags, given `RUSTC_BOOTSTRAP`: a nightly or development build
/// unless `RUSTC_BOOTSTRAP=-1` makes it act as stable; any other compiler
/// only when `RUSTC_BOOTSTRAP` is set (to `1` or to crate names).
fn is_nightly(version: &str, bootstrap: Option<&str>) -> bool {
    match bootstrap {
        Some("-1") => false,
        Some(v) if !v.is_empty() => true,
        _ => version.contains("-nightly") || version.contains("-dev"),
    }
}

/// The PTX version `llc` must emit for `arch` when its own default is lower
/// than what `gpu-device`'s inline PTX needs: 6.3 (`activemask` is 6.2,
/// `nanosleep` 6.3, both sm_70 instructions); on sm_90 8.3, for the TMA
/// copies' `fence.proxy.tensormap::generic.acquire` (a CUDA 12.3 driver or
/// later JITs it). LLVM defaults to 6.0 for sm_70 and 6.1 for sm_72, from
/// sm_75 to 6.3 or later, to 7.8 for sm_90 and 8.0 for sm_90a.
fn minimum_ptx_version(arch: &str) -> Option<&'static str> {
    match arch {
        "sm_70" | "sm_72" => Some("ptx63"),
        "sm_90" | "sm_90a" => Some("ptx83"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by each test that writes a stand-in `rustc` and runs it: while
    /// one test's script is open for writing, another test's fork (to run
    /// its own script) inherits that descriptor until its exec, and running
    /// the first script then fails with "Text file busy" (ETXTBSY, seen in
    /// CI). The tests also change `RUSTC_BOOTSTRAP`, which the others read.
    static SCRIPTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A stand-in `rustc` that reports `sysroot` as its sysroot.
    fn fake_rustc(dir: &Path, sysroot: &Path) -> PathBuf {
        let script = dir.join("rustc");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ncase \"$1\" in --print) echo {};; *) printf 'rustc 1.97.0-nightly\\nhost: x86_64-unknown-linux-gnu\\n';; esac\n",
                sysroot.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        script
    }

    #[test]
    fn missing_components_print_the_command_that_installs_them() {
        let _scripts = SCRIPTS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = env::temp_dir().join(format!("gpu-builder-toolchain-{}", std::process::id()));
        let sysroot = dir.join("toolchains/nightly-2026-05-20-x86_64-unknown-linux-gnu");
        fs::create_dir_all(&sysroot).unwrap();
        let rustc = fake_rustc(&dir, &sysroot);
        let expect = |component: &str| {
            let err = Toolchain::with(&rustc, "cargo".into())
                .err()
                .expect("a component is missing");
            let text = err.to_string();
            // RUSTUP_TOOLCHAIN names the toolchain when rustup runs the build.
            let toolchain = env::var("RUSTUP_TOOLCHAIN")
                .unwrap_or_else(|_| "nightly-2026-05-20-x86_64-unknown-linux-gnu".into());
            assert!(
                text.contains(&format!(
                    "rustup component add {component} --toolchain {toolchain}"
                )),
                "{text}"
            );
        };
        expect("rust-src");
        let core = sysroot.join("lib/rustlib/src/rust/library/core");
        fs::create_dir_all(&core).unwrap();
        fs::write(core.join("Cargo.toml"), "").unwrap();
        expect("llvm-tools");
        let bin = sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/bin");
        fs::create_dir_all(&bin).unwrap();
        for tool in ["llvm-link", "opt", "llc", "llvm-ar", "llvm-dis", "llvm-as"] {
            fs::write(bin.join(tool), "").unwrap();
        }
        assert!(Toolchain::with(&rustc, "cargo".into()).is_ok());
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_stable_toolchain_is_reported_as_such() {
        let _scripts = SCRIPTS.lock().unwrap_or_else(|e| e.into_inner());
        let dir = env::temp_dir().join(format!("gpu-builder-stable-{}", std::process::id()));
        // A stable toolchain as rustup installs it: without rust-src or
        // llvm-tools. The error is that it is not nightly, not how to add
        // components to it (issue 24: "rustup component add rust-src
        // --toolchain stable-...").
        let sysroot = dir.join("toolchains/stable-x86_64-unknown-linux-gnu");
        fs::create_dir_all(&sysroot).unwrap();
        let script = dir.join("rustc");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\ncase \"$1\" in --print) echo {};; *) printf 'rustc 1.95.0 (stable)\\nhost: x86_64-unknown-linux-gnu\\n';; esac\n",
                sysroot.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let saved = env::var_os("RUSTC_BOOTSTRAP");
        env::remove_var("RUSTC_BOOTSTRAP");
        let err = Toolchain::with(&script, "cargo".into())
            .err()
            .expect("refused");
        if let Some(v) = saved {
            env::set_var("RUSTC_BOOTSTRAP", v);
        }
        assert!(matches!(err, BuildError::NotNightly { .. }), "{err:?}");
        assert!(
            err.to_string().contains("needs a nightly Rust toolchain"),
            "{err}"
        );
        assert!(err.to_string().contains("rustc 1.95.0 (stable)"), "{err}");
        assert!(err.to_string().contains("rust-toolchain.toml"), "{err}");
        assert!(!err.to_string().contains("rustup component add"), "{err}");
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn nightly_is_told_from_the_version_and_rustc_bootstrap() {
        let nightly = "rustc 1.97.0-nightly (abc 2026-05-19)\nhost: x";
        let stable = "rustc 1.95.0 (f2d3ce0bd 2026-03-21)\nhost: x";
        assert!(is_nightly(nightly, None));
        assert!(is_nightly(nightly, Some("")));
        assert!(
            !is_nightly(nightly, Some("-1")),
            "RUSTC_BOOTSTRAP=-1 acts as stable"
        );
        assert!(!is_nightly(stable, None));
        assert!(is_nightly(stable, Some("1")));
        assert!(!is_nightly(stable, Some("-1")));
    }

    #[test]
    fn outer_build_variables_are_recognised() {
        assert!(is_outer_build_variable("CARGO_CFG_TARGET_ARCH"));
        assert!(is_outer_build_variable("RUSTFLAGS"));
        assert!(is_outer_build_variable("OUT_DIR"));
        assert!(!is_outer_build_variable("CARGO_HOME"));
        assert!(!is_outer_build_variable("RUSTUP_TOOLCHAIN"));
        assert!(!is_outer_build_variable("PATH"));
    }
}
