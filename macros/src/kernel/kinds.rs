//! Each kind of kernel parameter, described once: how the kernel writes
//! it, what the launcher takes for it, its PTX parameters ("slots") and
//! the runtime's argument-builder method that fills them.
//!
//! Both emitters are generated from this description: the device entry
//! points' parameter lists and the simulator's host entries from
//! [`KindSpec::slots`], the launcher's calls from [`KindSpec::builder`], and
//! the interface description both targets compile (which the runtime
//! checks against its calling convention, `gpu_runtime`'s `abi.rs`) from
//! both. The parameter tables of the README and of `#[kernel]`'s
//! documentation, and the error for an unsupported type, are generated
//! from [`ALL`] (a unit test compares the first two with the files).
//!
//! A new kind, in this crate: a [`ParamKind`] variant, its parsing and its
//! element type (`params.rs`), its [`KindSpec`] here, its rebuild on the
//! device (`device.rs`) and its launcher argument type (`host.rs`): each a
//! `match` over the kinds, which the compiler checks. In `gpu-device`, its
//! `interface::Kind`; in `gpu-runtime`, its builder method
//! (`launch/arguments.rs`) and its calling convention (`abi.rs`, checked
//! against [`KindSpec::slots`] before the first launch).

use super::params::{MatrixIndex, ParamKind};

/// One parameter kind.
pub struct KindSpec {
    /// Its `gpu_device::__private::interface::Kind` variant.
    pub variant: &'static str,
    /// How the kernel writes it.
    pub written: &'static str,
    /// What the launcher takes for it (`None`: built on the device, no
    /// launcher argument).
    pub launcher_takes: Option<&'static str>,
    /// What it is for, in the error for an unsupported type.
    pub summary: &'static str,
    /// Its PTX parameters, in order.
    pub slots: &'static [SlotSpec],
    /// The argument builder's method that checks the argument and fills
    /// the slots (`gpu_runtime::__private::LaunchArgs`); `None` for kinds
    /// built on the device.
    pub builder: Option<&'static str>,
    /// What `len(input >= covered)` may name a parameter of this kind as.
    pub length_bound: LengthRole,
    /// Whether the kernel writes the argument: the launcher hands it to its
    /// builder method borrowed mutably.
    pub writes: bool,
}

/// What `len(input >= covered)` may name a parameter as: the launcher
/// compares the element counts its builder method returns, the device
/// assumes the bound on the `Len` slots.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LengthRole {
    /// Neither side.
    None,
    /// `covered`: it has an element count.
    Covered,
    /// Either side: an input slice, read by every thread.
    InputOrCovered,
}

/// One PTX parameter of a kind.
pub struct SlotSpec {
    /// The entry point parameter's name is `<parameter>__<suffix>`
    /// (`None`: the parameter's own name, for values).
    pub suffix: Option<&'static str>,
    /// Its `gpu_device::__private::interface::Role` variant.
    pub role: &'static str,
    pub ty: SlotType,
}

/// The type of a slot, given the parameter's element or value type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SlotType {
    /// The parameter's type itself.
    Value,
    /// `*const T` of the element type.
    ConstPointer,
    /// `*mut T` of the element type.
    MutPointer,
    Usize,
    U32,
}

const fn slot(suffix: &'static str, role: &'static str, ty: SlotType) -> SlotSpec {
    SlotSpec {
        suffix: Some(suffix),
        role,
        ty,
    }
}

const VALUE_SLOTS: &[SlotSpec] = &[SlotSpec {
    suffix: None,
    role: "Value",
    ty: SlotType::Value,
}];

pub const SCALAR: KindSpec = KindSpec {
    variant: "Scalar",
    written: "`u8`…`u64`, `i8`…`i64`, `usize`, `isize`, `f32`, `f64`, `bool`",
    launcher_takes: Some("the same scalar"),
    summary: "scalars (integers, floats, bool)",
    slots: VALUE_SLOTS,
    builder: Some("value"),
    length_bound: LengthRole::None,
    writes: false,
};

pub const VALUE: KindSpec = KindSpec {
    variant: "Value",
    written: "a `#[repr(C)]` struct with `#[derive(Clone, Copy, DeviceCopy)]`",
    launcher_takes: Some("the struct"),
    summary: "`#[repr(C)]` structs that derive `DeviceCopy`",
    slots: VALUE_SLOTS,
    builder: Some("value"),
    length_bound: LengthRole::None,
    writes: false,
};

