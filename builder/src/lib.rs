//! Builds a crate's `#[kernel]` functions into one PTX module, from `build.rs`.
//!
//! ```no_run
//! // The body of `fn main` in a kernel crate's build.rs:
//! if let Err(e) = gpu_builder::PtxBuilder::this_crate().build() {
//!     eprintln!("{e}");
//!     std::process::exit(1);
//! }
//! ```
//!
//! The steps, with rustc's own NVPTX backend and the `llvm-tools` component
//! (rust-cuda's NVVM backend and rustc's `llvm-bitcode-linker` are not needed):
//!
//! 1. `cargo build --lib --target nvptx64-nvidia-cuda -Zbuild-std=core` of the
//!    crate with `-Clinker-plugin-lto`, so every rlib holds LLVM bitcode;
//! 2. `llvm-link`: the crate's bitcode with all of its dependencies' (`core`
//!    and `compiler_builtins` included) into one module;
//! 3. `llvm-dis`, four rewrites of the IR, then `llvm-as`: the statics of
//!    `shared_array!` (and the dynamic array) move to LLVM's address space 3
//!    (see [`shared_memory`]), so that their accesses become
//!    `ld.shared`/`st.shared`; the storage of `gpu_device::constant!` arrays
//!    moves to address space 4 (see [`constant_memory`]), read with
//!    `ld.const`; the kernels' `&[T]` inputs become `noalias readonly`
//!    parameters (see [`kernel_inputs`]), so that their loads become
//!    `ld.global.nc`; declared blocks and launch bounds become `.reqntid`,
//!    `.maxntid` and `.minnctapersm` (see [`launch_bounds`]);
//! 4. `opt`: internalize everything but the kernel entry points, their
//!    interface descriptions (see [`interface_globals`]) and the globals the
//!    runtime sets, drop what they do not reach, optimise at `-O3`;
//! 5. `llc -mcpu=<arch>`: PTX, written to `$OUT_DIR/kernels.ptx`, where
//!    `gpu_device::embed_kernels!()` finds it. Floating-point contraction is
//!    on (`-fp-contract=fast`), as nvcc's `-fmad=true`: see
//!    [`PtxBuilder::fma_contraction`].
//!
//! Steps 1 to 5 run once per architecture the crate names
//! ([`PtxBuilder::archs`]; `sm_70` by default), each with its own nested
//! target directory; `kernels.ptx` holds the modules one after the other,
//! the oldest first, split by [`ARCH_VARIANT_MARKER`] lines.
//!
//! The build script reruns when a source file of the crate or of a local
//! dependency changes (read from the nested build's dep-info), when the
//! architecture setting changes, and not otherwise.

#![deny(missing_docs)]

// The crate's README (its page on crates.io), whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod cargo_messages;
pub mod constant_memory;
pub mod debug_info;
pub mod diagnostics;
mod error;
pub mod kernel_inputs;
pub mod launch_bounds;
pub mod not_built;
pub mod shared_memory;
mod toolchain;

pub use debug_info::{DebugInfo, DEBUG_ENV, DEBUG_MARKER};
pub use error::{BuildError, DeviceDiagnostic};
pub use not_built::NotBuilt;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use toolchain::Toolchain;

/// The globals of device code that the runtime writes after loading a
/// module (`cuModuleGetGlobal`), kept visible (patterns of `opt`'s
/// internalize list): internal, the optimiser would fold their loads to
/// their initial value, and the driver could not find them by name.
/// `gpu_device::assert::RECORD_SYMBOL` (the address of the device's
/// assertion record) and the constant arrays of `gpu_device::constant!`
/// (`__gpu_const_<crate>_<name>`, see [`constant_memory`]).
pub const HOST_SET_GLOBALS: &[&str] = &["__gpu_assertion_record", "__gpu_const_*"];

/// The environment variable that overrides the PTX target architectures
/// (one, or several separated by commas).
pub const ARCH_ENV: &str = "GPU_PTX_ARCH";

/// The line that starts each PTX module after the first in `kernels.ptx`,
/// followed by the module's architecture: the builder writes one module per
/// architecture the crate names (see [`PtxBuilder::archs`]), the oldest
/// first, and the runtime loads the newest one the device runs
/// (`gpu_runtime::EmbeddedModule` splits them at this line; `tests/toolchain/ptx.rs`
/// checks the runtime's copy of it).
pub const ARCH_VARIANT_MARKER: &str = "// gpu-builder arch-variant: ";

