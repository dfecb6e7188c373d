//! The calling convention between `#[kernel]`'s generated code and the
//! runtime: what a launcher hands to a backend. Both backends depend on this
//! module and on nothing else of the runtime.
//!
//! A kernel instance has a PTX entry point (which the CUDA driver runs) and a
//! host entry point (which the CPU simulator runs). Both take one pointer per
//! PTX parameter ("slot"). Which slots each kind of parameter has is
//! described once, in the macro's model (`macros/src/kernel/kinds.rs`), and
//! reaches the runtime in each instance's interface description
//! (`gpu_device::__private::interface`); the argument builder
//! (`launch/arguments.rs`) fills them by the roles of [`slot_roles`], and
//! [`check_convention`] compares the two before an instance's first launch.

use gpu_device::__private::interface::{Description, Kind, Role};
use std::ffi::c_void;

/// A kernel instance's body as the CPU simulator calls it: `call` (the
/// general entry point), `call_1d` (the one for one-dimensional launches)
/// and `call_2d` (the one for launches whose z extents are 1, for kernels
/// that have it) take one pointer per PTX parameter, as the entry points
/// do, whose sizes are `param_sizes` (the simulator copies the values at
/// launch).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct HostEntry {
    pub(crate) call: unsafe fn(*const *mut c_void),
    pub(crate) call_1d: unsafe fn(*const *mut c_void),
    pub(crate) call_2d: Option<unsafe fn(*const *mut c_void)>,
    pub(crate) param_sizes: &'static [usize],
}

/// The body the simulator runs for one launch: the entry point of the
/// launch's shape, and the sizes of its parameters. What a backend is handed
/// in place of the whole [`HostEntry`] (three words, not five).
#[derive(Clone, Copy)]
pub(crate) struct HostBody {
    pub(crate) call: unsafe fn(*const *mut c_void),
    pub(crate) param_sizes: &'static [usize],
}

impl HostEntry {
    /// A kernel instance's host entry points.
    ///
    /// # Safety
    /// Each function runs the instance's body for its entry shape (`call`
    /// the general one, `call_1d` the one-dimensional one, `call_2d` the
    /// z-extent-one one) as the current simulated thread, reading one
    /// pointer per PTX parameter of the instance as a value of that
    /// parameter's type, whose sizes are `param_sizes`, in order: what the
    /// argument builder passes for the instance's interface description.
    pub const unsafe fn new(
        call: unsafe fn(*const *mut c_void),
        call_1d: unsafe fn(*const *mut c_void),
        call_2d: Option<unsafe fn(*const *mut c_void)>,
        param_sizes: &'static [usize],
    ) -> Self {
        HostEntry {
            call,
            call_1d,
            call_2d,
            param_sizes,
        }
    }
}

/// The slots the argument builder fills for a parameter of `kind`, in
/// order: its calling convention.
pub(crate) const fn slot_roles(kind: Kind) -> &'static [Role] {
    match kind {
        Kind::Scalar | Kind::Value => &[Role::Value],
        Kind::Input | Kind::Output | Kind::Atomic => &[Role::Pointer, Role::Len],
        Kind::Matrix | Kind::MatrixU32 | Kind::MappedMatrix => {
            &[Role::Pointer, Role::Len, Role::Rows, Role::Cols]
        }
        Kind::Grid3d => &[Role::Pointer, Role::Depth, Role::Rows, Role::Cols],
        Kind::TensorMap | Kind::TensorMapOut => &[Role::Pointer],
        Kind::Block | Kind::DynamicShared | Kind::Grid | Kind::Cluster => &[],
    }
}

/// Checks that each parameter of `description` has the slots the argument
/// builder fills for its kind; the reason, naming the parameter, otherwise
/// (a `#[kernel]` macro and a runtime that disagree).
pub(crate) fn check_convention(description: &Description) -> Result<(), String> {
    for param in description.params {
        let described: Vec<Role> = param.slots.iter().map(|s| s.role).collect();
        let expected = slot_roles(param.kind);
        if described != expected {
            return Err(format!(
                "its parameter `{}` ({}) is described with the slots {:?}, where the runtime's argument builder fills {:?} for that kind: the `#[kernel]` macro and the runtime are of different versions",
                param.name,
                param.kind.name(),
                described,
                expected
            ));
        }
    }
    Ok(())
}

/// A slice argument as the entry point receives it: address and length.
pub(crate) struct SliceArg {
    /// The device address of the first element.
    pub(crate) ptr: u64,
    /// The number of elements.
    pub(crate) len: usize,
}

#[cfg(test)]
mod tests {
    use super::{check_convention, slot_roles};
    use gpu_device::__private::interface::{
        type_facts, Description, Instance, Kind, Param, Role, Slot,
    };

    fn description(slots: &'static [Slot]) -> Description {
        Description {
            entry: "k",
            instance: Instance::None,
            block: None,
            lengths: &[],
            launch_bounds: None,
            cooperative: false,
            cluster: None,
            arch: None,
            params: Box::leak(Box::new([Param {
                name: "out",
                kind: Kind::Matrix,
                ty: Some(type_facts::<f32>()),
                slots,
                map: None,
            }])),
        }
    }

    #[test]
    fn two_swapped_extents_are_not_the_convention() {
        const fn slot(role: Role) -> Slot {
            Slot {
                role,
                ty: type_facts::<usize>(),
            }
        }
        let good = description(Box::leak(Box::new([
            slot(Role::Pointer),
            slot(Role::Len),
            slot(Role::Rows),
            slot(Role::Cols),
        ])));
        assert!(check_convention(&good).is_ok());
        let swapped = description(Box::leak(Box::new([
            slot(Role::Pointer),
            slot(Role::Len),
            slot(Role::Cols),
            slot(Role::Rows),
        ])));
        let reason = check_convention(&swapped).unwrap_err();
        assert!(
            reason.contains("`out` (matrix)") && reason.contains("[Pointer, Len, Cols, Rows]"),
            "{reason}"
        );
        assert_eq!(slot_roles(Kind::Block), &[]);
    }
}
