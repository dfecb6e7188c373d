//! GPU architectures: what a kernel needs (its `#[kernel(arch = "sm_80")]`,
//! and the architectures its crate's PTX was built for, one module each:
//! `gpu_builder::PtxBuilder::archs`) against a device's compute capability.
//! A launch on a device too old for the kernel is refused before anything
//! reaches the driver, with [`Error::ArchitectureTooOld`] naming the kernel,
//! what it needs and the device; the simulated devices' compute capability
//! is `GPU_SIM_COMPUTE_CAPABILITY`, so both backends refuse alike.

use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::module::EmbeddedModule;
use gpu_device::__private::interface::Description;

/// A PTX architecture, `sm_80` or `sm_90a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Arch {
    /// `80` for `sm_80`: the compute capability's major × 10 + minor.
    number: u32,
    /// `sm_90a`: the architecture-specific features of exactly that
    /// compute capability (`wgmma`, `setmaxnreg`), which no later GPU has.
    accelerated: bool,
}

impl Arch {
    /// `sm_XY` or `sm_XYa`; `None` for anything else.
    pub(crate) fn parse(name: &str) -> Option<Arch> {
        let digits = name.strip_prefix("sm_")?;
        let (digits, accelerated) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        let number = digits.parse().ok().filter(|&n| n >= 10)?;
        Some(Arch {
            number,
            accelerated,
        })
    }

    /// Whether a device of compute capability `(major, minor)` runs code
    /// built for this architecture.
    pub(crate) fn runs_on(self, (major, minor): (u32, u32)) -> bool {
        let device = major * 10 + minor;
        if self.accelerated {
            device == self.number
        } else {
            device >= self.number
        }
    }

    /// What the architecture needs of a device, in words.
    fn needs(self) -> String {
        let (major, minor) = (self.number / 10, self.number % 10);
        if self.accelerated {
            format!(
                "sm_{}a (compute capability {major}.{minor} exactly)",
                self.number
            )
        } else {
            format!(
                "sm_{} (compute capability {major}.{minor} or later)",
                self.number
            )
        }
    }
}

/// Refuses kernel `kernel` (instance `interface`, entry point `entry`, of
/// `module`) on `device` when the device is older than the kernel's
/// declared `arch`, or than every PTX module of its crate; or when the
/// module the device loads lacks the entry point (a kernel whose `arch` no
/// module of its crate reaches).
pub(crate) fn check(
    module: &EmbeddedModule,
    kernel: &'static str,
    entry: &str,
    interface: &Description,
    device: &DeviceState,
) -> Result<()> {
    let cc = device.limits.compute_capability;
    let too_old = |needs: String| {
        Err(Error::ArchitectureTooOld {
            kernel,
            needs,
            device: device.ordinal,
            device_name: device.name.clone(),
            compute_capability: cc,
        })
    };
    let declared = interface.arch.and_then(Arch::parse);
    if let Some(arch) = declared.filter(|a| !a.runs_on(cc)) {
        return too_old(format!("{} (its `arch` option)", arch.needs()));
    }
    if module.ptx().is_empty() || module.not_built().is_some() {
        return Ok(());
    }
    let Some(ptx) = module.ptx_for(cc) else {
        let oldest = module
            .ptx_variants()
            .iter()
            .filter_map(|(arch, _)| Arch::parse(arch))
            .min()
            .map(Arch::needs)
            .unwrap_or_else(|| "another architecture".into());
        return too_old(format!(
            "{oldest} (the oldest architecture crate `{}` built PTX for: see gpu_builder::PtxBuilder::archs)",
            module.crate_name()
        ));
    };
    if !ptx.contains(&format!(".entry {entry}(")) {
        if let Some(arch) = interface.arch {
            let built: Vec<&str> = module.ptx_variants().iter().map(|(a, _)| *a).collect();
            return Err(Error::InvalidLaunch {
                kernel,
                reason: format!(
                    "it declares `arch = \"{arch}\"`, and crate `{}` built no PTX for {arch} or a later architecture that this device runs (it built {built:?}): add \"{arch}\" to gpu_builder::PtxBuilder::archs in its build.rs",
                    module.crate_name()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Arch;

    #[test]
    fn architectures_run_on_the_compute_capabilities_they_should() {
        let sm_80 = Arch::parse("sm_80").unwrap();
        let sm_90a = Arch::parse("sm_90a").unwrap();
        assert!(sm_80.runs_on((8, 0)) && sm_80.runs_on((8, 6)) && sm_80.runs_on((12, 0)));
        assert!(!sm_80.runs_on((7, 5)));
        assert!(sm_90a.runs_on((9, 0)));
        assert!(!sm_90a.runs_on((10, 0)) && !sm_90a.runs_on((8, 9)));
        assert!(Arch::parse("sm_90").unwrap() < sm_90a);
        assert!(Arch::parse("sm_100").unwrap().runs_on((10, 0)));
        assert!(!Arch::parse("sm_100").unwrap().runs_on((9, 0)));
        assert_eq!(Arch::parse("compute_80"), None);
        assert_eq!(Arch::parse("sm_"), None);
        assert_eq!(sm_90a.needs(), "sm_90a (compute capability 9.0 exactly)");
    }
}