pub const INPUT: KindSpec = KindSpec {
    variant: "Input",
    written: "`&[T]` (read by all threads)",
    launcher_takes: Some("`&DeviceBuffer<T>`, `DeviceView<T>`"),
    summary: "`&[T]` (read-only input)",
    slots: &[
        slot("ptr", "Pointer", SlotType::ConstPointer),
        slot("len", "Len", SlotType::Usize),
    ],
    builder: Some("input"),
    length_bound: LengthRole::InputOrCovered,
    writes: false,
};

pub const OUTPUT: KindSpec = KindSpec {
    variant: "Output",
    written: "`DisjointSlice<T>` (each thread writes its own element), `DisjointSlice<T, M>` (the elements the map `M` gives it: per block, per warp, grid-stride, blocked, striped)",
    launcher_takes: Some("`&mut DeviceBuffer<T>`, `DeviceViewMut<T>`"),
    summary: "`DisjointSlice<T>` (an output written at each thread's own index)",
    slots: &[
        slot("ptr", "Pointer", SlotType::MutPointer),
        slot("len", "Len", SlotType::Usize),
    ],
    builder: Some("output"),
    length_bound: LengthRole::Covered,
    writes: true,
};

pub const MATRIX: KindSpec = KindSpec {
    variant: "Matrix",
    written: "`DisjointSlice2d<T>` (row-major matrix, element `(y, x)` per thread)",
    launcher_takes: Some("`buffer.view_2d_mut(rows, cols)?`"),
    summary: "`DisjointSlice2d<T>` (a matrix output, `R` rows per thread)",
    slots: &[
        slot("ptr", "Pointer", SlotType::MutPointer),
        slot("len", "Len", SlotType::Usize),
        slot("rows", "Rows", SlotType::Usize),
        slot("cols", "Cols", SlotType::Usize),
    ],
    builder: Some("matrix"),
    length_bound: LengthRole::Covered,
    writes: true,
};

pub const MAPPED_MATRIX: KindSpec = KindSpec {
    variant: "MappedMatrix",
    written: "`DisjointMatrix<T, M>` (row-major matrix divided by the map `M`: one row per block, register tiles; `u32` extents, at most `u32::MAX` elements)",
    launcher_takes: Some("`buffer.view_2d_mut(rows, cols)?`"),
    summary: "`DisjointMatrix<T, M>` (a matrix output divided by an ownership map)",
    slots: &[
        slot("ptr", "Pointer", SlotType::MutPointer),
        slot("len", "Len", SlotType::U32),
        slot("rows", "Rows", SlotType::U32),
        slot("cols", "Cols", SlotType::U32),
    ],
    builder: Some("matrix_u32"),
    length_bound: LengthRole::Covered,
    writes: true,
};

pub const MATRIX_U32: KindSpec = KindSpec {
    variant: "MatrixU32",
    written: "`DisjointSlice2dU32<T>` (the same, `u32` extents and offsets; at most `u32::MAX` elements, or the launch fails naming the parameter)",
    launcher_takes: Some("`buffer.view_2d_mut(rows, cols)?`"),
    summary: "`DisjointSlice2dU32<T>` (a matrix output with 32-bit indices)",
    slots: &[
        slot("ptr", "Pointer", SlotType::MutPointer),
        slot("len", "Len", SlotType::U32),
        slot("rows", "Rows", SlotType::U32),
        slot("cols", "Cols", SlotType::U32),
    ],
    builder: Some("matrix_u32"),
    length_bound: LengthRole::Covered,
    writes: true,
};

pub const GRID_3D: KindSpec = KindSpec {
    variant: "Grid3d",
    written: "`DisjointSlice3d<T>` (element `(z, y, x)` per thread)",
    launcher_takes: Some("`buffer.view_3d_mut(depth, rows, cols)?`"),
    summary: "`DisjointSlice3d<T>` (a 3-D output)",
    slots: &[
        slot("ptr", "Pointer", SlotType::MutPointer),
        slot("depth", "Depth", SlotType::Usize),
        slot("rows", "Rows", SlotType::Usize),
        slot("cols", "Cols", SlotType::Usize),
    ],
    builder: Some("grid_3d"),
    length_bound: LengthRole::None,
    writes: true,
};

