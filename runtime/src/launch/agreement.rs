//! The check, before an instance's first launch on a device, that the host
//! and the device compiled the kernel alike, and that the runtime fills its
//! parameters as the macro described them.
//!
//! Three comparisons, each refusing the launch with an error naming both
//! sides:
//! - the instance's interface description (`gpu_device::__private::
//!   interface`) against the calling convention of the argument builder
//!   ([`crate::abi::check_convention`]): each parameter's slots, by role;
//! - the description the host compiled against the one the device did,
//!   kept in the PTX: every type's name, size, alignment and layout, each
//!   parameter's kind and slots, the block shape, the instance and the
//!   length bounds, as each target evaluated them;
//! - the byte size of each PTX parameter of the entry point against the
//!   size of the value the launcher passes for it (what rustc's kernel ABI
//!   made of the parameters: a zero-sized one is left out).
//!
//! Both backends check, in the PTX a device of the device's compute
//! capability loads (the simulator reads the same PTX, so it refuses what a
//! GPU would); modules without PTX (test scaffolding run only on the
//! simulator) get the first comparison alone.

use crate::abi::{check_convention, HostEntry};
use crate::error::{Error, Result};
use crate::module::EmbeddedModule;
use gpu_device::__private::interface::{encode, Description};

/// See the [module documentation](self): `entry` is the entry point about
/// to be launched, of instance `interface` of kernel `kernel` of `module`.
pub(super) fn check(
    module: &EmbeddedModule,
    kernel: &'static str,
    entry: &str,
    interface: &Description,
    host: &HostEntry,
    cc: (u32, u32),
) -> Result<()> {
    let refuse = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    if let Err(reason) = check_convention(interface) {
        return refuse(reason);
    }
    if module.ptx().is_empty() {
        return Ok(());
    }
    let host_text = text(interface);
    match module.interface_description(cc, interface.entry) {
        Some(Ok(device_text)) if device_text == host_text => {}
        Some(Ok(device_text)) => return refuse(difference(&host_text, &device_text)),
        Some(Err(unreadable)) => return refuse(unreadable),
        None => {
            return refuse(format!(
                "its PTX has no interface description for `{}` (the global `__gpu_abi${}`): the PTX was built by another version of gpu-builder, or is not this crate's",
                interface.entry, interface.entry
            ))
        }
    }
    let passed = host.param_sizes;
    match module.entry_param_sizes(cc, entry) {
        Some(Ok(ptx)) if ptx == passed => Ok(()),
        Some(Ok(ptx)) => refuse(format!(
            "its PTX entry point `{entry}` takes parameters of {ptx:?} bytes where the launcher passes {passed:?}: host and device compiled the kernel differently (a `#[cfg]` on the target?) or the PTX is another crate's"
        )),
        Some(Err(unreadable)) => refuse(format!("its PTX entry point `{entry}` has an {unreadable}")),
        None => refuse(format!(
            "its PTX has no entry point `{entry}` (the kernel is compiled for the host only?)"
        )),
    }
}

/// The description's text.
fn text(description: &Description) -> String {
    let mut bytes = vec![0; encode(description, &mut [])];
    encode(description, &mut bytes);
    String::from_utf8(bytes).expect("a description is text")
}

/// The first fact on which the host's description and the device's differ,
/// with the parameter it belongs to.
fn difference(host: &str, device: &str) -> String {
    let (host_lines, device_lines): (Vec<&str>, Vec<&str>) =
        (host.lines().collect(), device.lines().collect());
    let at = host_lines
        .iter()
        .zip(&device_lines)
        .position(|(h, d)| h != d)
        .unwrap_or(host_lines.len().min(device_lines.len()));
    let side = |lines: &[&str]| match lines.get(at) {
        Some(line) => format!("`{}`", line.trim()),
        None => "nothing more".to_string(),
    };
    // A slot's line names its parameter on the last `param` line before it.
    let is_slot = host_lines
        .get(at)
        .or(device_lines.get(at))
        .is_some_and(|l| l.starts_with("  "));
    let within = host_lines[..at]
        .iter()
        .rev()
        .find(|l| is_slot && l.starts_with("param "))
        .map(|l| format!(" (of `{l}`)"))
        .unwrap_or_default();
    format!(
        "host and device compiled it differently: the host has {}{within} where the device has {} (a `#[cfg]`, `cfg_attr` or type alias that differs between the two targets?)",
        side(&host_lines),
        side(&device_lines)
    )
}

#[cfg(test)]
mod tests {
    use super::difference;

    #[test]
    fn a_difference_names_both_sides_and_the_parameter() {
        let host = "entry k\nparam out: output of u32 (size 4, align 4)\n  slot pointer: *mut u32 (size 8, align 8)\n  slot len: usize (size 8, align 8)\n";
        let device = "entry k\nparam out: output of u32 (size 4, align 4)\n  slot pointer: *mut u32 (size 8, align 8)\n  slot len: u32 (size 4, align 4)\n";
        let message = difference(host, device);
        assert!(
            message.contains("the host has `slot len: usize (size 8, align 8)` (of `param out: output of u32 (size 4, align 4)`) where the device has `slot len: u32 (size 4, align 4)`"),
            "{message}"
        );
        let message = difference("entry k\nblock 64 1 1\n", "entry k\nblock 32 1 1\n");
        assert!(
            message.contains("the host has `block 64 1 1` where the device has `block 32 1 1`"),
            "{message}"
        );
        let message = difference("entry k\nparam n: scalar\n", "entry k\n");
        assert!(
            message.contains("the host has `param n: scalar` where the device has nothing more"),
            "{message}"
        );
    }
}
