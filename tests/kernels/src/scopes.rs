//! Kernels that try `#[kernel]`'s scopes and names, each as a hostile
//! reviewer would: attribute expressions written relative to the kernel
//! (`super::`, `self::`, a `use` inside a function, a macro, names the
//! generated code uses), and parameters named like every name the macro
//! generates. Each must run as written, on the GPU and on the simulator
//! (`tests/suite/launch/host_device_agreement.rs`).

use gpu_device::prelude::*;

/// The width `inner`'s kernels name as `super::WIDTH`.
pub const WIDTH: usize = 64;

/// An 8-byte element, which `inner`'s generic kernel names as
/// `super::Elem`.
#[derive(Clone, Copy, DeviceCopy, PartialEq, Debug)]
#[repr(C)]
pub struct Elem {
    /// The value.
    pub value: u64,
}

/// A module with its own `WIDTH` and `Elem`, so that a path resolved one
/// module too low finds another value and another type.
pub mod inner {
    use gpu_device::prelude::*;

    /// Not the width the kernels below name.
    pub const WIDTH: usize = 32;

    /// A 4-byte element, not the one the kernel below names.
    #[derive(Clone, Copy, DeviceCopy, PartialEq, Debug)]
    #[repr(C)]
    pub struct Elem {
        /// The value.
        pub value: u32,
    }

    /// Declares blocks of `super::WIDTH` (64) threads, and writes the block
    /// width the device sees.
    #[kernel(block = (super::WIDTH, 1))]
    pub fn block_of_super(mut out: DisjointSlice<u32>) {
        let i = thread_index();
        out.set(i, block_dim().x);
    }

    /// Declares blocks of `self::WIDTH` (32) threads.
    #[kernel(block = (self::WIDTH, 1))]
    pub fn block_of_self(mut out: DisjointSlice<u32>) {
        let i = thread_index();
        out.set(i, block_dim().x);
    }

    /// Copies elements of `super::Elem` (8 bytes).
    #[kernel(super::Elem)]
    pub fn copy_of_super<T: DeviceCopy>(x: &[T], mut out: DisjointSlice<T>) {
        let i = thread_index();
        if let Some(&v) = x.get(i.get()) {
            out.set(i, v);
        }
    }
}

/// Names the generated code once used, as the user's constants: each is
/// what the kernel below means by it.
pub mod names {
    use gpu_device::prelude::*;

    /// The launcher's static once had this name.
    pub const FUNCTION: usize = 16;
    /// The declared shape's constant once had this name.
    pub const BLOCK_SHAPE: usize = 4;
    /// The instance's block constant.
    pub const BLOCK_0: usize = 2;
    /// A constant of the generated code.
    pub const LEN: usize = 3;
    /// A constant of the generated code.
    pub const SIZES: usize = 2;
    /// A static of the generated code.
    pub const INPUTS: usize = 1;
    /// A static of the generated code.
    pub const DESCRIPTION: usize = 1;

    /// A type named like the generated launcher, passed by value.
    #[derive(Clone, Copy, DeviceCopy)]
    #[repr(C)]
    pub struct Launcher {
        /// Added to every sum.
        pub offset: u32,
    }

    /// A type named like the generated hidden type, as an element.
    pub type Kernel = [u32; LEN];

    /// A width made by a macro.
    macro_rules! width {
        () => {
            FUNCTION
        };
    }

    /// Blocks of `16 * 4 * 2` threads named by the user's constants and a
    /// macro; elements of `[u32; LEN]` (as `Kernel`), written as `[u32;
    /// SIZES]`; a value of the user's `Launcher`.
    #[kernel(block = (width!() * BLOCK_SHAPE * BLOCK_0 * INPUTS * DESCRIPTION, 1))]
    pub fn shadowed_names(x: &[Kernel], by: Launcher, mut out: DisjointSlice<[u32; SIZES]>) {
        let i = thread_index();
        if let Some(v) = x.get(i.get()) {
            out.set(
                i,
                [
                    v[0] + v[1] + v[2] + by.offset,
                    block_dim().x * block_dim().y * block_dim().z,
                ],
            );
        }
    }
}

/// A kernel written inside a function, whose `block` names a width imported
/// by a `use` inside that function (64), while the module's own `WIDTH`
/// differs (32).
pub mod in_a_function {
    /// Not the width the kernel names.
    pub const WIDTH: usize = 32;

    macro_rules! kernel_in_a_function {
        () => {
            use gpu_device::prelude::*;
            use $crate::scopes::WIDTH;

            #[kernel(block = (WIDTH, 1))]
            fn block_of_a_use(mut out: DisjointSlice<u32>) {
                let i = thread_index();
                out.set(i, block_dim().x);
            }
        };
    }

    /// Compiles the kernel for the device.
    #[cfg(target_arch = "nvptx64")]
    pub fn block_of_a_use() {
        kernel_in_a_function!();
    }

    /// Launches the kernel, one block of 64 threads, writing each thread's
    /// block width into `out`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn block_of_a_use(
        stream: &gpu_runtime::Stream,
        out: &mut gpu_runtime::DeviceBuffer<u32>,
    ) -> gpu_runtime::Result<()> {
        kernel_in_a_function!();
        gpu_runtime::launch!(block_of_a_use[1, 64, stream](out))
    }
}

/// Every parameter is named like a name the macro generates or generated
/// (the launcher's locals, the entry point's parameters, the simulator's
/// pointer array, the entry point itself), declared before the slice,
/// matrix and grid whose generated names they imitate; each scalar's value
/// is written to `out` at its position, then `x`'s first element, then the
/// matrix's and the grid's extents as the device received them.
#[kernel(len(x >= out))]
#[allow(non_snake_case, clippy::too_many_arguments)]
pub fn named_like_generated(
    __slice_x: u32,
    __device: u32,
    __stream: u32,
    __function: u32,
    __params: u32,
    config: u32,
    x__ptr: u32,
    x__len: u32,
    __gpu_args: u32,
    __gpu_stream: u32,
    __gpu_len_x: u32,
    __gpu_params: u32,
    __gpu_launch: u32,
    __gpu_entry: u32,
    __gpu_entry_shape: u32,
    Kernel: u32,
    m__ptr: u32,
    m__len: u32,
    m__rows: u32,
    m__cols: u32,
    __rows_m: u32,
    __cols_m: u32,
    __len_m: u32,
    g__depth: u32,
    __depth_g: u32,
    x: &[u32],
    m: DisjointSlice2dU32<u32>,
    g: DisjointSlice3d<u32>,
    mut out: DisjointSlice<u32>,
) {
    let i = thread_index();
    let values = [
        __slice_x,
        __device,
        __stream,
        __function,
        __params,
        config,
        x__ptr,
        x__len,
        __gpu_args,
        __gpu_stream,
        __gpu_len_x,
        __gpu_params,
        __gpu_launch,
        __gpu_entry,
        __gpu_entry_shape,
        Kernel,
        m__ptr,
        m__len,
        m__rows,
        m__cols,
        __rows_m,
        __cols_m,
        __len_m,
        g__depth,
        __depth_g,
    ];
    if let Some(&v) = values.get(i.get()) {
        out.set(i, v);
    } else if i.get() == values.len() {
        out.set(i, x[0]);
    } else if i.get() == values.len() + 1 {
        // The matrix's and the grid's extents, as the device received them.
        let (rows, cols) = (m.rows(), m.cols());
        let (depth, grid_rows, grid_cols) = g.extents();
        out.set(
            i,
            rows * 1000 + cols * 100 + (depth * 100 + grid_rows * 10 + grid_cols) as u32,
        );
    }
}