/// The default architecture: `sm_70` PTX runs on Volta and every later GPU
/// (the driver compiles it for the device at load time).
pub const DEFAULT_ARCH: &str = "sm_70";

const TARGET: &str = "nvptx64-nvidia-cuda";

/// Builds one kernel crate to PTX.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    archs: Vec<String>,
    out_dir: Option<PathBuf>,
    fma_contraction: bool,
    debug: DebugInfo,
}

/// What [`PtxBuilder::build`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxOutput {
    /// The PTX file and the kernel entry points in it.
    Built {
        /// Where the PTX was written.
        ptx: PathBuf,
        /// The entry points kept.
        kernels: Vec<String>,
    },
    /// The build script runs for the device target itself: nothing to do.
    SkippedOnDevice,
    /// No PTX was built; `ptx` holds why (see [`not_built`]), which the
    /// host compile of the crate reports through `embed_kernels!()`, and
    /// the runtime names when asked to load the module.
    NotBuilt {
        /// Where the stand-in was written.
        ptx: PathBuf,
        /// Why, and who reports it.
        why: NotBuilt,
    },
}

impl PtxBuilder {
    /// The crate whose `build.rs` is running (`CARGO_MANIFEST_DIR`).
    pub fn this_crate() -> PtxBuilder {
        PtxBuilder::new(
            env::var_os("CARGO_MANIFEST_DIR")
                .map(PathBuf::from)
                .unwrap_or_default(),
        )
    }

    /// The crate in `crate_dir` (the directory holding its `Cargo.toml`).
    pub fn new(crate_dir: impl Into<PathBuf>) -> PtxBuilder {
        let archs = env::var(ARCH_ENV)
            .ok()
            .filter(|a| !a.is_empty())
            .map(|a| a.split(',').map(|a| a.trim().to_string()).collect())
            .unwrap_or_else(|| vec![DEFAULT_ARCH.to_string()]);
        PtxBuilder {
            crate_dir: crate_dir.into(),
            archs,
            out_dir: None,
            fma_contraction: true,
            debug: DebugInfo::None,
        }
    }

    /// Sets the debug information the PTX carries (see [`DebugInfo`]). The
    /// `GPU_PTX_DEBUG` environment variable, when set, takes precedence.
    pub fn debug_info(mut self, debug: DebugInfo) -> PtxBuilder {
        self.debug = debug;
        self
    }

    /// Sets the architecture (`sm_70`, `sm_80`, `sm_90`, …): one PTX
    /// module, as [`archs`](Self::archs) with one. The `GPU_PTX_ARCH`
    /// environment variable, when set, takes precedence.
    pub fn arch(self, arch: impl Into<String>) -> PtxBuilder {
        self.archs([arch.into()])
    }

    /// Sets the architectures to build PTX for (`["sm_70", "sm_80",
    /// "sm_90a"]`): one PTX module each, all embedded by
    /// `embed_kernels!()`; the runtime loads, on each device, the newest
    /// module the device runs (an `a` one, such as `sm_90a`, only on a
    /// device of exactly that compute capability). Each module is built with
    /// `-C target-cpu=<arch>`, so device code can test
    /// `cfg(target_feature = "sm_80")`, and a `#[kernel(arch = "sm_80")]`
    /// is only in the modules of `sm_80` and later. A device older than
    /// every module, or than a kernel's `arch`, gets an error naming what
    /// the kernel needs at launch. The `GPU_PTX_ARCH` environment variable
    /// (a comma-separated list), when set, takes precedence.
    pub fn archs<A: Into<String>>(mut self, archs: impl IntoIterator<Item = A>) -> PtxBuilder {
        if env::var(ARCH_ENV).map(|a| a.is_empty()).unwrap_or(true) {
            self.archs = archs.into_iter().map(Into::into).collect();
        }
        self
    }

    /// Writes the PTX into `dir` instead of `$OUT_DIR` (with the build's
    /// intermediate files, in `dir/ptx-work`): a directory of this crate's
    /// own, as `$OUT_DIR` is.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> PtxBuilder {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether `a * b + c` may be fused into one `fma` instruction (on by
    /// default, as nvcc's `-fmad=true`).
    ///
    /// A fused multiply-add rounds once, where a multiply then an add round
    /// twice: results are usually more accurate, but not bitwise equal to the
    /// unfused formula (nor to the CPU simulator, which does not fuse, nor to
    /// a CPU reference written `a * b + c`). Compare such results with a
    /// tolerance, or write `a.mul_add(b, c)` on both sides where the exact
    /// bits matter. `false` keeps each multiply and add separately rounded, as
    /// written. Explicit `mul_add` calls fuse either way.
    pub fn fma_contraction(mut self, on: bool) -> PtxBuilder {
        self.fma_contraction = on;
        self
    }

