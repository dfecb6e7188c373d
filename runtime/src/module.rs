//! PTX embedded in a kernel crate, loaded into each device on first use, and
//! the module's globals: the device's assertion record, given at load, and
//! the `constant!` values set so far (`crate::constant` sets them).

use crate::architecture::Arch;
use crate::backend::{driver, status, DevicePtr, DriverError, ModuleHandle, MAX_DEVICES};
use crate::crate_identity::CrateIdentity;
use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::memory::tracking::{Access, AccessTracker, Tracked};
use crate::stream::Stream;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex, MutexGuard};

/// A kernel crate's PTX module, embedded in the binary by
/// `gpu_device::embed_kernels!()`. Loaded once per device, on first launch.
///
/// A module made by `embed_kernels!()` ([`EmbeddedModule::of_crate`])
/// serves the launchers of the crate that embedded it alone: a `#[kernel]`
/// of another crate naming it (through a `pub use` of the static, or
/// `module = "..."`) does not compile.
pub struct EmbeddedModule {
    crate_name: &'static str,
    /// The crate whose launchers may load the module; `None`: any crate's.
    owner: Option<CrateIdentity>,
    ptx: &'static str,
    /// `ptx` split per architecture, once: the split scans the whole text
    /// (megabytes for a large kernel crate), and every first launch of a
    /// kernel on a device asks for it several times.
    variants: OnceLock<Vec<(&'static str, &'static str)>>,
    loaded: [OnceLock<Result<ModuleHandle>>; MAX_DEVICES],
    /// The module's `gpu_device::constant!` values set so far, per device.
    constants: ModuleConstants,
}

impl EmbeddedModule {
    /// Wraps the PTX text of crate `owner` (named `crate_name` in errors),
    /// for its own launchers alone: `KernelFunction::new` refuses, while
    /// the launcher's static is evaluated (a compile error), a launcher of
    /// any other crate that names the module. Used by `embed_kernels!()`,
    /// with `owner` the [`crate_identity!()`](crate::crate_identity) of the
    /// crate it expands in.
    ///
    /// # Safety
    /// `ptx` is the PTX that `gpu-builder` built from the `#[kernel]`
    /// functions of crate `owner`, whose typed launchers will load it: each
    /// entry point they name must have exactly the parameters their
    /// signatures pass, and the device code must uphold the guarantees of
    /// `gpu-device` (no data race, no out-of-bounds access from safe code).
    /// Arbitrary PTX under a typed, safe launcher could do anything.
    pub const unsafe fn of_crate(
        owner: CrateIdentity,
        crate_name: &'static str,
        ptx: &'static str,
    ) -> Self {
        EmbeddedModule {
            crate_name,
            owner: Some(owner),
            ptx,
            variants: OnceLock::new(),
            loaded: [const { OnceLock::new() }; MAX_DEVICES],
            constants: ModuleConstants::new(),
        }
    }

    /// Wraps PTX text (named `crate_name` in errors) for the launchers of
    /// any crate that can name the module: prefer
    /// [`of_crate`](Self::of_crate), which keeps other crates' launchers
    /// out. An empty `ptx`, for kernels run only on the simulator (which
    /// runs their host entries), meets the promise below: on a GPU, every
    /// launch fails with an error naming the missing entry point.
    ///
    /// # Safety
    /// For every `#[kernel]` launcher, of any crate, that will load the
    /// module (every one that can name the static holding it, a `pub`
    /// static's re-exports included): each entry point of `ptx` it names
    /// must have exactly the parameters its signature passes, and the
    /// device code must uphold the guarantees of `gpu-device` (no data
    /// race, no out-of-bounds access from safe code).
    pub const unsafe fn new(crate_name: &'static str, ptx: &'static str) -> Self {
        EmbeddedModule {
            crate_name,
            owner: None,
            ptx,
            variants: OnceLock::new(),
            loaded: [const { OnceLock::new() }; MAX_DEVICES],
            constants: ModuleConstants::new(),
        }
    }

    /// The crate whose launchers alone may load the module (`None` for a
    /// module made with [`new`](Self::new), which any crate's may).
    pub const fn owner(&self) -> Option<&CrateIdentity> {
        self.owner.as_ref()
    }

