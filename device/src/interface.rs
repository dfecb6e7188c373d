//! A kernel's interface as the host and the device compile it: what the
//! runtime compares before it launches an instance, so that host and device
//! cannot disagree on what a launch passes.
//!
//! `#[kernel]` describes each instance once, from its model: every
//! parameter's kind, its element or value type, and its PTX parameters
//! ("slots", each with its role and type); the instance's type; the declared
//! block shape; the declared length bounds. It emits the description as a
//! [`Description`] constant, from the same tokens on both targets, at the
//! kernel's scope. Each target evaluates it as it compiles the kernel: type
//! names, sizes and alignments, each `DeviceCopy` type's layout fingerprint
//! ([`DeviceCopy::__GPU_LAYOUT`](crate::DeviceCopy)), the block shape's
//! expressions. A `#[cfg]` that changes a field, a type alias or a constant
//! per target, or a `cfg_attr` that gives the two builds different
//! attributes, makes the two descriptions differ.
//!
//! The device's description is [`encode`]d into the PTX as a global,
//! `__gpu_abi$<entry>` (which `gpu-builder` keeps; a `$`, which PTX names
//! may hold and Rust names may not, so that no kernel's entry point takes
//! the name); the host's is the launcher's. Before an
//! instance's first launch on a device, the runtime compares the two text
//! by text, and refuses the launch on any difference, naming both sides.
//! The text is line-based, one fact per line, so that a difference names
//! the fact:
//!
//! ```text
//! entry add_kernel
//! param a: input of f32 (size 4, align 4, layout 0x…)
//!   slot pointer: *const f32 (size 8, align 8)
//!   slot len: usize (size 8, align 8)
//! ```

use crate::DeviceCopy;

/// How a kernel parameter crosses to the device: one per parameter kind of
/// `#[kernel]`'s model (`macros/src/kernel/params.rs`), which maps its kinds
/// here, and the runtime checks each kind's slots against the calling
/// convention of its argument builder (`gpu_runtime`'s `abi.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A primitive, by value.
    Scalar,
    /// A `DeviceCopy` struct, by value.
    Value,
    /// `&[T]`.
    Input,
    /// `DisjointSlice<T>`.
    Output,
    /// `DisjointSlice2d<T>`.
    Matrix,
    /// `DisjointSlice2dU32<T>`.
    MatrixU32,
    /// `DisjointMatrix<T, M>`.
    MappedMatrix,
    /// `DisjointSlice3d<T>`.
    Grid3d,
    /// `&[DeviceAtomic<T>]`.
    Atomic,
    /// `Block`, built on the device.
    Block,
    /// `DynamicShared<T>`, built on the device.
    DynamicShared,
    /// `Grid` (grid sync of a cooperative kernel), built on the device.
    Grid,
    /// `Cluster` (the cluster witness of a cluster kernel), built on the
    /// device.
    Cluster,
    /// `TensorMap2d<T, ROWS, COLS, S>`: a tensor map's address.
    TensorMap,
    /// `TensorMapOut<T, B, S>`: an output tensor map's address.
    TensorMapOut,
}

impl Kind {
    /// The kind's name in a description.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Scalar => "scalar",
            Kind::Value => "value",
            Kind::Input => "input",
            Kind::Output => "output",
            Kind::Matrix => "matrix",
            Kind::MatrixU32 => "matrix_u32",
            Kind::MappedMatrix => "mapped_matrix",
            Kind::Grid3d => "grid_3d",
            Kind::Atomic => "atomic",
            Kind::Block => "block",
            Kind::DynamicShared => "dynamic_shared",
            Kind::Grid => "grid",
            Kind::Cluster => "cluster",
            Kind::TensorMap => "tensor_map",
            Kind::TensorMapOut => "tensor_map_out",
        }
    }
}

/// What one PTX parameter of a kernel parameter holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// The parameter's value itself.
    Value,
    /// The address of the first element.
    Pointer,
    /// The element count.
    Len,
    /// The number of rows.
    Rows,
    /// The number of columns.
    Cols,
    /// The number of planes of a 3-D grid.
    Depth,
}

impl Role {
    /// The role's name in a description.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Value => "value",
            Role::Pointer => "pointer",
            Role::Len => "len",
            Role::Rows => "rows",
            Role::Cols => "cols",
            Role::Depth => "depth",
        }
    }
}

/// A type as the compiling target sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TypeFacts {
    /// `core::any::type_name`: aliases resolved, paths in full.
    pub name: &'static str,
    /// `size_of`.
    pub size: usize,
    /// `align_of`.
    pub align: usize,
    /// A `DeviceCopy` type's layout fingerprint; 0 for other types.
    pub layout: u64,
}

