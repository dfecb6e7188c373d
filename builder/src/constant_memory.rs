//! Moves the storage of `gpu_device::constant!` arrays into PTX's constant
//! state space (`.const`, LLVM's address space 4), where every thread reads
//! them through the constant cache (`ld.const`).
//!
//! `gpu-device` declares each array's storage as an ordinary `static` named
//! `__gpu_const_<crate>_<name>`. This pass puts each such global in address
//! space 4, keeping its linkage and (zeroed) initialiser, and wraps every use
//! in an `addrspacecast` to the generic address space, as
//! [`crate::shared_memory`] does for shared memory. The globals stay
//! visible ([`crate::HOST_SET_GLOBALS`]): the runtime finds them by name
//! (`cuModuleGetGlobal`) and sets them before launches.

use crate::shared_memory::{move_to_space, Space};

/// The symbol prefix `gpu-device` reserves for constant memory.
pub const PREFIX: &str = "__gpu_const_";

/// `ir` with the constant arrays moved to address space 4; `None` when it
/// has none. An error names a definition this pass cannot read.
pub fn move_to_constant_space(ir: &str) -> Result<Option<String>, String> {
    move_to_space(
        ir,
        &Space {
            prefix: PREFIX,
            number: 4,
            keep_initializer: true,
            name: "constant memory",
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_move_to_address_space_4_with_their_initialisers() {
        let ir = "@__gpu_const_k_TAPS = dso_local global [36 x i8] zeroinitializer, align 4\\n\\
                  @_R4TAPS = internal constant <{ ptr, [8 x i8] }> <{ ptr @__gpu_const_k_TAPS, [8 x i8] zeroinitializer }>, align 8\\n\\
                  define void @f() {\\n  \\
                  %v = load float, ptr @__gpu_const_k_TAPS, align 4\\n  \\
                  ret void\\n}\\n";
        let out = move_to_constant_space(ir).unwrap().unwrap();
        assert!(
            out.contains("@__gpu_const_k_TAPS = dso_local addrspace(4) global [36 x i8] zeroinitializer, align 4\\n"),
            "{out}"
        );
        assert!(
            out.contains("<{ ptr addrspacecast (ptr addrspace(4) @__gpu_const_k_TAPS to ptr), [8 x i8] zeroinitializer }>"),
            "{out}"
        );
        assert!(
            out.contains("load float, ptr addrspacecast (ptr addrspace(4) @__gpu_const_k_TAPS to ptr), align 4"),
            "{out}"
        );
        assert_eq!(
            move_to_constant_space("@x = global i32 0\\n").unwrap(),
            None
        );
    }
}