    /// The PTX text of the module's oldest architecture (the whole text
    /// where the crate was built for one architecture; see
    /// [`ptx_variants`](Self::ptx_variants)).
    pub fn ptx(&self) -> &'static str {
        self.variants()[0].1
    }

    /// The module's PTX, one text per architecture the crate was built for
    /// (`gpu_builder::PtxBuilder::archs`), the oldest first, each with its
    /// architecture (`sm_80`, from its `.target` line; empty where it has
    /// none). A device loads the newest one it runs.
    pub fn ptx_variants(&self) -> Vec<(&'static str, &'static str)> {
        self.variants().to_vec()
    }

    /// [`ptx_variants`](Self::ptx_variants), split once.
    fn variants(&self) -> &[(&'static str, &'static str)] {
        self.variants.get_or_init(|| ptx_variants(self.ptx))
    }

    /// The PTX text a device of compute capability `cc` loads: the newest
    /// of [`ptx_variants`](Self::ptx_variants) it runs (text without a
    /// `.target` runs anywhere); `None` when the device is older than all.
    pub(crate) fn ptx_for(&self, cc: (u32, u32)) -> Option<&'static str> {
        self.variants()
            .iter()
            .rev()
            .find(|(arch, _)| Arch::parse(arch).is_none_or(|a| a.runs_on(cc)))
            .map(|&(_, ptx)| ptx)
    }

    /// Why the crate's kernels were not built to PTX, where its build
    /// script wrote a stand-in instead (a documentation build, or a failed
    /// device build): loading the module then fails with
    /// [`Error::KernelsNotBuilt`] naming this. `None` for a built module.
    pub fn not_built(&self) -> Option<String> {
        not_built_reason(self.ptx)
    }

    /// The name of the crate the kernels come from.
    pub fn crate_name(&self) -> &'static str {
        self.crate_name
    }

    /// The module's constants (`gpu_device::constant!`) set so far.
    pub(crate) fn constants(&self) -> &ModuleConstants {
        &self.constants
    }

    /// The names of the kernel entry points in the PTX (of every
    /// architecture, each once).
    pub fn entry_points(&self) -> Vec<&'static str> {
        let mut entries: Vec<&'static str> = Vec::new();
        let names = self
            .ptx
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
            .map(|rest| rest.split('(').next().unwrap_or(rest).trim());
        for name in names {
            if !entries.contains(&name) {
                entries.push(name);
            }
        }
        entries
    }

    /// The byte sizes of entry point `entry`'s parameters, as its PTX
    /// declares them; `None` when the PTX has no such entry point. An error
    /// names a declaration this parser does not read.
    /// The PTX is that which a device of compute capability `cc` loads.
    pub(crate) fn entry_param_sizes(
        &self,
        cc: (u32, u32),
        entry: &str,
    ) -> Option<Result<Vec<usize>, String>> {
        entry_param_sizes(self.ptx_for(cc)?, entry)
    }

    /// The text of the interface description the device build kept for
    /// the instance whose general entry point is `entry` (the global
    /// `__gpu_abi$<entry>`, see `gpu_device::__private::interface`); `None`
    /// when the PTX has none. An error names a global this parser does not
    /// read.
    pub(crate) fn interface_description(
        &self,
        cc: (u32, u32),
        entry: &str,
    ) -> Option<Result<String, String>> {
        interface_description(self.ptx_for(cc)?, entry)
    }

    /// The module loaded into `device`.
    pub(crate) fn load(&self, device: &DeviceState) -> Result<ModuleHandle> {
        self.loaded[device.ordinal]
            .get_or_init(|| {
                if let Some(reason) = not_built_reason(self.ptx) {
                    return Err(Error::KernelsNotBuilt {
                        crate_name: self.crate_name,
                        reason,
                    });
                }
                let cc = device.limits.compute_capability;
                let ptx = self.ptx_for(cc).ok_or_else(|| Error::ModuleLoad {
                    crate_name: self.crate_name,
                    driver: DriverError {
                        call: "cuModuleLoadDataEx",
                        code: status::INVALID_PTX,
                        name: "CUDA_ERROR_INVALID_PTX".into(),
                        description: format!(
                            "the crate's PTX is built for {:?}, all newer than the device's compute capability {}.{}",
                            self.ptx_variants().iter().map(|(a, _)| *a).collect::<Vec<_>>(),
                            cc.0,
                            cc.1
                        ),
                    },
                    log: String::new(),
                })?;
                let text = CString::new(ptx).map_err(|_| Error::ModuleLoad {
                    crate_name: self.crate_name,
                    driver: DriverError {
                        call: "cuModuleLoadDataEx",
                        code: status::INVALID_VALUE,
                        name: "CUDA_ERROR_INVALID_VALUE".into(),
                        description: "the PTX text contains a NUL byte".into(),
                    },
                    log: String::new(),
                })?;
                let module =
                    driver()
                        .module_load(device.ordinal, &text)
                        .map_err(|(driver, log)| {
                            if driver.is_kernel_fault() {
                                // Left by an earlier kernel: the device is lost.
                                return device.error(driver);
                            }
                            Error::ModuleLoad {
                                crate_name: self.crate_name,
                                driver,
                                log,
                            }
                        })?;
                give_assertion_record(module, device)?;
                Ok(module)
            })
            .clone()
    }
}

