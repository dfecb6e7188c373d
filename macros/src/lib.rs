//! Procedural macros of the `gpu-*` crates; use them through `gpu_device`.
//!
//! Each macro parses its input into a small model (`kernel::model`), reports
//! every problem as a `syn::Error` spanned on the offending tokens, and only
//! then emits code.

#![deny(missing_docs)]

// The crate's README (its page on crates.io), whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use proc_macro::TokenStream;

mod assert;
mod constant;
mod device_copy;
mod embed;
mod errors;
mod kernel;
mod mbarrier;
mod path_option;
mod print;
mod shared;
mod tma_tile;
mod vectorize;

/// Turns an ordinary function into a GPU kernel.
///
/// Compiled for `nvptx64-nvidia-cuda`, the function becomes a PTX entry point of
/// the same name. Compiled for the host, it becomes a module of the same name
/// whose `Launcher` is the typed launcher that `gpu_runtime::launch!` calls
/// (`launch!(k[grid, block](args))` is `k::Launcher::new(config).launch(args)`).
/// The parameters (the table is generated from the macro's one description
/// of each kind, `kernel/kinds.rs`):
///
/// | in the kernel | at the launch |
/// |---|---|
/// | `u8`…`u64`, `i8`…`i64`, `usize`, `isize`, `f32`, `f64`, `bool` | the same scalar |
/// | `&[T]` (read by all threads) | `&DeviceBuffer<T>`, `DeviceView<T>` |
/// | `DisjointSlice<T>` (each thread writes its own element), `DisjointSlice<T, M>` (the elements the map `M` gives it: per block, per warp, grid-stride, blocked, striped) | `&mut DeviceBuffer<T>`, `DeviceViewMut<T>` |
/// | `DisjointSlice2d<T>` (row-major matrix, element `(y, x)` per thread) | `buffer.view_2d_mut(rows, cols)?` |
/// | `DisjointSlice2dU32<T>` (the same, `u32` extents and offsets; at most `u32::MAX` elements, or the launch fails naming the parameter) | `buffer.view_2d_mut(rows, cols)?` |
/// | `DisjointMatrix<T, M>` (row-major matrix divided by the map `M`: one row per block, register tiles; `u32` extents, at most `u32::MAX` elements) | `buffer.view_2d_mut(rows, cols)?` |
/// | `DisjointSlice3d<T>` (element `(z, y, x)` per thread) | `buffer.view_3d_mut(depth, rows, cols)?` |
/// | `Block` (shared-memory phase token) | nothing: built on the device |
/// | `DynamicShared<T>` (dynamic shared memory) | nothing: built on the device |
/// | `Grid` (grid sync, `#[kernel(cooperative)]` only) | nothing: built on the device |
/// | `Cluster` (the block's cluster: ranks, cluster sync, distributed shared memory; `#[kernel(cluster = ...)]` only) | nothing: built on the device |
/// | `&[DeviceAtomic<T>]` (atomic updates) | `&mut DeviceBuffer<T>`, `DeviceViewMut<T>` |
/// | `TensorMap2d<T, ROWS, COLS, S>` or `TensorMapNd<T, B, S>` (a tensor map for bulk tensor copies, sm_90) | `&TensorMap<'_, T>` of that box and swizzle |
/// | `TensorMapOut<T, B, S>` (a tensor map written by bulk tensor stores, a box a block, sm_90) | `&mut TensorMapOut<'_, T>` of that box and swizzle |
/// | a `#[repr(C)]` struct with `#[derive(Clone, Copy, DeviceCopy)]` | the struct |
///
/// A generic kernel lists the types to instantiate: `#[kernel(f32, f64)]`
/// (a const-generic one its values, `#[kernel(16, 32)]`); the entry points
/// are named `<kernel>_<type>` and the launcher picks the one matching its
/// arguments.
///
/// `#[kernel(block = (x, y, z))]` (or `(x, y)`, or `x`; `usize` constant
/// expressions, checked when compiled) declares the only block shape the
/// kernel runs in: the launcher refuses every other, and the entry points
/// tell the compiler the shape, so `blockDim` is a constant in the body (see
/// `gpu_device::entry`). It combines with a generic kernel's instances
/// (in any order), and may name its const parameter: `#[kernel(16, 32, block = (TILE, TILE))]`.
///
/// Each `&[T]` input's loads go through the read-only cache (`ld.global.nc`):
/// nothing writes an input during a launch (see
/// `gpu_builder::kernel_inputs`).
///
/// # Paths
///
/// The generated code names `::gpu_device`, `::gpu_runtime` and the
/// crate's `crate::KERNEL_MODULE` (defined by `embed_kernels!`). Where they
/// are elsewhere (a dependency renamed in `Cargo.toml`, a crate re-exporting
/// them, the module in another place), the attribute says where, each path
/// in a string literal:
///
/// - `unsafe(device_crate = "path")`: the `gpu_device` crate;
/// - `unsafe(runtime_crate = "path")`: the `gpu_runtime` crate;
/// - `module = "path"`: the `gpu_runtime::EmbeddedModule` static the
///   launcher loads the kernel from.
///
/// Paths are resolved where the kernel is written (`self::` and `super::`
/// paths too), and the options combine with a generic kernel's list and
/// `block` in any order: `#[kernel(f32, f64, unsafe(runtime_crate = "rt"))]`.
///
/// # One scope, and host and device agreeing
///
/// Everything of the attribute and the signature (the instance list,
/// `block`'s expressions, the parameters' types) is resolved and evaluated
/// where the kernel is written, for the host and for the device alike: the
/// launcher, the body and the simulator's entry points are `impl`s at the
/// kernel's scope, and every name the macro generates is an associated item,
/// an entry point alone in an anonymous `const`, or a `Span::mixed_site()`
/// local, so no name of the user's shadows one of them or is shadowed.
///
/// Each instance's interface (its parameters' kinds, types, sizes,
/// alignments and layouts, its PTX parameters and their roles, its instance
/// type, block shape and length bounds) is described once and compiled by
/// both targets (`gpu_device::__private::interface`); the runtime compares
/// the two before the first launch and refuses a kernel that `cfg` made
/// differ between them, naming both sides. A parameter under `#[cfg]` is a
/// compile error. A generic kernel's `Instance` trait is sealed.
///
/// The crate paths are written `unsafe(...)`, as Rust spells an assertion
/// the compiler cannot check (`#[unsafe(no_mangle)]`): the generated code
/// calls `unsafe` functions of the crates through them (`Block`'s and
/// `EntryShape`'s constructors, the slices' `from_raw_parts`), so each must
/// lead to the genuine crate, the dependency renamed or a re-export of it.
/// No check of the path could tell: a module of safe code can re-export all
/// of `gpu_device` but one item. `unsafe(...)` is your promise that the path
/// leads to the crate; without it, a crate path is a compile error that
/// says so. `module` takes no `unsafe(...)`: the static it names is an
/// `EmbeddedModule`, which only `unsafe` code makes.
///
/// (The examples of this crate are not compiled here: a proc-macro crate
/// cannot depend on the crates it serves without building them twice. The
/// same code is compiled and run by the workspace's
/// `tests/forced_simulator_crate_paths.rs`.)
///
/// ```ignore
/// // Cargo.toml renames the crates:
/// //   dev = { package = "gpu-device", ... }, rt = { package = "gpu-runtime", ... }
/// extern crate gpu_device as dev;
/// extern crate gpu_runtime as rt;
/// use dev::prelude::*;
///
/// mod ptx {
///     // What `dev::embed_kernels!(unsafe(runtime_crate = "rt"))` defines at a
///     // kernel crate's root; here elsewhere, and with no PTX.
///     // SAFETY: never loaded: this example is only compiled.
///     pub static MODULE: rt::EmbeddedModule = unsafe { rt::EmbeddedModule::new("doc", "") };
/// }
///
/// #[kernel(unsafe(device_crate = "dev"), unsafe(runtime_crate = "rt"), module = "crate::ptx::MODULE")]
/// pub fn scale(factor: f32, x: &[f32], mut out: DisjointSlice<f32>) {
///     let i = thread_index();
///     if let Some(&v) = x.get(i.get()) {
///         out.set(i, factor * v);
///     }
/// }
///
/// fn run(x: &rt::DeviceBuffer<f32>, out: &mut rt::DeviceBuffer<f32>) -> rt::Result<()> {
///     rt::launch!(scale[x.len().div_ceil(256), 256](2.0f32, x, out))
/// }
/// # fn main() {}
/// ```
///
/// # Errors
///
/// Every problem of the attribute and the function (each bad parameter, a
/// return type, a bad path) is reported in one compile, each at its own
/// tokens. The function is still emitted for the host, and a launcher
/// module of its name whose arguments are typed where the parameters are
/// well formed, so that the rest of the crate and an IDE see the kernel and
/// add no error of their own.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(args.into(), item.into()).into()
}