    /// Builds the PTX and tells cargo when to rerun.
    ///
    /// In a build script (no [`out_dir`](Self::out_dir) set), a failed
    /// device build is handed to the host compile of the crate rather than
    /// returned: the PTX file says why it was not built
    /// ([`PtxOutput::NotBuilt`]), and `gpu_device::embed_kernels!()`
    /// reports it there. An error in the crate's own code is then reported
    /// by the host compile of the same code, with its spans, as any Rust
    /// error (editors show it); what only the device build sees becomes one
    /// message naming the fix ([`diagnostics`]). `Err` remains for what the
    /// build script itself must report (files it could not write). Under
    /// docs.rs (`DOCS_RS`, or `--cfg docsrs` in the rustc flags) nothing is
    /// built: the crate documents with a module that only refuses to load.
    pub fn build(self) -> Result<PtxOutput, BuildError> {
        if env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("nvptx64") {
            return Ok(PtxOutput::SkippedOnDevice);
        }
        println!("cargo:rerun-if-env-changed={ARCH_ENV}");
        println!("cargo:rerun-if-env-changed={DEBUG_ENV}");
        println!("cargo:rerun-if-env-changed=DOCS_RS");
        let (out_dir, handed_over) = match &self.out_dir {
            Some(d) => (d.clone(), false),
            None => (
                PathBuf::from(env::var_os("OUT_DIR").ok_or(BuildError::NotInBuildScript)?),
                true,
            ),
        };
        if handed_over && documentation_build() {
            return write_not_built(
                &out_dir,
                NotBuilt::Documentation,
                "built for documentation only (docs.rs): no PTX",
            );
        }
        let crate_dir = self.crate_dir.clone();
        match self.build_into(&out_dir) {
            Err(error) if handed_over => hand_over(error, &crate_dir, &out_dir),
            result => result,
        }
    }

    fn build_into(self, out_dir: &Path) -> Result<PtxOutput, BuildError> {
        let out_dir = out_dir.to_path_buf();
        let archs = sorted_archs(&self.archs)?;
        let debug = match env::var(DEBUG_ENV).ok().filter(|v| !v.is_empty()) {
            Some(name) => DebugInfo::from_name(&name).ok_or(BuildError::BadDebugInfo(name))?,
            None => self.debug,
        };
        let toolchain = Toolchain::find()?;
        let manifest = self.crate_dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::NoManifest(manifest));
        }
        // This crate's own intermediate files: the build scripts of several
        // kernel crates share the nested target directory (and its builds of
        // `core` and the dependencies) and may run at the same time.
        let work = out_dir.join("ptx-work");
        let _ = fs::remove_dir_all(&work);
        let mut combined = String::new();
        let mut all_kernels: Vec<String> = Vec::new();
        for (i, arch) in archs.iter().enumerate() {
            let work = work.join(arch);
            fs::create_dir_all(&work).map_err(|e| BuildError::io(&work, e))?;
            let (ptx, kernels) =
                self.build_arch(&toolchain, &manifest, &out_dir, &work, arch, debug)?;
            if i > 0 {
                combined.push('\n');
                combined.push_str(ARCH_VARIANT_MARKER);
                combined.push_str(arch);
                combined.push('\n');
            }
            combined.push_str(&ptx);
            for kernel in kernels {
                if !all_kernels.contains(&kernel) {
                    all_kernels.push(kernel);
                }
            }
        }
        fs::create_dir_all(&out_dir).map_err(|e| BuildError::io(&out_dir, e))?;
        let ptx = out_dir.join("kernels.ptx");
        fs::write(&ptx, combined).map_err(|e| BuildError::io(&ptx, e))?;
        if all_kernels.is_empty() {
            println!(
                "cargo:warning=no #[kernel] functions found in {}",
                self.crate_dir.display()
            );
        }
        Ok(PtxOutput::Built {
            ptx,
            kernels: all_kernels,
        })
    }

    /// Builds the PTX of one architecture (steps 1 to 5), with its
    /// intermediate files in `work`.
    fn build_arch(
        &self,
        toolchain: &Toolchain,
        manifest: &Path,
        out_dir: &Path,
        work: &Path,
        arch: &str,
        debug: DebugInfo,
    ) -> Result<(String, Vec<String>), BuildError> {
        let target_dir = nested_target_dir(out_dir, debug, arch);
        let artifacts = toolchain.cargo_build_bitcode(
            manifest,
            &target_dir,
            &work.join("objects"),
            arch,
            debug.rustc_flag(),
        )?;
        for source in &artifacts.local_sources {
            println!("cargo:rerun-if-changed={}", source.display());
        }
        println!("cargo:rerun-if-changed={}", manifest.display());

        let crate_bc = work.join("crate.bc");
        toolchain.link(&artifacts.crate_objects, &crate_bc)?;
        let (kernels, descriptions) = toolchain.kernel_entry_points(&crate_bc)?;
        let linked = work.join("linked.bc");
        let mut all = vec![crate_bc];
        all.extend(artifacts.dependency_objects.iter().cloned());
        toolchain.link(&all, &linked)?;
        let rewritten = work.join("rewritten.bc");
        let (changed, warnings) = toolchain.rewrite_ir(&linked, &rewritten)?;
        for warning in warnings {
            println!("cargo:warning={warning}");
        }
        let linked = if changed { rewritten } else { linked };
        let optimized = work.join("optimized.bc");
        let kept: Vec<String> = kernels.iter().chain(&descriptions).cloned().collect();
        toolchain.internalize_and_optimize(&linked, &kept, &optimized)?;
        let ptx = work.join("kernels.ptx");
        toolchain.codegen(&optimized, arch, self.fma_contraction, &ptx)?;
        let text = fs::read_to_string(&ptx).map_err(|e| BuildError::io(&ptx, e))?;
        let text = if debug != DebugInfo::None {
            debug_info::finish(&text, debug).map_err(|e| BuildError::ToolFailed {
                tool: "gpu-builder (debug information)".into(),
                status: "unreadable PTX".into(),
                stderr: e,
            })?
        } else {
            text
        };
        Ok((text, kernels))
    }
}