/// The line starting each PTX module after the first, followed by its
/// architecture: `gpu_builder::ARCH_VARIANT_MARKER` (`tests/toolchain/ptx.rs` checks
/// this copy against it).
pub(crate) const ARCH_VARIANT_MARKER: &str = "// gpu-builder arch-variant: ";

/// `ptx` split at its [`ARCH_VARIANT_MARKER`] lines, each text with the
/// architecture of its `.target` line (empty where it has none).
fn ptx_variants(ptx: &'static str) -> Vec<(&'static str, &'static str)> {
    let marker = format!("\n{ARCH_VARIANT_MARKER}");
    let mut variants = Vec::new();
    let mut rest = ptx;
    loop {
        let (text, next) = match rest.find(&marker) {
            Some(at) => {
                let after = &rest[at + marker.len()..];
                let body = after.find('\n').map_or("", |nl| &after[nl + 1..]);
                (&rest[..at], Some(body))
            }
            None => (rest, None),
        };
        variants.push((target_of(text), text));
        match next {
            Some(body) => rest = body,
            None => return variants,
        }
    }
}

/// The architecture of a PTX text's `.target` line (`sm_80` of `.target
/// sm_80, debug`); empty where it has none.
fn target_of(ptx: &'static str) -> &'static str {
    ptx.lines()
        .find_map(|l| l.trim_start().strip_prefix(".target "))
        .map(|t| t.split(',').next().unwrap_or(t).trim())
        .unwrap_or("")
}

/// The first line of the PTX that `gpu_builder` writes in place of a module
/// it did not build (`gpu_builder::not_built`; `tests/toolchain/ptx.rs` checks the two
/// agree), followed by `(<why>)` and the message as comment lines.
pub(crate) const NOT_BUILT_MARKER: &str = "// gpu-builder: not built";

/// Why `ptx` is a stand-in for a module not built, or `None` for PTX.
pub(crate) fn not_built_reason(ptx: &str) -> Option<String> {
    let mut lines = ptx.lines();
    lines.next()?.strip_prefix(NOT_BUILT_MARKER)?;
    let message: Vec<&str> = lines
        .map(|l| l.strip_prefix("// ").unwrap_or(l.trim_start_matches("//")))
        .collect();
    Some(message.join("\n"))
}

/// Writes the address of the device's assertion record into the module's
/// global for it (`gpu_device::assert`), before any of its kernels runs: a
/// failed `gpu_assert!` then leaves its report there. A module without the
/// global (PTX not built by `gpu-builder`) needs none.
fn give_assertion_record(module: ModuleHandle, device: &DeviceState) -> Result<()> {
    let Some(record) = crate::assertion::device_address(device.ordinal) else {
        return Ok(());
    };
    let symbol = CString::new(gpu_device::assert::RECORD_SYMBOL).expect("no NUL in the symbol");
    let Some(global) = driver()
        .module_global(module, &symbol, std::mem::size_of::<u64>())
        .map_err(|e| device.error(e))?
    else {
        return Ok(());
    };
    // On a stream of its own, which waits for no other work (a busy stream
    // of the device does not hold up the module's first launch).
    let stream = driver()
        .stream_create(device.ordinal, true, 0)
        .map_err(|e| device.error(e))?;
    // SAFETY: `global` is the module's 8-byte global; the source is a local
    // `u64`, pageable, so the copy reads it before returning; the
    // synchronize then completes it before any launch.
    let copied =
        unsafe { driver().copy_to_device_async(global, (&raw const record).cast(), 8, stream) }
            .and_then(|()| driver().stream_synchronize(stream));
    let destroyed = driver().stream_destroy(stream);
    copied.and(destroyed).map_err(|e| device.error(e))
}

/// See [`EmbeddedModule::interface_description`]: the global's bytes, as
/// `llc` writes an initialised byte array (`.b8 name[n] = {1, 2, ...};`).
fn interface_description(ptx: &str, entry: &str) -> Option<Result<String, String>> {
    let name = format!(" __gpu_abi${entry}[");
    let start = ptx.find(&name)? + name.len();
    let unreadable = || format!("unreadable interface description of `{entry}` in the PTX");
    let rest = &ptx[start..];
    let open = rest.find("= {").map(|at| at + 3);
    let close = rest.find('}');
    let (Some(open), Some(close)) = (open, close) else {
        return Some(Err(unreadable()));
    };
    if open > close {
        return Some(Err(unreadable()));
    }
    let bytes: Result<Vec<u8>, _> = rest[open..close]
        .split(',')
        .map(|b| b.trim().parse::<u8>())
        .collect();
    Some(
        bytes
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(unreadable),
    )
}

/// See [`EmbeddedModule::entry_param_sizes`].
fn entry_param_sizes(ptx: &str, entry: &str) -> Option<Result<Vec<usize>, String>> {
    let start = ptx.find(&format!(".entry {entry}("))? + ".entry (".len() + entry.len();
    let Some(end) = ptx[start..].find(')') else {
        return Some(Err(format!(
            "the parameter list of `{entry}` does not close"
        )));
    };
    let list = &ptx[start..start + end];
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(param_size)
            .collect(),
    )
}

