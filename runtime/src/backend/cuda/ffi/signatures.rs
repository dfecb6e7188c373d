//! Test-only: the sizes of a function's arguments, to compare the driver
//! functions declared here with cudarc's `driver::sys` (bindgen's output of
//! `cuda.h`) in `bindings_check.rs`.

use std::mem::size_of;

/// cudarc's driver functions, and the one the runtime calls by a name CUDA
/// 12's `cuda.h` no longer declares.
pub(crate) mod driver_sys {
    pub(crate) use cudarc::driver::sys::*;

    /// `cuGraphExecKernelNodeSetParams`, the unversioned entry point, which
    /// takes `CUDA_KERNEL_NODE_PARAMS` version 1 (CUDA 12's `cuda.h` maps
    /// the name to `_v2`, which takes version 2; the driver library has
    /// both). Only its signature is used.
    #[allow(non_snake_case)]
    pub(crate) unsafe fn cuGraphExecKernelNodeSetParams(
        _exec: CUgraphExec,
        _node: CUgraphNode,
        _params: *const CUDA_KERNEL_NODE_PARAMS_v1,
    ) -> CUresult {
        unreachable!("a signature to compare, never called")
    }
}

/// The sizes of a function pointer type's arguments.
pub(crate) trait ArgumentSizes {
    /// Each argument's size, in order.
    fn sizes() -> Vec<usize>;

    /// [`sizes`](Self::sizes) of this value's type.
    fn argument_sizes(&self) -> Vec<usize> {
        Self::sizes()
    }
}

macro_rules! argument_sizes {
    ($($arg:ident),*) => {
        impl<R, $($arg),*> ArgumentSizes for unsafe fn($($arg),*) -> R {
            fn sizes() -> Vec<usize> {
                vec![$(size_of::<$arg>()),*]
            }
        }
        impl<R, $($arg),*> ArgumentSizes for unsafe extern "C" fn($($arg),*) -> R {
            fn sizes() -> Vec<usize> {
                vec![$(size_of::<$arg>()),*]
            }
        }
    };
}
argument_sizes!();
argument_sizes!(A);
argument_sizes!(A, B);
argument_sizes!(A, B, C);
argument_sizes!(A, B, C, D);
argument_sizes!(A, B, C, D, E);
argument_sizes!(A, B, C, D, E, F);
argument_sizes!(A, B, C, D, E, F, G);
argument_sizes!(A, B, C, D, E, F, G, H);
argument_sizes!(A, B, C, D, E, F, G, H, I);
argument_sizes!(A, B, C, D, E, F, G, H, I, J);
argument_sizes!(A, B, C, D, E, F, G, H, I, J, K);
argument_sizes!(A, B, C, D, E, F, G, H, I, J, K, L);

/// The argument sizes of the function pointer type of a field of `S`.
pub(crate) fn field_argument_sizes<S, F: ArgumentSizes>(_field: fn(&S) -> &F) -> Vec<usize> {
    F::sizes()
}