/// The facts of any type (a slot's pointer or extent type).
pub const fn type_facts<T>() -> TypeFacts {
    TypeFacts {
        name: core::any::type_name::<T>(),
        size: core::mem::size_of::<T>(),
        align: core::mem::align_of::<T>(),
        layout: 0,
    }
}

/// The facts of a `DeviceCopy` type, with its layout fingerprint.
pub const fn copy_facts<T: DeviceCopy>() -> TypeFacts {
    TypeFacts {
        layout: T::__GPU_LAYOUT,
        ..type_facts::<T>()
    }
}

/// One PTX parameter of a kernel parameter.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// What it holds.
    pub role: Role,
    /// Its type in the entry point.
    pub ty: TypeFacts,
}

/// An output's ownership map (`gpu_device::ownership`), as the compiling
/// target sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MapFacts {
    /// `core::any::type_name` of the map.
    pub name: &'static str,
    /// The threads a block must have for the map (0: any number).
    pub block_threads: u32,
}

/// The facts of the map `M`.
pub const fn map_facts<M: crate::ownership::Map>() -> MapFacts {
    MapFacts {
        name: core::any::type_name::<M>(),
        block_threads: M::BLOCK_THREADS,
    }
}

/// The facts of the map `M` of a kernel declared with blocks of `block`
/// threads: a compile error when the map needs blocks of another size.
pub const fn map_facts_in_block<M: crate::ownership::Map>(block: [u32; 3]) -> MapFacts {
    let threads = block[0] * block[1] * block[2];
    assert!(
        M::BLOCK_THREADS == 0 || M::BLOCK_THREADS == threads,
        "an output's ownership map needs blocks of another thread count than the kernel's `block` option"
    );
    map_facts::<M>()
}

/// One kernel parameter.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// Its name in the kernel's signature.
    pub name: &'static str,
    /// How it crosses to the device.
    pub kind: Kind,
    /// Its element type (slices, matrices, dynamic shared memory) or its
    /// type (values); `None` for `Block`.
    pub ty: Option<TypeFacts>,
    /// Its PTX parameters, in order (none for those built on the device).
    pub slots: &'static [Slot],
    /// An output's ownership map, where it names one.
    pub map: Option<MapFacts>,
}

/// What a generic kernel's instance was compiled for.
#[derive(Clone, Copy, Debug)]
pub enum Instance {
    /// A kernel that is not generic.
    None,
    /// A type parameter's type.
    Type(TypeFacts),
    /// A const parameter's value, as written.
    Value(&'static str),
}

/// A kernel instance's interface (see `__private::interface`).
#[derive(Clone, Copy, Debug)]
pub struct Description {
    /// The instance's general PTX entry point.
    pub entry: &'static str,
    /// What the instance was compiled for.
    pub instance: Instance,
    /// The declared block shape (`#[kernel(block = ...)]`), as the target
    /// evaluated it.
    pub block: Option<[u32; 3]>,
    /// The declared length bounds, `len(input >= covered)`.
    pub lengths: &'static [(&'static str, &'static str)],
    /// `#[kernel(launch_bounds = (max_threads, min_blocks))]`: the most
    /// threads a block may have, and the blocks per multiprocessor asked for
    /// (0: not asked).
    pub launch_bounds: Option<[u32; 2]>,
    /// `#[kernel(cooperative)]`: launched cooperatively (every block
    /// resident at once), as its grid sync needs.
    pub cooperative: bool,
    /// `#[kernel(cluster = (x, y, z))]`: the thread-block cluster shape of
    /// every launch (the runtime launches it with that cluster dimension
    /// and refuses grids it does not divide).
    pub cluster: Option<[u32; 3]>,
    /// `#[kernel(arch = "sm_80")]`: the GPU architecture the kernel needs
    /// (the runtime refuses to launch it on an older device).
    pub arch: Option<&'static str>,
    /// The parameters, in order.
    pub params: &'static [Param],
}

impl Description {
    /// How many parameters are look-back status words,
    /// `&[DeviceAtomic<TileStatus>]`: the runtime refuses a kernel with two
    /// (`crate::lookback` says why).
    pub const fn tile_status_params(&self) -> usize {
        let status = core::any::type_name::<crate::lookback::TileStatus>().as_bytes();
        let mut count = 0;
        let mut i = 0;
        while i < self.params.len() {
            if let (Kind::Atomic, Some(ty)) = (self.params[i].kind, self.params[i].ty) {
                if bytes_equal(ty.name.as_bytes(), status) {
                    count += 1;
                }
            }
            i += 1;
        }
        count
    }

    /// The number of PTX parameters.
    pub const fn slot_count(&self) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < self.params.len() {
            count += self.params[i].slots.len();
            i += 1;
        }
        count
    }