/// The byte size of one `.param` declaration: `.param .u32 k_param_0`,
/// `.param .u64 .ptr .align 1 k_param_1`, `.param .align 4 .b8 k_param_2[12]`.
fn param_size(declaration: &str) -> Result<usize, String> {
    let unreadable = || format!("unreadable parameter declaration `{declaration}`");
    let mut words = declaration.split_whitespace();
    if words.next() != Some(".param") {
        return Err(unreadable());
    }
    let words: Vec<&str> = words.collect();
    let name = words.last().ok_or_else(unreadable)?;
    let bits = words
        .iter()
        .find_map(|w| {
            let w = w.strip_prefix('.')?;
            let kind = w.chars().next()?;
            let bits: usize = w.get(1..)?.parse().ok()?;
            (matches!(kind, 'u' | 's' | 'b' | 'f') && bits.is_multiple_of(8)).then_some(bits)
        })
        .ok_or_else(unreadable)?;
    let count = match name.split_once('[') {
        Some((_, n)) => n
            .strip_suffix(']')
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(unreadable)?,
        None => 1,
    };
    Ok(bits / 8 * count)
}

/// A constant set on a device: its global, and its tracked accesses.
pub(crate) struct ConstantState {
    pub(crate) symbol: &'static str,
    pub(crate) address: DevicePtr,
    pub(crate) tracker: AccessTracker,
}

impl Tracked for ConstantState {
    fn tracker(&self) -> &AccessTracker {
        &self.tracker
    }
}

/// A module's constants, per device.
pub(crate) struct ModuleConstants {
    /// Whether a constant of the module was set on the device: a launch
    /// reads this alone when none was.
    pub(crate) any_set: [AtomicBool; MAX_DEVICES],
    states: [Mutex<Vec<Arc<ConstantState>>>; MAX_DEVICES],
}

impl ModuleConstants {
    pub(crate) const fn new() -> Self {
        ModuleConstants {
            any_set: [const { AtomicBool::new(false) }; MAX_DEVICES],
            states: [const { Mutex::new(Vec::new()) }; MAX_DEVICES],
        }
    }