pub const ATOMIC: KindSpec = KindSpec {
    variant: "Atomic",
    written: "`&[DeviceAtomic<T>]` (atomic updates)",
    launcher_takes: Some("`&mut DeviceBuffer<T>`, `DeviceViewMut<T>`"),
    summary: "`&[DeviceAtomic<T>]` (atomic updates)",
    slots: &[
        slot("ptr", "Pointer", SlotType::ConstPointer),
        slot("len", "Len", SlotType::Usize),
    ],
    builder: Some("output"),
    length_bound: LengthRole::None,
    writes: true,
};

pub const BLOCK: KindSpec = KindSpec {
    variant: "Block",
    written: "`Block` (shared-memory phase token)",
    launcher_takes: None,
    summary: "`Block` (the shared-memory phase token, built on the device)",
    slots: &[],
    builder: None,
    length_bound: LengthRole::None,
    writes: false,
};

pub const GRID: KindSpec = KindSpec {
    variant: "Grid",
    written: "`Grid` (grid sync, `#[kernel(cooperative)]` only)",
    launcher_takes: None,
    summary:
        "`Grid` (the grid-sync token of a `#[kernel(cooperative)]` kernel, built on the device)",
    slots: &[],
    builder: None,
    length_bound: LengthRole::None,
    writes: false,
};

pub const CLUSTER: KindSpec = KindSpec {
    variant: "Cluster",
    written: "`Cluster` (the block's cluster: ranks, cluster sync, distributed shared memory; `#[kernel(cluster = ...)]` only)",
    launcher_takes: None,
    summary: "`Cluster` (the cluster witness of a `#[kernel(cluster = ...)]` kernel, built on the device)",
    slots: &[],
    builder: None,
    length_bound: LengthRole::None,
    writes: false,
};

pub const DYNAMIC_SHARED: KindSpec = KindSpec {
    variant: "DynamicShared",
    written: "`DynamicShared<T>` (dynamic shared memory)",
    launcher_takes: None,
    summary: "`DynamicShared<T>` (the dynamic shared memory, built on the device)",
    slots: &[],
    builder: None,
    length_bound: LengthRole::None,
    writes: false,
};

pub const TENSOR_MAP: KindSpec = KindSpec {
    variant: "TensorMap",
    written: "`TensorMap2d<T, ROWS, COLS, S>` or `TensorMapNd<T, B, S>` (a tensor map for bulk tensor copies, sm_90)",
    launcher_takes: Some("`&TensorMap<'_, T>` of that box and swizzle"),
    summary: "`TensorMap2d<T, ROWS, COLS, S>` or `TensorMapNd<T, B, S>` (a tensor map of a buffer, read by TMA copies)",
    // The address of the map's encoded `CUtensorMap` in global memory.
    slots: &[slot("map", "Pointer", SlotType::ConstPointer)],
    builder: Some("tensor_map"),
    length_bound: LengthRole::None,
    writes: false,
};

pub const TENSOR_MAP_OUT: KindSpec = KindSpec {
    variant: "TensorMapOut",
    written:
        "`TensorMapOut<T, B, S>` (a tensor map written by bulk tensor stores, a box a block, sm_90)",
    launcher_takes: Some("`&mut TensorMapOut<'_, T>` of that box and swizzle"),
    summary: "`TensorMapOut<T, B, S>` (a tensor map of a buffer, written by TMA stores)",
    // The address of the map's encoded `CUtensorMap`, its box counts after it.
    slots: &[slot("map", "Pointer", SlotType::ConstPointer)],
    builder: Some("tensor_map_out"),
    length_bound: LengthRole::None,
    writes: true,
};

/// Every kind, in the order of the tables.
pub const ALL: [&KindSpec; 15] = [
    &SCALAR,
    &INPUT,
    &OUTPUT,
    &MATRIX,
    &MATRIX_U32,
    &MAPPED_MATRIX,
    &GRID_3D,
    &BLOCK,
    &DYNAMIC_SHARED,
    &GRID,
    &CLUSTER,
    &ATOMIC,
    &TENSOR_MAP,
    &TENSOR_MAP_OUT,
    &VALUE,
];

impl KindSpec {
    /// The kind as the kernel writes it, without its explanation.
    pub fn name(&self) -> &'static str {
        self.written.split(" (").next().unwrap_or(self.written)
    }
}

