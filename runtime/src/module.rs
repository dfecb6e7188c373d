//! PTX embedded in a kernel crate, loaded into each device on first use.

use crate::backend::{driver, status, DriverError, ModuleHandle, MAX_DEVICES};
use crate::device::DeviceState;
use crate::error::{Error, Result};
use std::ffi::CString;
use std::sync::OnceLock;

/// A kernel crate's PTX module, embedded in the binary by
/// `gpu_device::embed_kernels!()`. Loaded once per device, on first launch.
pub struct EmbeddedModule {
    crate_name: &'static str,
    ptx: &'static str,
    loaded: [OnceLock<Result<ModuleHandle>>; MAX_DEVICES],
}

impl EmbeddedModule {
    /// Wraps a crate's PTX text. Used by `embed_kernels!()`.
    ///
    /// # Safety
    /// `ptx` is the PTX that `gpu-builder` built from the `#[kernel]`
    /// functions of `crate_name`, whose typed launchers will load it: each
    /// entry point they name must have exactly the parameters their
    /// signatures pass, and the device code must uphold the guarantees of
    /// `gpu-device` (no data race, no out-of-bounds access from safe code).
    /// Arbitrary PTX under a typed, safe launcher could do anything.
    pub const unsafe fn new(crate_name: &'static str, ptx: &'static str) -> Self {
        EmbeddedModule {
            crate_name,
            ptx,
            loaded: [const { OnceLock::new() }; MAX_DEVICES],
        }
    }

    /// The PTX text.
    pub fn ptx(&self) -> &'static str {
        self.ptx
    }

    /// The name of the crate the kernels come from.
    pub fn crate_name(&self) -> &'static str {
        self.crate_name
    }

    /// The names of the kernel entry points in the PTX.
    pub fn entry_points(&self) -> Vec<&'static str> {
        self.ptx
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
            .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
            .collect()
    }

    /// The byte sizes of entry point `entry`'s parameters, as its PTX
    /// declares them; `None` when the PTX has no such entry point. An error
    /// names a declaration this parser does not read.
    pub(crate) fn entry_param_sizes(&self, entry: &str) -> Option<Result<Vec<usize>, String>> {
        entry_param_sizes(self.ptx, entry)
    }

    /// The module loaded into `device` (bound on this thread).
    pub(crate) fn load(&self, device: &DeviceState) -> Result<ModuleHandle> {
        self.loaded[device.ordinal]
            .get_or_init(|| {
                let text = CString::new(self.ptx).map_err(|_| Error::ModuleLoad {
                    crate_name: self.crate_name,
                    driver: DriverError {
                        call: "cuModuleLoadDataEx",
                        code: status::INVALID_VALUE,
                        name: "CUDA_ERROR_INVALID_VALUE".into(),
                        description: "the PTX text contains a NUL byte".into(),
                    },
                    log: String::new(),
                })?;
                driver()
                    .module_load(&text)
                    .map_err(|(driver, log)| Error::ModuleLoad {
                        crate_name: self.crate_name,
                        driver,
                        log,
                    })
            })
            .clone()
    }
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

#[cfg(test)]
mod tests {
    use super::entry_param_sizes;

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