    pub(crate) fn lock(&self, device: usize) -> MutexGuard<'_, Vec<Arc<ConstantState>>> {
        self.states[device]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Orders a launch of one of the module's kernels, about to be queued on
    /// `stream` of `device`, after the sets of the module's constants, and
    /// records it as reading them; the guard keeps sets out until the
    /// launch is queued. Nothing (one load) when no constant was set.
    #[inline]
    pub(crate) fn before_launch(
        &self,
        device: usize,
        stream: &Stream,
    ) -> Result<Option<MutexGuard<'_, Vec<Arc<ConstantState>>>>> {
        if !self.any_set[device].load(Ordering::Acquire) {
            return Ok(None);
        }
        let states = self.lock(device);
        for state in states.iter() {
            state.tracker.access(stream, Access::Read)?;
        }
        Ok(Some(states))
    }
}

#[cfg(test)]
mod tests {
    use super::{entry_param_sizes, interface_description, ptx_variants, EmbeddedModule};

    const PTX: &str = "
.visible .entry k(
	.param .align 16 .b8 k_param_0[16],
	.param .u64 .ptr .align 1 k_param_1,
	.param .u8 k_param_2,
	.param .f32 k_param_3
)
{
}
.visible .entry k__1d(
	.param .u32 k__1d_param_0
)
.visible .entry none(
)
";

    #[test]
    fn a_module_of_several_architectures_is_split_and_chosen_from() {
        let ptx = ".version 7.0\n.target sm_70\n.visible .entry a(\n)\n\
                   \n// gpu-builder arch-variant: sm_80\n.version 7.0\n.target sm_80\n.visible .entry b(\n)\n\
                   \n// gpu-builder arch-variant: sm_90a\n.version 7.8\n.target sm_90a, debug\n";
        let variants = ptx_variants(ptx);
        assert_eq!(
            variants.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
            ["sm_70", "sm_80", "sm_90a"]
        );
        assert!(variants[0].1.ends_with(".entry a(\n)\n"));
        assert!(variants[1].1.starts_with(".version 7.0\n.target sm_80\n"));
        assert!(!variants[1].1.contains("sm_90a"));
        // SAFETY: no launcher loads this module: only its PTX texts are read.
        let module = unsafe { EmbeddedModule::new("k", ptx) };
        assert_eq!(module.ptx(), variants[0].1);
        assert_eq!(module.ptx_for((9, 0)), Some(variants[2].1));
        assert_eq!(module.ptx_for((10, 0)), Some(variants[1].1));
        assert_eq!(module.ptx_for((8, 6)), Some(variants[1].1));
        assert_eq!(module.ptx_for((7, 5)), Some(variants[0].1));
        assert_eq!(module.ptx_for((6, 1)), None);
        assert_eq!(ptx_variants(""), [("", "")]);
    }

    #[test]
    fn interface_descriptions_are_read_from_their_globals() {
        let ptx = ".visible .global .align 1 .b8 __gpu_abi$k_f32[3] = {101, 110, 10};\n\
                   .visible .global .align 1 .b8 __gpu_abi$k[2] = {104, 105};\n\
                   .visible .global .align 1 .b8 __gpu_abi$bad[2] = {104, 999};\n";
        assert_eq!(interface_description(ptx, "k"), Some(Ok("hi".into())));
        assert_eq!(interface_description(ptx, "k_f32"), Some(Ok("en\n".into())));
        assert_eq!(interface_description(ptx, "k_"), None);
        assert!(interface_description(ptx, "bad").unwrap().is_err());
    }

    #[test]
    fn parameter_sizes_are_read_from_the_entry_point() {
        assert_eq!(entry_param_sizes(PTX, "k"), Some(Ok(vec![16, 8, 1, 4])));
        assert_eq!(entry_param_sizes(PTX, "k__1d"), Some(Ok(vec![4])));
        assert_eq!(entry_param_sizes(PTX, "none"), Some(Ok(vec![])));
        assert_eq!(entry_param_sizes(PTX, "k_"), None);
        assert_eq!(entry_param_sizes(PTX, "missing"), None);
        let odd = ".entry odd(\n\t.param .pred odd_param_0\n)";
        assert!(entry_param_sizes(odd, "odd")
            .unwrap()
            .unwrap_err()
            .contains("unreadable parameter declaration"));
    }
}