impl ParamKind {
    /// This parameter's kind.
    pub fn spec(&self) -> &'static KindSpec {
        match self {
            ParamKind::Scalar(_) => &SCALAR,
            ParamKind::Value(_) => &VALUE,
            ParamKind::Input(_) => &INPUT,
            ParamKind::Output(..) => &OUTPUT,
            ParamKind::MappedMatrix(..) => &MAPPED_MATRIX,
            ParamKind::Output2d(_, _, MatrixIndex::Usize) => &MATRIX,
            ParamKind::Output2d(_, _, MatrixIndex::U32) => &MATRIX_U32,
            ParamKind::Output3d(_) => &GRID_3D,
            ParamKind::Atomic(_) => &ATOMIC,
            ParamKind::Block => &BLOCK,
            ParamKind::DynamicShared(_) => &DYNAMIC_SHARED,
            ParamKind::Grid => &GRID,
            ParamKind::Cluster => &CLUSTER,
            ParamKind::TensorMap(..) => &TENSOR_MAP,
            ParamKind::TensorMapOut(..) => &TENSOR_MAP_OUT,
        }
    }
}

/// The parameter table of the README and of `#[kernel]`'s documentation:
/// each kind, and what the launcher takes for it (compared with the files
/// by the tests below).
#[cfg(test)]
pub fn parameter_table() -> String {
    let mut table = String::from("| in the kernel | at the launch |\n|---|---|\n");
    for kind in ALL {
        let takes = kind
            .launcher_takes
            .unwrap_or("nothing: built on the device");
        table.push_str(&format!("| {} | {} |\n", kind.written, takes));
    }
    table
}

/// What kernel parameters may be, for the error of an unsupported type.
pub fn supported() -> String {
    let kinds: Vec<&str> = ALL.iter().map(|k| k.summary).collect();
    format!("kernel parameters may be {}", kinds.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::params::Param;
    use super::*;

    /// A parameter of each kind: every kind has one, and is one's.
    #[test]
    fn every_kind_is_reached_by_a_parameter() {
        let samples: [syn::FnArg; 18] = [
            syn::parse_quote!(n: u32),
            syn::parse_quote!(p: Pixel),
            syn::parse_quote!(a: &[f32]),
            syn::parse_quote!(o: DisjointSlice<f32>),
            syn::parse_quote!(o: DisjointSlice<f32, ByBlock>),
            syn::parse_quote!(m: DisjointMatrix<f32, RowPerBlock<4>>),
            syn::parse_quote!(m: DisjointSlice2d<f32>),
            syn::parse_quote!(m: DisjointSlice2d<f32, 4>),
            syn::parse_quote!(m: DisjointSlice2dU32<f32>),
            syn::parse_quote!(g: DisjointSlice3d<f32>),
            syn::parse_quote!(h: &[DeviceAtomic<u32>]),
            syn::parse_quote!(b: Block),
            syn::parse_quote!(d: DynamicShared<f32>),
            syn::parse_quote!(g: Grid),
            syn::parse_quote!(c: Cluster),
            syn::parse_quote!(t: TensorMap2d<bf16, 64, 64, Swizzle128B>),
            syn::parse_quote!(t: TensorMapNd<f32, Box3d<2, 8, 16>>),
            syn::parse_quote!(t: TensorMapOut<f32, Box2d<16, 32>>),
        ];
        let reached: Vec<&'static str> = samples
            .iter()
            .map(|arg| Param::parse(arg).expect("a parameter").kind.spec().variant)
            .collect();
        for kind in ALL {
            assert!(
                reached.contains(&kind.variant),
                "no sample of {}",
                kind.variant
            );
            assert_eq!(
                ALL.iter().filter(|k| k.variant == kind.variant).count(),
                1,
                "{} listed twice",
                kind.variant
            );
            // Kinds with launcher arguments have a builder, and only they.
            assert_eq!(kind.launcher_takes.is_some(), kind.builder.is_some());
        }
    }

    /// The README's and `#[kernel]`'s tables are this description's.
    #[test]
    fn the_documented_tables_are_generated_from_the_kinds() {
        let table = parameter_table();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let readme = std::fs::read_to_string(root.join("../README.md")).expect("README.md");
        assert!(
            readme.contains(&table),
            "README.md's parameter table is not the kinds' (macros/src/kernel/kinds.rs); it should read:\n{table}"
        );
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
        let documented: String = table.lines().map(|l| format!("/// {l}\n")).collect();
        assert!(
            lib.contains(&documented),
            "#[kernel]'s parameter table in macros/src/lib.rs is not the kinds'; it should read:\n{documented}"
        );
    }
}