/// `archs`, checked, without repeats, from the oldest to the newest (an
/// `a` architecture after its plain one).
fn sorted_archs(archs: &[String]) -> Result<Vec<String>, BuildError> {
    let mut sorted: Vec<String> = Vec::new();
    for arch in archs {
        check_arch(arch)?;
        if !sorted.contains(arch) {
            sorted.push(arch.clone());
        }
    }
    if sorted.is_empty() {
        return Err(BuildError::BadArch(String::new()));
    }
    sorted.sort_by_key(|a| arch_order(a));
    Ok(sorted)
}

/// `sm_90a` as `(90, true)`: the order of architectures.
fn arch_order(arch: &str) -> (u32, bool) {
    let digits = arch.trim_start_matches("sm_");
    let accelerated = digits.ends_with('a');
    let number = digits.trim_end_matches('a').parse().unwrap_or(0);
    (number, accelerated)
}

/// Whether this is a documentation build: docs.rs sets `DOCS_RS`, and
/// `--cfg docsrs` in the rustc flags reaches build scripts as
/// `CARGO_CFG_DOCSRS` (the kernel crates' `[package.metadata.docs.rs]` asks
/// for it).
fn documentation_build() -> bool {
    env::var_os("DOCS_RS").is_some() || env::var_os("CARGO_CFG_DOCSRS").is_some()
}

/// Writes `kernels.ptx` in place of a module not built, saying `why`.
fn write_not_built(out_dir: &Path, why: NotBuilt, message: &str) -> Result<PtxOutput, BuildError> {
    fs::create_dir_all(out_dir).map_err(|e| BuildError::io(out_dir, e))?;
    let ptx = out_dir.join("kernels.ptx");
    fs::write(&ptx, not_built::not_built_ptx(why, message)).map_err(|e| BuildError::io(&ptx, e))?;
    Ok(PtxOutput::NotBuilt { ptx, why })
}