    /// The byte size of each PTX parameter (`N` of them: [`slot_count`](Self::slot_count)).
    pub const fn slot_sizes<const N: usize>(&self) -> [usize; N] {
        let mut sizes = [0; N];
        let mut n = 0;
        let mut i = 0;
        while i < self.params.len() {
            let mut s = 0;
            while s < self.params[i].slots.len() {
                if n < N {
                    sizes[n] = self.params[i].slots[s].ty.size;
                }
                n += 1;
                s += 1;
            }
            i += 1;
        }
        assert!(
            n == N,
            "the slot count is not the description's (a #[kernel] bug)"
        );
        sizes
    }
}

/// Whether two byte strings are equal (in a `const fn`).
const fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Writes `description`'s text into `out` as far as it holds, and returns
/// the text's whole length: `encode(d, &mut [])` measures it.
pub const fn encode(description: &Description, out: &mut [u8]) -> usize {
    let mut w = Writer { out, len: 0 };
    w.str("entry ");
    w.str(description.entry);
    w.str("\n");
    match description.instance {
        Instance::None => {}
        Instance::Type(ty) => {
            w.str("instance ");
            w.facts(ty);
            w.str("\n");
        }
        Instance::Value(value) => {
            w.str("instance ");
            w.str(value);
            w.str("\n");
        }
    }
    if let Some([x, y, z]) = description.block {
        w.str("block ");
        w.number(x as u64);
        w.str(" ");
        w.number(y as u64);
        w.str(" ");
        w.number(z as u64);
        w.str("\n");
    }
    if let Some([max_threads, min_blocks]) = description.launch_bounds {
        w.str("launch_bounds ");
        w.number(max_threads as u64);
        w.str(" ");
        w.number(min_blocks as u64);
        w.str("\n");
    }
    if description.cooperative {
        w.str("cooperative\n");
    }
    if let Some([x, y, z]) = description.cluster {
        w.str("cluster ");
        w.number(x as u64);
        w.str(" ");
        w.number(y as u64);
        w.str(" ");
        w.number(z as u64);
        w.str("\n");
    }
    if let Some(arch) = description.arch {
        w.str("arch ");
        w.str(arch);
        w.str("\n");
    }
    let mut i = 0;
    while i < description.lengths.len() {
        let (input, covered) = description.lengths[i];
        w.str("len ");
        w.str(input);
        w.str(" >= ");
        w.str(covered);
        w.str("\n");
        i += 1;
    }
    let mut i = 0;
    while i < description.params.len() {
        let param = &description.params[i];
        w.str("param ");
        w.str(param.name);
        w.str(": ");
        w.str(param.kind.name());
        if let Some(ty) = param.ty {
            w.str(" of ");
            w.facts(ty);
        }
        w.str("\n");
        if let Some(map) = param.map {
            w.str("  map ");
            w.str(map.name);
            if map.block_threads != 0 {
                w.str(" (blocks of ");
                w.number(map.block_threads as u64);
                w.str(" threads)");
            }
            w.str("\n");
        }
        let mut s = 0;
        while s < param.slots.len() {
            w.str("  slot ");
            w.str(param.slots[s].role.name());
            w.str(": ");
            w.facts(param.slots[s].ty);
            w.str("\n");
            s += 1;
        }
        i += 1;
    }
    w.len
}

/// Text written into a byte slice as far as it holds, counted in full.
struct Writer<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Writer<'_> {
    const fn str(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if self.len < self.out.len() {
                self.out[self.len] = bytes[i];
            }
            self.len += 1;
            i += 1;
        }
    }

    const fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.byte(digits[count]);
        }
    }

    const fn hex(&mut self, n: u64) {
        let mut shift = 64;
        while shift > 0 {
            shift -= 4;
            self.byte(b"0123456789abcdef"[((n >> shift) & 0xf) as usize]);
        }
    }

    const fn byte(&mut self, b: u8) {
        if self.len < self.out.len() {
            self.out[self.len] = b;
        }
        self.len += 1;
    }

    const fn facts(&mut self, ty: TypeFacts) {
        self.str(ty.name);
        self.str(" (size ");
        self.number(ty.size as u64);
        self.str(", align ");
        self.number(ty.align as u64);
        if ty.layout != 0 {
            self.str(", layout 0x");
            self.hex(ty.layout);
        }
        self.str(")");
    }
}

/// The layout fingerprint of a type whose name, size and alignment
/// determine its layout (a primitive): the default of
/// `DeviceCopy::__GPU_LAYOUT`.
pub const fn primitive_layout<T>() -> u64 {
    let h = fnv(FNV_OFFSET, core::any::type_name::<T>().as_bytes());
    let h = fnv_u64(h, core::mem::size_of::<T>() as u64);
    nonzero(fnv_u64(h, core::mem::align_of::<T>() as u64))
}