/// Turns a scalar function into an element-wise kernel and its launchers, as
/// Numba's `@vectorize(['float32(float32, float32)'], target='cuda')`; with
/// `#[vectorize(reduce)]` on a `fn(T, T) -> T`, into a reduction, as Numba's
/// `@cuda.reduce`.
///
/// The function stays as written, callable on the host and the device.
/// Beside it, a module of its name holds the kernel (a `#[kernel]` of the
/// crate, in its PTX like any other) and host launchers that take device
/// buffers or views and a stream:
///
/// ```ignore
/// use gpu_device::vectorize;
///
/// #[vectorize]
/// pub fn scaled_sum(a: f32, b: f32) -> f32 {
///     2.0 * a + b
/// }
///
/// #[vectorize(reduce)]
/// pub fn larger(a: f32, b: f32) -> f32 {
///     if a > b { a } else { b }
/// }
///
/// // On the host:
/// scaled_sum::launch(&a, &b, &mut out, &stream)?; // out[i] = scaled_sum(a[i], b[i])
/// let c = scaled_sum::apply(&a, &b, &stream)?;     // into a new buffer
/// let max = larger::reduce(&a, &stream)?;          // the value, waited for
/// larger::reduce_into(&a, &mut one, &stream)?;     // queued into a 1-element buffer
/// ```
///
/// The element-wise kernel runs one thread per element (blocks of 256),
/// each writing its own element through its witness: no `unsafe` in the
/// generated code. The arguments and the output must have one length; a
/// length that differs is an error naming it. The reduction's function must
/// be associative and commutative, of a type a block can reduce (32- and
/// 64-bit integers and floats); an empty input is an error.
///
/// The arguments are `DeviceCopy` values (not references, pointers or
/// slices), there is at least one, and the function returns a value: each a
/// compile error at the offending tokens otherwise. (Compiled and run by the
/// workspace's `tests/suite/kernels/vectorize.rs` and the `numba_*` examples.)
#[proc_macro_attribute]
pub fn vectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    vectorize::expand(args.into(), item.into()).into()
}

