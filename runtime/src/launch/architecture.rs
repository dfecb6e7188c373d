//! The launch check of a kernel's architecture: what a kernel needs (its
//! `#[kernel(arch = "sm_80")]`, and the architectures its crate's PTX was
//! built for, one module each: `gpu_builder::PtxBuilder::archs`) against
//! the device's compute capability. A launch on a device too old for the
//! kernel is refused before anything reaches the driver, with
//! [`Error::ArchitectureTooOld`] naming the kernel, what it needs and the
//! device; the simulated devices' compute capability is
//! `GPU_SIM_COMPUTE_CAPABILITY`, so both backends refuse alike.

use crate::architecture::Arch;
use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::module::EmbeddedModule;
use gpu_device::__private::interface::Description;

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