/// The layout fingerprint of a struct with fields at `fields` (each an
/// offset and the field type's fingerprint), for `#[derive(DeviceCopy)]`:
/// a field whose type, place or own layout differs changes it.
pub const fn struct_layout<T>(fields: &[(usize, u64)]) -> u64 {
    let mut h = primitive_layout::<T>();
    let mut i = 0;
    while i < fields.len() {
        h = fnv_u64(h, fields[i].0 as u64);
        h = fnv_u64(h, fields[i].1);
        i += 1;
    }
    nonzero(h)
}

/// The layout fingerprint of an array of `len` elements of fingerprint
/// `element`.
pub const fn array_layout(element: u64, len: usize) -> u64 {
    nonzero(fnv_u64(fnv_u64(FNV_OFFSET, element), len as u64))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`.
const fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

const fn fnv_u64(h: u64, n: u64) -> u64 {
    fnv(h, &n.to_le_bytes())
}

/// 0 means "no fingerprint" in a description.
const fn nonzero(h: u64) -> u64 {
    if h == 0 {
        1
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Pair {
        a: u32,
        b: f32,
    }

    const DESCRIPTION: Description = Description {
        entry: "k_f32",
        instance: Instance::Type(copy_facts::<f32>()),
        block: Some([32, 8, 1]),
        lengths: &[("a", "out")],
        launch_bounds: Some([256, 2]),
        cooperative: false,
        cluster: None,
        arch: Some("sm_80"),
        params: &[
            Param {
                name: "a",
                kind: Kind::Input,
                ty: Some(copy_facts::<f32>()),
                slots: &[
                    Slot {
                        role: Role::Pointer,
                        ty: type_facts::<*const f32>(),
                    },
                    Slot {
                        role: Role::Len,
                        ty: type_facts::<usize>(),
                    },
                ],
                map: None,
            },
            Param {
                name: "block",
                kind: Kind::Block,
                ty: None,
                slots: &[],
                map: None,
            },
            Param {
                name: "c",
                kind: Kind::MappedMatrix,
                ty: Some(copy_facts::<f32>()),
                slots: &[],
                map: Some(map_facts::<crate::ownership::RowPerBlock<4>>()),
            },
        ],
    };

    fn text(d: &Description) -> String {
        let mut bytes = vec![0; encode(d, &mut [])];
        assert_eq!(encode(d, &mut bytes), bytes.len());
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_description_is_one_fact_per_line() {
        let f32_layout = format!("{:016x}", primitive_layout::<f32>());
        assert_eq!(
            text(&DESCRIPTION),
            format!(
                "entry k_f32\n\
                 instance f32 (size 4, align 4, layout 0x{f32_layout})\n\
                 block 32 8 1\n\
                 launch_bounds 256 2\n\
                 arch sm_80\n\
                 len a >= out\n\
                 param a: input of f32 (size 4, align 4, layout 0x{f32_layout})\n  \
                 slot pointer: *const f32 (size 8, align 8)\n  \
                 slot len: usize (size 8, align 8)\n\
                 param block: block\n\
                 param c: mapped_matrix of f32 (size 4, align 4, layout 0x{f32_layout})\n  \
                 map gpu_device::ownership::matrix::RowPerBlock<4>\n"
            )
        );
        assert_eq!(DESCRIPTION.slot_count(), 2);
        assert_eq!(DESCRIPTION.slot_sizes::<2>(), [8, 8]);
        // A buffer too short gets a prefix, and the whole length.
        let mut short = [0u8; 5];
        assert_eq!(encode(&DESCRIPTION, &mut short), text(&DESCRIPTION).len());
        assert_eq!(&short, b"entry");
    }

    #[test]
    fn layouts_differ_where_the_types_do() {
        // Same size and alignment, other names: other fingerprints.
        assert_ne!(primitive_layout::<u32>(), primitive_layout::<f32>());
        assert_ne!(primitive_layout::<u8>(), primitive_layout::<bool>());
        let fields = |a: u64, b: u64| [(0, a), (4, b)];
        let pair = struct_layout::<Pair>(&fields(
            primitive_layout::<u32>(),
            primitive_layout::<f32>(),
        ));
        // A field of another type in the same place, or fields swapped.
        assert_ne!(
            pair,
            struct_layout::<Pair>(&fields(
                primitive_layout::<u32>(),
                primitive_layout::<u32>()
            ))
        );
        assert_ne!(
            pair,
            struct_layout::<Pair>(&fields(
                primitive_layout::<f32>(),
                primitive_layout::<u32>()
            ))
        );
        assert_ne!(array_layout(pair, 2), array_layout(pair, 3));
        assert_ne!(pair, 0);
    }
}