/// Implements `gpu_device::DeviceCopy` for a `#[repr(C)]` struct whose fields
/// are all `DeviceCopy`.
///
/// `#[device_copy(unsafe(crate = "path"))]` on the struct names the
/// `gpu_device` crate where it is not `::gpu_device`. It is `unsafe(...)`,
/// as for `#[kernel]`'s crate paths: the derive writes an `unsafe impl` of
/// the `DeviceCopy` it finds there, so the path must lead to the genuine
/// crate (renamed, or re-exported), which is your promise:
///
/// ```ignore
/// extern crate gpu_device as dev;
///
/// #[derive(Clone, Copy, dev::DeviceCopy)]
/// #[device_copy(unsafe(crate = "dev"))]
/// #[repr(C)]
/// pub struct Pixel {
///     pub rgb: [u8; 3],
///     pub alpha: u8,
/// }
/// # fn main() {}
/// ```
#[proc_macro_derive(DeviceCopy, attributes(device_copy))]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    device_copy::expand(item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Embeds the crate's kernels, built to PTX by `gpu_builder` in the crate's
/// `build.rs`, as `pub static KERNEL_MODULE` at the crate root. Every crate with
/// `#[kernel]` functions calls it once, in `lib.rs`: a binary, example,
/// test or benchmark that calls it is an error (build.rs builds the PTX from
/// the package's library, so there it would hold the library's kernels).
///
/// `embed_kernels!(unsafe(runtime_crate = "path"))` names the `gpu_runtime`
/// crate where it is not `::gpu_runtime` (a kernel crate that renames it,
/// e.g. `embed_kernels!(unsafe(runtime_crate = "rt"))`); `unsafe(...)`, as
/// for `#[kernel]`: the static is made with `EmbeddedModule::of_crate`, an
/// `unsafe` function called through the path, which must lead to the crate.
/// The module records the crate it expands in (`gpu_runtime::crate_identity!()`),
/// and serves that crate's launchers alone: a `#[kernel]` of another crate
/// that names it does not compile. It cannot be shown compiling here: it
/// includes the PTX that a kernel crate's `build.rs` writes.
#[proc_macro]
pub fn embed_kernels(input: TokenStream) -> TokenStream {
    embed::expand(input.into()).into()
}