/// Hands a failed device build to the host compile (see
/// [`PtxBuilder::build`]), and tells cargo to rerun when a source that may
/// fix it changes: the failed build could not list its sources.
fn hand_over(error: BuildError, crate_dir: &Path, out_dir: &Path) -> Result<PtxOutput, BuildError> {
    let manifest = crate_dir.join("Cargo.toml");
    let graph = Toolchain::find()
        .ok()
        .and_then(|t| t.device_dependencies(&manifest));
    let path = |id: &str| {
        graph
            .as_ref()
            .and_then(|g| diagnostics::dependency_path(g, id))
    };
    let Some(handover) = diagnostics::handover(&error, &path) else {
        return Err(error);
    };
    let local = graph
        .as_ref()
        .map(diagnostics::local_package_dirs)
        .unwrap_or_default();
    for source in diagnostics::sources_to_watch(crate_dir, &local) {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    write_not_built(out_dir, handover.why, &handover.message)
}

fn check_arch(arch: &str) -> Result<(), BuildError> {
    let ok = arch
        .strip_prefix("sm_")
        .map(|n| n.len() >= 2 && n.chars().all(|c| c.is_ascii_digit() || c == 'a'))
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(BuildError::BadArch(arch.to_string()))
    }
}

/// `<target>/<profile>/ptx-build`, beside the host build: a separate target
/// directory, so the nested cargo does not wait for the outer one's lock.
/// Every kernel crate of the outer build shares it, so `core` and the common
/// dependencies are built for the device once (the nested cargos take turns
/// through its lock). Builds with debug information have their own
/// (`ptx-build-line-tables`, `ptx-build-full`): other flags for `core`,
/// which would otherwise be rebuilt each time the other kind builds.
fn nested_target_dir(out_dir: &Path, debug: DebugInfo, arch: &str) -> PathBuf {
    let mut name = match debug {
        DebugInfo::None => "ptx-build".to_string(),
        other => format!("ptx-build-{}", other.name()),
    };
    // Another `-C target-cpu` is another build of `core` too.
    if arch != DEFAULT_ARCH {
        name.push('-');
        name.push_str(arch);
    }
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<pkg>-<hash>/out.
    out_dir
        .ancestors()
        .nth(3)
        .map(|profile| profile.join(&name))
        .unwrap_or_else(|| out_dir.join(&name))
}

/// The symbol prefix of the kernels' interface descriptions.
pub const INTERFACE_PREFIX: &str = "__gpu_abi$";

/// The interface descriptions a module's textual IR defines: the globals
/// `@__gpu_abi$<entry>` that `#[kernel]` makes per instance on the device
/// (`gpu_device::__private::interface`). Nothing on the device reads them;
/// the build keeps them, as it keeps the entry points, so that the runtime
/// can compare each with the description the host compiled before the
/// instance's first launch.
pub fn interface_globals(ir: &str) -> Vec<String> {
    let mut names: Vec<String> = ir
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('@')?;
            let rest = rest.strip_prefix('"').unwrap_or(rest);
            let name = &rest[..rest.find([' ', '"', '='])?];
            name.starts_with(INTERFACE_PREFIX).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Runs a command, mapping failure to an error naming the tool and its output.
fn run(tool: &str, command: &mut Command) -> Result<std::process::Output, BuildError> {
    let output = command.output().map_err(|e| BuildError::Spawn {
        tool: tool.to_string(),
        error: e.to_string(),
    })?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(BuildError::ToolFailed {
            tool: tool.to_string(),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{interface_globals, nested_target_dir, sorted_archs, DebugInfo};
    use std::path::Path;

    #[test]
    fn architectures_are_built_oldest_first_each_in_its_own_target_directory() {
        let archs =
            |list: &[&str]| sorted_archs(&list.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        assert_eq!(
            archs(&["sm_90a", "sm_70", "sm_90", "sm_100", "sm_80", "sm_70"]).unwrap(),
            ["sm_70", "sm_80", "sm_90", "sm_90a", "sm_100"]
        );
        assert!(archs(&["sm_80", "compute_80"]).is_err());
        assert!(archs(&[]).is_err());
        let out = Path::new("/t/debug/build/k-1/out");
        assert_eq!(
            nested_target_dir(out, DebugInfo::None, "sm_70"),
            Path::new("/t/debug/ptx-build")
        );
        assert_eq!(
            nested_target_dir(out, DebugInfo::LineTables, "sm_90a"),
            Path::new("/t/debug/ptx-build-line-tables-sm_90a")
        );
    }

    #[test]
    fn interface_descriptions_are_found_in_the_ir() {
        let ir = "@__gpu_abi$k = dso_local constant [2 x i8] c\"hi\", align 1\n\
                  @\"__gpu_abi$k_f32\" = constant [1 x i8] c\"x\"\n\
                  @__gpu_inputs.k.2.0 = constant i8 0\n\
                  define ptx_kernel void @k(ptr %0) {\n}\n";
        assert_eq!(
            interface_globals(ir),
            vec!["__gpu_abi$k", "__gpu_abi$k_f32"]
        );
    }
}