/// A static shared-memory array for each block: `shared_array!(f32; 256)`
/// evaluates to a `gpu_device::shared::SharedArray<f32>` of 256 elements.
///
/// `shared_array!(f32; 16, 16)` is a matrix, `shared_array!(f32; 32, 32,
/// padding = 1)` one whose rows are `32 + 1` slots apart, and a last option
/// `unsafe(device_crate = "path")` names the `gpu_device` crate where it is
/// not `::gpu_device` (the crate itself, a promise written `unsafe(...)` as
/// for `#[kernel]`):
///
/// ```ignore
/// extern crate gpu_device as dev;
/// use dev::prelude::*;
///
/// fn in_a_kernel(block: Block) {
///     let tile = shared_array!(f32; 16, 16, padding = 1, unsafe(device_crate = "dev"));
///     let mut w = block;
///     tile.fill(&mut w, |row, col| (row * 16 + col) as f32);
///     let _r = w.sync();
/// }
/// # fn main() {}
/// ```
#[proc_macro]
pub fn shared_array(input: TokenStream) -> TokenStream {
    shared::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// `N` hardware barriers (`mbarrier`, sm_90) in the block's static shared
/// memory: `mbarriers!(2)` is a `gpu_device::mbarrier::MBarriers<2>`, which
/// every thread of the block initialises together
/// (`MBarriers::init`) before any use. See `gpu_device::mbarrier`.
#[proc_macro]
pub fn mbarriers(input: TokenStream) -> TokenStream {
    mbarrier::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A tile of the block's static shared memory that bulk tensor copies
/// (TMA, sm_90) fill, with its own `mbarrier`: `tma_tile!(bf16, 64, 64,
/// Swizzle128B)` is a `gpu_device::tma::TmaTileSlot<bf16, 64, 64,
/// Swizzle128B>` (the swizzle defaults to none), whose scope every thread
/// of the block enters together (`TmaTileSlot::with`). See `gpu_device::tma`.
#[proc_macro]
pub fn tma_tile(input: TokenStream) -> TokenStream {
    tma_tile::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Prints a line from a kernel, with a newline: `println!("x = {} at {}", x,
/// i.get())` (CUDA's `printf`, Numba's `print`). The format string is
/// Rust's; what each placeholder prints is in `gpu_device::print`'s
/// documentation. Use it as `gpu_device::println!` or with `use
/// gpu_device::println;` (a glob import would make it ambiguous with the
/// standard library's on the host).
#[proc_macro]
pub fn println(input: TokenStream) -> TokenStream {
    print::expand(input.into(), true)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Prints from a kernel, without a newline: see [`println!`].
#[proc_macro]
pub fn print(input: TokenStream) -> TokenStream {
    print::expand(input.into(), false)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Asserts a condition in a kernel, with an optional message:
/// `gpu_assert!(i < n)`, `gpu_assert!(total > 0.0, "total is {}", total)`.
/// When it is false, the launch ends (as CUDA's `assert` ends it) and the
/// host gets `Error::KernelAssertion`, naming the kernel, the block, the
/// thread, the file and line, and the message; see `gpu_device::assert`.
/// The message is formatted as `println!`'s is.
#[proc_macro]
pub fn gpu_assert(input: TokenStream) -> TokenStream {
    assert::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Values in the GPU's constant memory, read by every thread of a launch
/// and set by the host between launches: `constant! { pub static TAPS:
/// [f32; 9]; }` declares `TAPS`, a `gpu_device::constant::Constant<[f32;
/// 9]>`; kernels read `TAPS.get()`, the host sets it with
/// `gpu_runtime::SetConstant` (`TAPS.set(taps, &stream)?`). In a kernel
/// crate that calls `embed_kernels!()`; see `gpu_device::constant`.
#[proc_macro]
pub fn constant(input: TokenStream) -> TokenStream {
    constant::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
